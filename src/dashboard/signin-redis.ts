import type { RedisLink } from "../redis/link";
import { ALLOWED, refusedFor, SignInLimiter, type SignInLimits } from "./guessing";
import type { GuessVerdict, SignInAttempts } from "./interface";
import { hashToken } from "./security";

/**
 * The policy of guessing.ts in one script. KEYS: the client's count, the client-at-target hash
 * (n, last), the target's count. ARGV: now, window ms, per client, per client at target, target
 * free, backoff base ms, backoff max ms, "attempt" or "check". Answers {1, 0} or {0, retry ms};
 * an attempt let through is counted on all three, the first of a window starting its expiry.
 */
const GUESS = `
local now = tonumber(ARGV[1])
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c >= tonumber(ARGV[3]) then return {0, redis.call('PTTL', KEYS[1])} end
local ct = tonumber(redis.call('HGET', KEYS[2], 'n') or '0')
if ct >= tonumber(ARGV[4]) then return {0, redis.call('PTTL', KEYS[2])} end
local t = tonumber(redis.call('GET', KEYS[3]) or '0')
if ct > 0 and t >= tonumber(ARGV[5]) then
  local wait = math.min(tonumber(ARGV[6]) * 2 ^ (t - tonumber(ARGV[5])), tonumber(ARGV[7]))
  local last = tonumber(redis.call('HGET', KEYS[2], 'last') or '0')
  if now < last + wait then return {0, math.ceil(last + wait - now)} end
end
if ARGV[8] == 'attempt' then
  if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
  if redis.call('HINCRBY', KEYS[2], 'n', 1) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
  redis.call('HSET', KEYS[2], 'last', ARGV[1])
  if redis.call('INCR', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[2]) end
end
return {1, 0}
`;

/** Gives an attempt back on the three counts, never below zero and never reviving an expired one. */
const GIVE_BACK = `
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
if tonumber(redis.call('HGET', KEYS[2], 'n') or '0') > 0 then redis.call('HINCRBY', KEYS[2], 'n', -1) end
if tonumber(redis.call('GET', KEYS[3]) or '0') > 0 then redis.call('DECR', KEYS[3]) end
return 1
`;

/** KEYS: the client's sign-up count; ARGV: window ms, limit. {1, 0} counted, or {0, retry ms}. */
const SIGN_UP = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[2]) then return {0, redis.call('PTTL', KEYS[1])} end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {1, 0}
`;

const verdict = (r: unknown): GuessVerdict => {
  const [ok, ms] = (r as [number, number]).map(Number);
  return ok === 1 ? ALLOWED : refusedFor(ms);
};

/**
 * Guesses and sign-ups counted in Redis, so the policy holds for the cluster as a whole: five
 * failures spread over three nodes count as five on each. Keys hold a hash of the target and of
 * the client address, never the address itself. While Redis is unreachable each node counts in
 * memory with the same limits, and counts in Redis again once it is back.
 */
export class RedisSignInLimiter implements SignInAttempts {
  private fallback: SignInLimiter;

  constructor(
    private link: RedisLink,
    private limits: SignInLimits,
    private now: () => number = Date.now,
  ) {
    this.fallback = new SignInLimiter(limits, now);
  }

  private keys(target: string, client: string): string[] {
    const c = hashToken(client);
    const t = hashToken(target);
    // one script reads an address's count over all targets and a target's over all addresses, so
    // on a Redis Cluster all guess counts share one hash tag (one slot): sign-ins are few
    const p = this.link.key(this.link.cluster ? "{signin}:guess" : "guess");
    return [`${p}:c:${c}`, `${p}:ct:${c}:${t}`, `${p}:t:${t}`];
  }

  private async run(mode: "attempt" | "check", target: string, client: string): Promise<GuessVerdict> {
    if (this.link.up) {
      try {
        const l = this.limits;
        const r = await this.link.eval(GUESS, this.keys(target, client), [
          String(this.now()),
          String(l.windowMs),
          String(l.perClient),
          String(l.perClientTarget),
          String(l.targetFree),
          String(l.backoffBaseMs),
          String(l.backoffMaxMs),
          mode,
        ]);
        return verdict(r);
      } catch {
        // unreachable mid-call: this node's own count
      }
    }
    return this.fallback[mode](target, client);
  }

  attempt(target: string, client: string): Promise<GuessVerdict> {
    return this.run("attempt", target, client);
  }

  check(target: string, client: string): Promise<GuessVerdict> {
    return this.run("check", target, client);
  }

  async succeeded(target: string, client: string): Promise<void> {
    if (this.link.up) {
      try {
        await this.link.eval(GIVE_BACK, this.keys(target, client), []);
        return;
      } catch {
        // unreachable: the attempt may have been counted in memory
      }
    }
    this.fallback.succeeded(target, client);
  }

  async signUp(client: string): Promise<GuessVerdict> {
    if (this.link.up) {
      try {
        const l = this.limits;
        const r = await this.link.eval(
          SIGN_UP,
          [this.link.key(`signup:c:${hashToken(client)}`)],
          [String(l.signUpWindowMs), String(l.signUpsPerClient)],
        );
        return verdict(r);
      } catch {
        // unreachable mid-call: this node's own count
      }
    }
    return this.fallback.signUp(client);
  }
}
