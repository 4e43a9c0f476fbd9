import type { Logger } from "../log";
import { Backlog } from "./backlog";
import type { RequestLogEntry, RequestLogQuery, RequestLogStore, RequestRecord } from "./interface";

export interface RequestLogOptions {
  /** `[log] retention_days`: entries older than this are pruned */
  retentionDays: number;
  /** how often what was recorded is written (bounds how soon an entry is readable) */
  flushEveryMs?: number;
  /** how often entries past the retention are pruned */
  pruneEveryMs?: number;
  /** rows per prune step, and per write unless the store says how many it takes (`writeBatch`) */
  batch?: number;
  /** rows held while the database cannot be written; past it the oldest are dropped (and counted) */
  maxPending?: number;
  logger?: Logger;
  now?: () => number;
}

const DAY_MS = 86_400_000;

/**
 * The request log as the app sees it: `record` is an in-memory append on the request's path; a
 * timer writes what was recorded in batches (every `flushEveryMs`), and prunes entries older than
 * the retention in small batches, yielding between them, so neither holds the event loop long.
 * `stop` writes what is left. Reads go to the store (this node's pending rows written first).
 */
export class RequestLog {
  private readonly pending: Backlog<RequestRecord>;
  private flushing: Promise<void> | null = null;
  private flushTimer: ReturnType<typeof setInterval> | null = null;
  private pruneTimer: ReturnType<typeof setInterval> | null = null;
  private pruning = false;
  private stopped = false;
  /** rows dropped because the store could not take them for too long */
  dropped = 0;
  private readonly flushEveryMs: number;
  private readonly pruneEveryMs: number;
  private readonly batch: number;
  private readonly writeBatch: number;
  private readonly now: () => number;

  constructor(
    readonly store: RequestLogStore,
    private opts: RequestLogOptions,
  ) {
    this.flushEveryMs = opts.flushEveryMs ?? 500;
    this.pruneEveryMs = opts.pruneEveryMs ?? 10 * 60_000;
    this.batch = opts.batch ?? 500;
    this.writeBatch = opts.batch ?? store.writeBatch ?? this.batch;
    this.pending = new Backlog(opts.maxPending ?? 100_000);
    this.now = opts.now ?? Date.now;
  }

  record(r: RequestRecord): void {
    if (this.stopped) return;
    this.dropped += this.pending.push(r);
  }

  /** rows recorded and not yet written */
  get backlog(): number {
    return this.pending.length;
  }

  /** Writes what has been recorded; a write that fails keeps its rows for the next flush. */
  flush(): Promise<void> {
    this.flushing ??= this.writePending().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async writePending(): Promise<void> {
    while (this.pending.length > 0) {
      const rows = this.pending.take(this.writeBatch);
      try {
        await this.store.insert(rows);
      } catch (err) {
        // the database is down or busy: the rows wait (bounded by maxPending) for the next flush
        this.dropped += this.pending.putBack(rows);
        this.opts.logger?.log("warn", "request log write failed; retrying", {
          rows: rows.length,
          error_message: (err as Error).message,
        });
        return;
      }
    }
  }

  /** Deletes the entries past the retention, `batch` at a time, yielding between batches. */
  async prune(): Promise<number> {
    if (this.pruning) return 0;
    this.pruning = true;
    let total = 0;
    try {
      const before = this.now() - this.opts.retentionDays * DAY_MS;
      for (;;) {
        const n = await this.store.prune(before, this.batch);
        total += n;
        if (n < this.batch || this.stopped) break;
        await Bun.sleep(5);
      }
      if (total > 0) this.opts.logger?.log("debug", "request log pruned", { rows: total });
    } catch (err) {
      this.opts.logger?.log("warn", "request log prune failed", { error_message: (err as Error).message });
    } finally {
      this.pruning = false;
    }
    return total;
  }

  start(): void {
    if (this.flushTimer) return;
    this.flushTimer = setInterval(() => void this.flush(), this.flushEveryMs);
    this.flushTimer.unref?.();
    this.pruneTimer = setInterval(() => void this.prune(), this.pruneEveryMs);
    this.pruneTimer.unref?.();
    void this.prune();
  }

  /** Stops the timers and writes what is left. */
  async stop(): Promise<void> {
    if (this.flushTimer) clearInterval(this.flushTimer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.flushTimer = this.pruneTimer = null;
    await this.flush();
    this.stopped = true;
  }

  async page(q: RequestLogQuery): Promise<RequestLogEntry[]> {
    await this.flush();
    return this.store.page(q);
  }

  async get(requestId: string, accountId?: string): Promise<RequestLogEntry | null> {
    await this.flush();
    return this.store.get(requestId, accountId);
  }
}
