import type { RedisLink } from "../redis/link";
import type { SignInAttempts } from "./interface";
import { hashToken, SignInLimiter, type SignInLimits } from "./security";

/**
 * KEYS: the email's and the client's counters; ARGV: window ms, email limit, client limit. Counts
 * one attempt on both unless either is used up (0); the first attempt of a window starts its expiry.
 */
const ATTEMPT = `
if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[2]) then return 0 end
if tonumber(redis.call('GET', KEYS[2]) or '0') >= tonumber(ARGV[3]) then return 0 end
for i, k in ipairs(KEYS) do
  if redis.call('INCR', k) == 1 then redis.call('PEXPIRE', k, ARGV[1]) end
end
return 1
`;

/** Gives an attempt back on both counters, never below zero and never reviving an expired one. */
const GIVE_BACK = `
for i, k in ipairs(KEYS) do
  if tonumber(redis.call('GET', k) or '0') > 0 then redis.call('DECR', k) end
end
return 1
`;

/**
 * Sign-in attempts counted in Redis, so the limits hold for the cluster as a whole: five failures
 * spread over three nodes refuse the sixth try on any of them. Keys hold a hash of the email or
 * client address, never the address itself. While Redis is unreachable each node counts in memory
 * with the same limits, and counts in Redis again once it is back.
 */
export class RedisSignInLimiter implements SignInAttempts {
  private fallback: SignInLimiter;

  constructor(
    private link: RedisLink,
    private limits: SignInLimits,
    now?: () => number,
  ) {
    this.fallback = new SignInLimiter(limits, now);
  }

  private keys(email: string, client: string): string[] {
    return [`textai:signin:e:${hashToken(email)}`, `textai:signin:c:${hashToken(client)}`];
  }

  async attempt(email: string, client: string): Promise<boolean> {
    if (this.link.up) {
      try {
        const l = this.limits;
        const ok = await this.link.eval<number>(ATTEMPT, this.keys(email, client), [
          String(l.windowMs),
          String(l.perEmail),
          String(l.perClient),
        ]);
        return Number(ok) === 1;
      } catch {
        // unreachable mid-call: this node's own count
      }
    }
    return this.fallback.attempt(email, client);
  }

  async succeeded(email: string, client: string): Promise<void> {
    if (this.link.up) {
      try {
        await this.link.eval(GIVE_BACK, this.keys(email, client), []);
        return;
      } catch {
        // unreachable: the attempt may have been counted in memory
      }
    }
    this.fallback.succeeded(email, client);
  }
}
