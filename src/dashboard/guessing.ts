import type { GuessVerdict, SignInAttempts } from "./interface";

/**
 * The guessing policy (docs/security.md). A target is what is guessed: an email's password, the
 * admin token ("operator"), one account's current password on the change form. In each window:
 * - one client address may fail `perClient` times over all targets, and `perClientTarget` times at
 *   one target; past either it is refused (429) until its window ends, the right secret included;
 * - a target is never locked: once it has failed `targetFree` times (from any addresses), an address
 *   that has already failed at it waits `backoffBaseMs`, doubling with each further failure at the
 *   target, at most `backoffMaxMs`, after its own last failure; an address that has not failed there
 *   is let through at once;
 * - a client address may sign up `signUpsPerClient` times per `signUpWindowMs`, whatever the outcome.
 */
export const SIGN_IN_LIMITS = {
  perClient: 20,
  perClientTarget: 5,
  targetFree: 5,
  backoffBaseMs: 1000,
  backoffMaxMs: 5 * 60_000,
  windowMs: 15 * 60_000,
  signUpsPerClient: 5,
  signUpWindowMs: 24 * 3600_000,
};
export type SignInLimits = typeof SIGN_IN_LIMITS;

export const ALLOWED: GuessVerdict = { allowed: true, retryAfterMs: 0 };
export const refusedFor = (ms: number): GuessVerdict => ({ allowed: false, retryAfterMs: Math.max(1000, Math.ceil(ms)) });

/** How long an address that has failed at a target with `targetFailures` failures waits after its own last failure. */
export function backoffMs(limits: SignInLimits, targetFailures: number): number {
  if (targetFailures < limits.targetFree) return 0;
  return Math.min(limits.backoffBaseMs * 2 ** (targetFailures - limits.targetFree), limits.backoffMaxMs);
}

interface Count {
  n: number;
  resetAt: number;
  /** the time of the last counted attempt (per client and target) */
  last: number;
}

/**
 * The policy counted in memory: a single node's limiter, and a Redis-backed node's fallback while
 * Redis is down. Bounded: when `maxEntries` counts are held, expired ones go first, then the oldest
 * (by the start of their window), so a flood of new addresses can push out old counts but never
 * resets the recent ones.
 */
export class SignInLimiter implements SignInAttempts {
  private seen = new Map<string, Count>();
  constructor(
    private limits: SignInLimits,
    private now: () => number = Date.now,
    private maxEntries = 100_000,
  ) {}

  attempt(target: string, client: string): GuessVerdict {
    const v = this.check(target, client);
    if (!v.allowed) return v;
    const t = this.now();
    for (const k of this.keys(target, client)) {
      const e = this.live(k, t) ?? this.add(k, t, this.limits.windowMs);
      e.n++;
      e.last = t;
    }
    return ALLOWED;
  }

  check(target: string, client: string): GuessVerdict {
    const t = this.now();
    const [ck, ctk, tk] = this.keys(target, client);
    const c = this.live(ck, t);
    if (c && c.n >= this.limits.perClient) return refusedFor(c.resetAt - t);
    const ct = this.live(ctk, t);
    if (ct && ct.n >= this.limits.perClientTarget) return refusedFor(ct.resetAt - t);
    if (ct && ct.n > 0) {
      const until = ct.last + backoffMs(this.limits, this.live(tk, t)?.n ?? 0);
      if (t < until) return refusedFor(until - t);
    }
    return ALLOWED;
  }

  succeeded(target: string, client: string): void {
    const t = this.now();
    for (const k of this.keys(target, client)) {
      const e = this.live(k, t);
      if (e && e.n > 0) e.n--;
    }
  }

  signUp(client: string): GuessVerdict {
    const t = this.now();
    const k = `s:${client}`;
    const e = this.live(k, t);
    if (e && e.n >= this.limits.signUpsPerClient) return refusedFor(e.resetAt - t);
    (e ?? this.add(k, t, this.limits.signUpWindowMs)).n++;
    return ALLOWED;
  }

  /** counts held (for tests of the bound) */
  size(): number {
    return this.seen.size;
  }

  private keys(target: string, client: string): [string, string, string] {
    return [`c:${client}`, `ct:${client}\n${target}`, `t:${target}`];
  }

  private live(k: string, t: number): Count | undefined {
    const e = this.seen.get(k);
    return e && e.resetAt > t ? e : undefined;
  }

  /** a fresh count, at the end of the insertion order (the newest) */
  private add(k: string, t: number, windowMs: number): Count {
    this.seen.delete(k);
    if (this.seen.size >= this.maxEntries) this.evict(t);
    const e = { n: 0, resetAt: t + windowMs, last: 0 };
    this.seen.set(k, e);
    return e;
  }

  private evict(t: number): void {
    for (const [k, e] of this.seen) if (e.resetAt <= t) this.seen.delete(k);
    // still full: the oldest tenth goes (Map order is the order the windows started)
    let drop = this.seen.size - Math.floor(this.maxEntries * 0.9);
    for (const k of this.seen.keys()) {
      if (drop-- <= 0) break;
      this.seen.delete(k);
    }
  }
}

/** The target under which guesses at the admin token are counted, from the API and the console alike. */
export const ADMIN_TARGET = "operator";

/** How long every wrong admin token waits before its answer (a 403, a 401 form or a 429): guessing is slowed, never the right token. */
export const WRONG_ADMIN_TOKEN_DELAY_MS = 250;

/**
 * The admin token's check, written once for the admin API, /metrics and the operator sign-in. The
 * token is compared first (in constant time, so a wrong one costs no more than a right one). The
 * right one is let through always: it counts nothing and is never refused, so a scraper or an
 * operator behind the same NAT or proxy as a guesser keeps working (a 32-character random token
 * cannot be guessed in any number of tries the limits allow anyway). A wrong one is counted as a
 * guess, throttled (429 past the limits) and slowed: its answer waits `WRONG_ADMIN_TOKEN_DELAY_MS`.
 */
export async function guessAdminToken(
  limiter: SignInAttempts,
  right: boolean,
  client: string,
): Promise<GuessVerdict & { right: boolean }> {
  if (right) return { ...ALLOWED, right: true };
  const v = await limiter.attempt(ADMIN_TARGET, client);
  await Bun.sleep(WRONG_ADMIN_TOKEN_DELAY_MS);
  return { ...v, right: false };
}

/** Retry-After, in whole seconds, for a refused guess. */
export const retryAfter = (v: GuessVerdict): Record<string, string> => ({
  "Retry-After": String(Math.max(1, Math.ceil(v.retryAfterMs / 1000))),
});
