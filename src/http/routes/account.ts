import { Elysia } from "elysia";
import type { AppDeps } from "../../app";
import { GatewayError } from "../../errors";
import { rateLimitHeaders } from "../../ratelimit/limiter";
import { authedContext } from "../context";
import { ok } from "../respond";
import { stateOf } from "../state";

export function accountRoutes(deps: AppDeps) {
  const { ledger, keys, limiter } = deps;
  const guard = async (request: Request) => {
    const state = stateOf(request);
    state.fn = "account";
    const ctx = await authedContext(deps, request, state);
    const d = limiter.check(ctx.auth.keyId, ctx.auth.plan, "account", "standard");
    Object.assign(state.headers, rateLimitHeaders(d));
    if (!d.allowed) throw new GatewayError("rate_limited", `rate limit of ${d.limit} requests per minute exceeded`);
    return ctx;
  };
  const detail = (summary: string) => ({ tags: ["Account"], summary });

  return new Elysia({ name: "account" })
    .get(
      "/api/v1/account/usage",
      async ({ request }) => {
        const { state, auth } = await guard(request);
        return ok(state, "usage", ledger.monthToDate(auth.accountId));
      },
      { detail: detail("Usage statistics of the calling account for the current month (UTC)") },
    )
    .get(
      "/api/v1/account/usage-summary",
      async ({ request }) => {
        const { state, auth } = await guard(request);
        const months = ledger.monthly(auth.accountId);
        return ok(state, "usage summary", {
          account_id: auth.accountId,
          balance: ledger.balance(auth.accountId),
          months,
          totals: {
            requests: months.reduce((s, m) => s + m.requests, 0),
            credits_used: months.reduce((s, m) => s + m.credits_used, 0),
            credits_granted: months.reduce((s, m) => s + m.credits_granted, 0),
          },
        });
      },
      { detail: detail("Monthly billing and usage summary, computed from the credit ledger") },
    )
    .get(
      "/api/v1/account/api-key/current",
      async ({ request }) => {
        const { state, auth } = await guard(request);
        const view = keys.get(auth.keyId);
        const limits = {
          heavy: limiter.limitFor(auth.plan, "", "heavy"),
          bulk: limiter.limitFor(auth.plan, "", "bulk"),
          standard: limiter.limitFor(auth.plan, "", "standard"),
        };
        return ok(state, "current key", { ...view, rate_limits_per_minute: limits, balance: ledger.balance(auth.accountId) });
      },
      { detail: detail("Details of the key used for this request (never the secret)") },
    );
}
