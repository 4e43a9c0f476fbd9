/**
 * Whether a provider serves a model id, asked of the provider itself (`GET /models/{id}`, then its
 * `GET /models` list for servers without the former, such as vLLM) and remembered for a bounded
 * time in a bounded map: `GET /v1/models/{id}` answers 404 for an id an open catalog does not have,
 * as OpenAI does, without asking the provider on every call.
 */

/** how long an answer is kept: a model that exists rarely disappears; one that does not may be added */
export const KNOWN_TTL_MS = 10 * 60_000;
export const UNKNOWN_TTL_MS = 60_000;
/** ids remembered per provider (the oldest is forgotten first) */
export const LOOKUP_ENTRIES = 1_000;
/** one lookup's time limit (it is shared by every caller waiting for it, so no caller's signal ends it) */
export const LOOKUP_TIMEOUT_MS = 10_000;

export interface ModelAsker {
  /** true when the provider's `GET /models/{id}` answers, false when it answers 404 */
  retrieve(id: string, signal: AbortSignal): Promise<boolean>;
  /** the ids of the provider's `GET /models` (null when it has no such route) */
  list(signal: AbortSignal): Promise<readonly string[] | null>;
}

interface Entry<T> {
  value: Promise<T>;
  /** epoch ms; Infinity while the lookup runs */
  until: number;
}

/** A map of pending and settled lookups, each kept `ttl(value)` ms, at most `max` entries; a failure is not kept. */
class TtlCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  constructor(
    private readonly ttl: (value: T) => number,
    private readonly max: number,
  ) {}

  get(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && hit.until > Date.now()) return hit.value;
    this.entries.delete(key);
    while (this.entries.size >= this.max) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    const entry: Entry<T> = { value: load(), until: Number.POSITIVE_INFINITY };
    this.entries.set(key, entry);
    entry.value.then(
      (v) => {
        entry.until = Date.now() + this.ttl(v);
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return entry.value;
  }

  get size(): number {
    return this.entries.size;
  }
}

export class ModelLookup {
  private readonly ids = new TtlCache<boolean>((known) => (known ? KNOWN_TTL_MS : UNKNOWN_TTL_MS), LOOKUP_ENTRIES);
  private readonly listing = new TtlCache<readonly string[] | null>(() => UNKNOWN_TTL_MS, 1);

  constructor(private readonly asker: ModelAsker) {}

  /** Whether the provider serves `id`; rejects (the provider's error) when it could not be asked. */
  known(id: string): Promise<boolean> {
    return this.ids.get(id, async () => {
      if (await this.asker.retrieve(id, AbortSignal.timeout(LOOKUP_TIMEOUT_MS))) return true;
      const list = await this.listing.get("", () => this.asker.list(AbortSignal.timeout(LOOKUP_TIMEOUT_MS)));
      return list?.includes(id) ?? false;
    });
  }

  /** ids remembered (tests and metrics) */
  get size(): number {
    return this.ids.size;
  }
}
