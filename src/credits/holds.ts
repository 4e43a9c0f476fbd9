import { GatewayError } from "../errors";
import { credits } from "./amount";
import type { Reservation } from "./interface";

/** 402: the key's monthly_credit_limit does not cover the call (docs/key-policies.md). */
export const keyBudgetExceeded = (limit: number, used: number, amount: number) =>
  new GatewayError(
    "key_budget_exceeded",
    used >= limit
      ? `this key's monthly credit limit of ${limit} is spent: ${used} used or held this month (UTC)`
      : // some is left, less than the call's hold (its upper bound): "is spent" would be false
        `this call may cost up to ${amount} credits (what is held for it), more than the ${limit - used} left of this key's monthly credit limit of ${limit} (${used} used or held this month, UTC)`,
  );

export const shuttingDown = () =>
  new GatewayError("service_unavailable", "the gateway is shutting down; nothing was charged, retry", {
    headers: { "Retry-After": "1" },
  });

/**
 * Credits held by this process's calls in flight, per account. A call is admitted only if the
 * committed balance minus what is already held covers it, so no provider is called on credits
 * promised to another call of this process. Holds are never written anywhere: a crash loses
 * only holds, never a charge.
 */
export class Holds {
  private holds = new Map<string, number>();

  held(accountId: string): number {
    return this.holds.get(accountId) ?? 0;
  }

  /**
   * A reservation of `amount` out of `balance`, or null when what is left does not cover it. Both
   * are credits (amount.ts), checked before the comparison: a NaN would admit anything.
   */
  take(accountId: string, amount: number, balance: number): Reservation | null {
    credits(amount, "a hold");
    credits(balance, "a balance");
    const held = this.held(accountId);
    if (balance - held < amount) return null;
    this.holds.set(accountId, held + amount);
    return { accountId, amount, remaining: balance - held - amount, done: false };
  }

  /** Counts `amount` as held without a balance to take it from (admission was decided elsewhere). */
  add(accountId: string, amount: number): void {
    this.holds.set(accountId, this.held(accountId) + credits(amount, "a hold"));
  }

  give(accountId: string, amount: number): void {
    const left = this.held(accountId) - amount;
    if (left > 0) this.holds.set(accountId, left);
    else this.holds.delete(accountId);
  }
}
