import type { AuthInfo } from "./interface";

/**
 * Presented-key lookups kept for at most `ttlMs` (1 s by default), so a key revoked by another
 * process stops working within that time even if its broadcast is lost; `forget` drops one at once.
 */
export class KeyCache {
  private entries = new Map<string, { info: AuthInfo | null; at: number }>();

  constructor(
    private ttlMs = 1000,
    private now: () => number = Date.now,
  ) {}

  /** undefined: not cached (or too old) */
  get(hash: string): AuthInfo | null | undefined {
    const hit = this.entries.get(hash);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.info;
    return undefined;
  }

  set(hash: string, info: AuthInfo | null): void {
    if (this.entries.size > 50_000) this.entries.clear();
    this.entries.set(hash, { info, at: this.now() });
  }

  forget(hash: string): void {
    this.entries.delete(hash);
  }
}
