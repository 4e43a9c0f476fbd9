import type { RateDecision } from "./interface";
import { TokenBucket } from "./token-bucket";

/** Seconds of admissions a share remembers: one minute (the limits are per minute), plus the second under way. */
const WINDOW = 61;

interface Share {
  /** the whole limit, per minute */
  limit: number;
  bucket: TokenBucket;
  /** calls admitted per second (ring of WINDOW seconds), the last at `second` */
  admitted: Uint32Array;
  second: number;
}

/**
 * What a node admits on its own while Redis is down, never more than its share of the limit:
 * one token bucket per key and function holding limit/N (N: the nodes alive when Redis was last
 * seen), refilled at limit/N per minute. The buckets start empty when the node lost Redis: Redis's
 * bucket may have been empty at that instant (the calls it admitted are not known here), so only
 * what refills after it is admitted, and the nodes together never admit more than one bucket of
 * the limit would. A bucket made later in the outage holds what it would have refilled since.
 *
 * When Redis is back, each share's calls of the last minute are taken from Redis's bucket
 * (`settle`, never below empty) before the node counts a call there again. Older calls need not
 * be: the shares admit at most `limit` a minute together, so a window reaching further back than
 * a minute has room for them in its refill (docs/many-nodes.md has the argument).
 */
export class OutageShares {
  private since: number | null = null;
  private shares = new Map<string, Share>();

  constructor(private now: () => number) {}

  get active(): boolean {
    return this.since !== null;
  }

  /** One call against this node's share (limit/N, may be fractional) of the bucket `id`; `lostAt`: when Redis was lost. */
  take(id: string, limit: number, share: number, lostAt: number | null = null): RateDecision {
    const now = this.now();
    // the outage begins when the node lost Redis, or now: its first call that could not reach it
    this.since ??= Math.min(now, lostAt ?? now);
    let s = this.shares.get(id);
    if (!s || s.bucket.capacity !== share) {
      const perMs = share / 60_000;
      const bucket = new TokenBucket(share, perMs, now);
      bucket.tokens = Math.min(share, (now - this.since) * perMs);
      s = { limit, bucket, admitted: s?.admitted ?? new Uint32Array(WINDOW), second: s?.second ?? 0 };
      this.shares.set(id, s);
    }
    const allowed = s.bucket.take(now);
    if (allowed) {
      const second = this.advance(s, now);
      s.admitted[second % WINDOW] = (s.admitted[second % WINDOW] ?? 0) + 1;
    }
    const decision: RateDecision = {
      allowed,
      limit: Math.floor(share),
      remaining: Math.floor(s.bucket.tokens),
      resetSeconds: Math.ceil(s.bucket.msUntilFull(now) / 1000),
      // a share below one call never admits one: the outage decides, the minute is a guess
      retryAfterSeconds: allowed ? 0 : share < 1 ? 60 : Math.max(1, Math.ceil(s.bucket.msUntilToken(now) / 1000)),
    };
    // Only when this node alone has admitted the whole limit in the last minute does the client
    // certainly exceed it (429); short of that, the refusal is the outage's (the share is a
    // fraction of the limit, and starts empty), and the client is told so (503), not blamed.
    if (!allowed && this.recent(s, now) < limit) decision.unavailable = true;
    return decision;
  }

  /** Moves the ring to the current second (clearing the seconds it passes); returns it. */
  private advance(s: Share, now: number): number {
    const second = Math.floor(now / 1000);
    for (let t = Math.max(s.second + 1, second - WINDOW + 1); t <= second; t++) s.admitted[t % WINDOW] = 0;
    s.second = Math.max(s.second, second);
    return second;
  }

  /** Calls admitted by the share in the last minute (whole seconds, so rather more than less). */
  private recent(s: Share, now: number): number {
    this.advance(s, now);
    return s.admitted.reduce((a, b) => a + b, 0);
  }

  /**
   * Redis is back: hands each share's calls of the last minute to `pay`, then forgets the outage.
   * A share whose payment fails stays, so the next settle pays it; the outage ends only when all
   * are paid.
   */
  async settle(pay: (id: string, calls: number, limit: number) => Promise<void>): Promise<void> {
    for (const [id, s] of [...this.shares]) {
      const calls = this.recent(s, this.now());
      if (calls > 0) await pay(id, calls, s.limit);
      this.shares.delete(id);
    }
    this.since = null;
  }

  /** Drops shares that have refilled completely and admitted nothing for a minute: a new one is made the same. */
  sweep(): void {
    const now = this.now();
    for (const [id, s] of this.shares) if (s.bucket.msUntilFull(now) <= 0 && this.recent(s, now) === 0) this.shares.delete(id);
  }

  size(): number {
    return this.shares.size;
  }
}
