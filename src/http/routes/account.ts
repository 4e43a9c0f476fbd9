import { Elysia } from "elysia";
import { keyDetail } from "../../auth/key-detail";
import { knowledgeQuotaFor } from "../../config";
import { notFound } from "../../errors";
import { parseLogQuery, readPage } from "../../requestlog/query";
import type { AppDeps } from "../deps";
import { edgePlugin } from "../edge-plugin";
import { ok } from "../respond";

export function accountRoutes(deps: AppDeps) {
  const { ledger, keys, limiter } = deps;
  const detail = (summary: string) => ({ tags: ["Account"], summary });

  return (
    new Elysia({ name: "account" })
      .use(edgePlugin(deps))
      .guard({ key: { fn: "account" } })
      // answers that charge nothing still tell the balance (meta.credits_remaining)
      .onBeforeHandle(async ({ state, auth }) => {
        state.creditsRemaining = await ledger.balance(auth.accountId);
      })
      .get(
        "/api/v1/account/usage",
        async ({ state, auth }) => {
          const usage = await ledger.monthToDate(auth.accountId);
          // what the account keeps in knowledge bases, FAQ collections and chatbots, against its
          // plan's quota (a 403 at an upload was the only place to learn either)
          const kept = await deps.knowledge.bases.usage(auth.accountId);
          const quota = knowledgeQuotaFor(deps.config, usage.plan);
          const of = (used: number, limit: number) => ({ used, limit });
          return ok(state, "usage", {
            ...usage,
            knowledge: {
              bases: of(kept.bases, quota.bases),
              documents: of(kept.documents, quota.documents),
              bytes: of(kept.bytes, quota.bytes),
              faq_collections: of(kept.faqCollections, quota.faqCollections),
              chatbots: of(kept.chatbots, quota.chatbots),
            },
          });
        },
        { detail: detail("Usage statistics of the calling account for the current month (UTC)") },
      )
      .get(
        "/api/v1/account/usage-summary",
        async ({ state, auth }) => {
          const months = await ledger.monthly(auth.accountId);
          return ok(state, "usage summary", {
            account_id: auth.accountId,
            balance: await ledger.balance(auth.accountId),
            months,
            totals: {
              requests: months.reduce((s, m) => s + m.requests, 0),
              credits_used: months.reduce((s, m) => s + m.credits_used, 0),
              credits_granted: months.reduce((s, m) => s + m.credits_granted, 0),
              input_tokens: months.reduce((s, m) => s + m.input_tokens, 0),
              output_tokens: months.reduce((s, m) => s + m.output_tokens, 0),
            },
          });
        },
        { detail: detail("Monthly billing and usage summary, computed from the credit ledger") },
      )
      .get(
        "/api/v1/account/api-key/current",
        async ({ state, auth }) => {
          // its policy and what it spent this month (UTC), as the admin API shows them
          const view = await keyDetail(keys, ledger, auth.keyId);
          const limits = {
            heavy: limiter.limitFor(auth.plan, "", "heavy"),
            bulk: limiter.limitFor(auth.plan, "", "bulk"),
            standard: limiter.limitFor(auth.plan, "", "standard"),
          };
          return ok(state, "current key", {
            ...view,
            rate_limits_per_minute: limits,
            balance: await ledger.balance(auth.accountId),
          });
        },
        { detail: detail("Details of the key used for this request (never the secret)") },
      )
      .get(
        "/api/v1/account/requests",
        async ({ state, auth, query }) => {
          const q = { ...parseLogQuery(query, { admin: false }), accountId: auth.accountId };
          return ok(state, "requests", await readPage((x) => deps.requestLog.page(x), q));
        },
        {
          detail: detail(
            "The calling account's request log, newest first: metadata only, never a body (limit, cursor, function, status, key_id, from, to)",
          ),
        },
      )
      .get(
        "/api/v1/account/requests/:request_id",
        async ({ state, auth, params }) => {
          const entry = await deps.requestLog.get(params.request_id, auth.accountId);
          if (!entry) throw notFound("request");
          return ok(state, "request", entry);
        },
        { detail: detail("One entry of the calling account's request log") },
      )
  );
}
