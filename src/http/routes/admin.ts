import { Type as T } from "@sinclair/typebox";
import { desc, eq } from "drizzle-orm";
import { Elysia } from "elysia";
import type { AppDeps } from "../../app";
import { KeyStoreError } from "../../auth/key-store";
import { safeEqual } from "../../auth/keys";
import { GatewayError } from "../../errors";
import { validateAgainst } from "../../functions/validate";
import { accounts } from "../../storage/schema";
import { readJsonBody } from "../body";
import { ok } from "../respond";
import { type RequestState, stateOf } from "../state";

const CreateAccount = T.Object({
  name: T.Optional(T.String({ maxLength: 200 })),
  plan: T.Optional(T.String({ minLength: 1, maxLength: 50 })),
  credits: T.Optional(T.Integer({ minimum: 0 })),
});
const Grant = T.Object({
  amount: T.Integer({ minimum: 1, maximum: 1_000_000_000 }),
  reason: T.Optional(T.String({ maxLength: 500 })),
});
const CreateKey = T.Object({
  label: T.String({ minLength: 1, maxLength: 200 }),
  account_id: T.Optional(T.String()),
  plan: T.Optional(T.String({ minLength: 1, maxLength: 50 })),
  credits: T.Optional(T.Integer({ minimum: 0 })),
});

/** Admin API: only with TEXTAI_ADMIN_TOKEN set (else 404); a wrong token is 403. */
export function adminRoutes(deps: AppDeps) {
  const { config, keys, ledger, storage } = deps;
  const authorize = (request: Request): RequestState => {
    const state = stateOf(request);
    state.fn = "admin";
    if (!config.adminToken) throw new GatewayError("not_found", "no such route");
    const presented = (request.headers.get("authorization") ?? "").replace(/^bearer\s+/i, "");
    if (!presented || !safeEqual(presented, config.adminToken))
      throw new GatewayError("forbidden", "admin token missing or wrong");
    return state;
  };
  const body = async <S extends Parameters<typeof validateAgainst>[0]>(request: Request, schema: S) =>
    validateAgainst<import("@sinclair/typebox").Static<S>>(
      schema,
      await readJsonBody(request, config.limits),
      config.limits.maxTextChars,
    );
  const accountView = (id: string) => {
    const acc = storage.db.select().from(accounts).where(eq(accounts.id, id)).get();
    if (!acc) throw new GatewayError("not_found", "account not found");
    return {
      id: acc.id,
      name: acc.name,
      plan: acc.plan,
      balance: acc.balance,
      created_at: new Date(acc.createdAt).toISOString(),
      usage: ledger.monthToDate(acc.id),
    };
  };
  const detail = (summary: string) => ({ tags: ["Admin"], summary, security: [{ bearer: [] }] });

  return new Elysia({ name: "admin" })
    .post(
      "/admin/v1/accounts",
      async ({ request }) => {
        const state = authorize(request);
        const b = await body(request, CreateAccount);
        const acc = keys.createAccount({ name: b.name, plan: b.plan, credits: b.credits });
        return ok(state, "account created", accountView(acc.id), 201);
      },
      { parse: "none", detail: detail("Create an account (receives the welcome credits unless credits is given)") },
    )
    .get(
      "/admin/v1/accounts",
      ({ request, query }) => {
        const state = authorize(request);
        const limit = Math.min(Math.max(Number(query.limit) || 50, 1), 500);
        const offset = Math.max(Number(query.offset) || 0, 0);
        const rows = storage.db.select().from(accounts).orderBy(desc(accounts.createdAt)).limit(limit).offset(offset).all();
        return ok(state, "accounts", {
          data: rows.map((a) => ({
            id: a.id,
            name: a.name,
            plan: a.plan,
            balance: a.balance,
            created_at: new Date(a.createdAt).toISOString(),
          })),
          limit,
          offset,
        });
      },
      { detail: detail("List accounts (limit, offset)") },
    )
    .get("/admin/v1/accounts/:id", ({ request, params }) => ok(authorize(request), "account", accountView(params.id)), {
      detail: detail("Account balance, plan and usage"),
    })
    .post(
      "/admin/v1/accounts/:id/credits",
      async ({ request, params }) => {
        const state = authorize(request);
        const b = await body(request, Grant);
        if (!keys.accountExists(params.id)) throw new GatewayError("not_found", "account not found");
        const balance = ledger.grant(params.id, b.amount, "grant", b.reason ?? null);
        return ok(state, "credits granted", { account_id: params.id, granted: b.amount, balance });
      },
      { parse: "none", detail: detail("Grant credits (a ledger entry)") },
    )
    .post(
      "/admin/v1/keys",
      async ({ request }) => {
        const state = authorize(request);
        const b = await body(request, CreateKey);
        try {
          const created = keys.createKey({ label: b.label, accountId: b.account_id, plan: b.plan, credits: b.credits });
          return ok(state, "key created; the plaintext key is shown only in this response", created, 201);
        } catch (err) {
          if (err instanceof KeyStoreError) throw new GatewayError("not_found", err.message, { param: "account_id" });
          throw err;
        }
      },
      { parse: "none", detail: detail("Create an API key; its plaintext appears in this response only") },
    )
    .get(
      "/admin/v1/keys",
      ({ request, query }) => ok(authorize(request), "keys", { data: keys.list(query.account_id || undefined) }),
      {
        detail: detail("List keys (masked), optionally for one account_id"),
      },
    )
    .delete(
      "/admin/v1/keys/:id",
      ({ request, params }) => {
        const state = authorize(request);
        if (!keys.revoke(params.id)) throw new GatewayError("not_found", "key not found");
        return ok(state, "key revoked", keys.get(params.id));
      },
      { detail: detail("Revoke a key: it fails from the next request on") },
    );
}
