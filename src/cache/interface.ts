import type { MaybePromise } from "../maybe";

export interface CachedAnswer {
  /** the result, serialized once: entries are immutable and cheap to size */
  json: string;
  provider: string;
  model: string;
  /** what the offline engine said about the answer (options ignored, fields not found), for meta */
  notes?: Record<string, unknown>;
}

export interface CacheStats {
  entries: number;
  bytes: number;
  hits: number;
  misses: number;
  evictions: number;
}

/**
 * Exact-match answer cache, scoped by tenant (`scope`: the account id; one account never reads
 * another's answers), with a TTL and a memory bound. `produceOnce` shares one upstream call
 * between concurrent identical requests (`shared` is true for the callers that waited).
 * Implementations: memory (one process), Redis (all nodes).
 */
export interface ResponseCache {
  get(scope: string, key: string): MaybePromise<CachedAnswer | null>;
  produceOnce<T extends CachedAnswer>(
    scope: string,
    key: string,
    produce: () => Promise<T>,
    /** turns an answer another node produced (a bare CachedAnswer) into a T */
    adopt: (hit: CachedAnswer) => T,
  ): Promise<{ answer: T; shared: boolean }>;
  snapshot(): CacheStats;
  clear(): MaybePromise<void>;
}
