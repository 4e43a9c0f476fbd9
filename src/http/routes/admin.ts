import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AuditBy } from "../../audit/interface";
import { MAX_LABEL, MAX_NAME } from "../../auth/attributes";
import { KeyLimitError, KeyStoreError } from "../../auth/interface";
import { keyDetail, withMonthSpend } from "../../auth/key-detail";
import { emailProblem, hashPassword } from "../../auth/passwords";
import { applyPolicyPatch, clearAll, parseAccountTags, parsePolicyPatch } from "../../auth/policy";
import { grantAmount, grantReason, MAX_GRANT, MAX_REASON } from "../../credits/amount";
import { GatewayError } from "../../errors";
import { parseLogQuery, readPage } from "../../requestlog/query";
import { strictJsonBody } from "../body";
import type { AppDeps } from "../deps";
import { edgePlugin } from "../edge-plugin";
import { limitOffset } from "../query";
import { ok } from "../respond";
import { clientAddress, type RouteContext } from "../session";
import { usageNames } from "./usage-names";

const CreateAccount = T.Object({
  /** checked by the key store, as from every way in (src/auth/attributes.ts) */
  name: T.Optional(T.String({ description: `1 to ${MAX_NAME} characters, spaces at either end not counted` })),
  plan: T.Optional(T.String({ minLength: 1, maxLength: 50 })),
  credits: T.Optional(T.Integer({ minimum: 0, maximum: MAX_GRANT })),
  /** with password: the account signs in to the dashboard with this email */
  email: T.Optional(T.String({ minLength: 3, maxLength: 254 })),
  password: T.Optional(T.String({ minLength: 10, maxLength: 200 })),
  /** residency and routing tags (docs/routing.md): validated by parseAccountTags */
  tags: T.Optional(T.Unknown()),
});
const UpdateAccount = T.Object({ tags: T.Unknown() });
const Grant = T.Object({
  /** negative: takes credits back, never below a zero balance */
  amount: T.Integer({ minimum: -MAX_GRANT, maximum: MAX_GRANT }),
  reason: T.Optional(T.String({ description: `1 to ${MAX_REASON} characters, spaces at either end not counted` })),
});
const CreateKey = T.Object({
  /** checked by the key store, as from every way in (src/auth/attributes.ts) */
  label: T.String({ description: `1 to ${MAX_LABEL} characters, spaces at either end not counted` }),
  account_id: T.Optional(T.String({ description: "an account's id; leave it out to make a new account" })),
  plan: T.Optional(T.String({ minLength: 1, maxLength: 50 })),
  credits: T.Optional(T.Integer({ minimum: 0, maximum: MAX_GRANT })),
  /** docs/key-policies.md: validated by parsePolicyPatch */
  policy: T.Optional(T.Unknown()),
});
const UpdateKey = T.Object({ policy: T.Unknown() });

const detail = (summary: string) => ({ tags: ["Admin"], summary, security: [{ bearer: [] }] });

/** Who makes an admin API change, for its audit entry: the admin token, from the client's address. */
export const byToken = (deps: AppDeps, context: RouteContext): AuditBy => ({
  actor: "admin-token",
  client: clientAddress(deps, context.request, context.server),
});

/** A family of admin routes, every one behind the admin edge (the operator's token; 404 without one). */
export function adminFamily(deps: AppDeps, name: string) {
  return new Elysia({ name }).use(edgePlugin(deps)).guard({ admin: true });
}

/** An admin route's JSON body, read within the limits and validated strictly against its schema (http/body.ts). */
export const adminBody = (config: AppDeps["config"]) => strictJsonBody(config.limits);

/** Accounts: create (with a dashboard login when asked), list, read, grant or take back credits. */
function adminAccounts(deps: AppDeps) {
  const { keys, ledger } = deps;
  const body = adminBody(deps.config);
  const accountView = async (id: string) => {
    const acc = await keys.getAccount(id);
    if (!acc) throw new GatewayError("not_found", "account not found");
    return { ...acc, usage: await ledger.monthToDate(acc.id) };
  };
  return adminFamily(deps, "admin-accounts")
    .post(
      "/admin/v1/accounts",
      async (context) => {
        const { state, request } = context;
        const b = await body(request, CreateAccount);
        const email = b.email?.trim().toLowerCase();
        if ((email === undefined) !== (b.password === undefined))
          throw new GatewayError("invalid_request", "email and password go together", {
            param: email === undefined ? "email" : "password",
          });
        if (email !== undefined) {
          const problem = emailProblem(email);
          if (problem) throw new GatewayError("invalid_request", problem, { param: "email" });
          if (await deps.dashboard.loginByEmail(email))
            throw new GatewayError("conflict", "an account with this email already exists", { param: "email" });
        }
        const tags = b.tags === undefined ? null : parseAccountTags(b.tags);
        const login =
          email !== undefined && b.password !== undefined ? { email, passwordHash: await hashPassword(b.password) } : undefined;
        const acc = await keys.createAccount({
          name: b.name ?? email,
          plan: b.plan,
          credits: b.credits,
          tags,
          login,
          audit: byToken(deps, context),
        });
        return ok(state, "account created", { ...(await accountView(acc.id)), email: email ?? null }, 201);
      },
      {
        parse: "none",
        detail: detail(
          "Create an account (receives the welcome credits unless credits is given); with email and password (10 to 200 characters) it signs in to the dashboard",
        ),
      },
    )
    .get(
      "/admin/v1/accounts",
      async ({ state, query }) => {
        const { limit, offset } = limitOffset(query, 50, 500);
        return ok(state, "accounts", { data: await keys.listAccounts(limit, offset), limit, offset });
      },
      { detail: detail("List accounts (limit, offset)") },
    )
    .get("/admin/v1/accounts/:id", async ({ state, params }) => ok(state, "account", await accountView(params.id)), {
      detail: detail("Account balance, plan, tags and usage"),
    })
    .patch(
      "/admin/v1/accounts/:id",
      async (context) => {
        const { state, request, params } = context;
        const b = await body(request, UpdateAccount);
        if (!(await keys.setAccountTags(params.id, parseAccountTags(b.tags), byToken(deps, context))))
          throw new GatewayError("not_found", "account not found");
        return ok(state, "account updated", await accountView(params.id));
      },
      {
        parse: "none",
        detail: detail(
          "Change an account's tags (null clears them); every key of the account carries them from its next request, on every node",
        ),
      },
    )
    .post(
      "/admin/v1/accounts/:id/credits",
      async (context) => {
        const { state, request, params } = context;
        const b = await body(request, Grant);
        // (the ledger's own checks, before the account is looked up: a bad grant is 400 whatever it names)
        grantAmount(b.amount);
        grantReason(b.reason);
        if (!(await keys.accountExists(params.id))) throw new GatewayError("not_found", "account not found");
        const balance = await ledger.grant(params.id, b.amount, "grant", b.reason ?? null, byToken(deps, context));
        return ok(state, b.amount > 0 ? "credits granted" : "credits taken back", {
          account_id: params.id,
          granted: b.amount,
          balance,
        });
      },
      {
        parse: "none",
        detail: detail("Grant credits (a ledger entry); a negative amount takes credits back, never below a zero balance"),
      },
    );
}

/** Keys: create, list, read, change a policy, revoke. */
function adminKeys(deps: AppDeps) {
  const { keys, ledger } = deps;
  const known = usageNames(deps.functions);
  const body = adminBody(deps.config);
  return adminFamily(deps, "admin-keys")
    .post(
      "/admin/v1/keys",
      async (context) => {
        const { state, request } = context;
        const b = await body(request, CreateKey);
        try {
          const policy = applyPolicyPatch(undefined, parsePolicyPatch(b.policy, known));
          const created = await keys.createKey({
            label: b.label,
            accountId: b.account_id,
            plan: b.plan,
            credits: b.credits,
            policy,
            audit: byToken(deps, context),
          });
          const view = await keys.get(created.id);
          return ok(
            state,
            "key created; the plaintext key is shown only in this response",
            { ...created, policy: view?.policy },
            201,
          );
        } catch (err) {
          if (err instanceof KeyLimitError) throw new GatewayError("forbidden", err.message, { param: "account_id" });
          if (err instanceof KeyStoreError) throw new GatewayError("not_found", err.message, { param: "account_id" });
          throw err;
        }
      },
      { parse: "none", detail: detail("Create an API key; its plaintext appears in this response only") },
    )
    .get(
      "/admin/v1/keys",
      async ({ state, query }) => {
        const { limit, offset } = limitOffset(query, 100, 500);
        const list = await keys.list(query.account_id || undefined, { limit: limit + 1, offset });
        return ok(state, "keys", { data: list.slice(0, limit), limit, offset, has_more: list.length > limit });
      },
      {
        detail: detail("List keys (masked), newest first, optionally for one account_id (limit, offset)"),
      },
    )
    .get(
      "/admin/v1/keys/:id",
      async ({ state, params }) => {
        const key = await keyDetail(keys, ledger, params.id);
        if (!key) throw new GatewayError("not_found", "key not found");
        return ok(state, "key", key);
      },
      { detail: detail("One key (masked) with its policy and the credits it spent this month (UTC)") },
    )
    .patch(
      "/admin/v1/keys/:id",
      async (context) => {
        const { state, request, params } = context;
        const b = await body(request, UpdateKey);
        // policy: null clears every field
        const patch = b.policy === null ? clearAll() : parsePolicyPatch(b.policy, known);
        const view = await keys.setPolicy(params.id, patch, { audit: byToken(deps, context) });
        if (!view) throw new GatewayError("not_found", "key not found");
        return ok(state, "key policy updated", await withMonthSpend(ledger, view));
      },
      {
        parse: "none",
        detail: detail(
          "Change a key's policy: { policy: { … } } replaces the fields given, null clears one; every node applies it within one second",
        ),
      },
    )
    .delete(
      "/admin/v1/keys/:id",
      async (context) => {
        const { state, params } = context;
        if (!(await keys.revoke(params.id, undefined, byToken(deps, context))))
          throw new GatewayError("not_found", "key not found");
        return ok(state, "key revoked", await keys.get(params.id));
      },
      { detail: detail("Revoke a key: it fails from the next request on") },
    );
}

/** The request log of every account. */
function adminRequests(deps: AppDeps) {
  return adminFamily(deps, "admin-requests")
    .get(
      "/admin/v1/requests",
      async ({ state, query }) => {
        return ok(state, "requests", await readPage((q) => deps.requestLog.page(q), parseLogQuery(query, { admin: true })));
      },
      {
        detail: detail(
          "The request log of every account, newest first: metadata only (limit, cursor, account_id, function, status, key_id, from, to)",
        ),
      },
    )
    .get(
      "/admin/v1/requests/:request_id",
      async ({ state, params }) => {
        const entry = await deps.requestLog.get(params.request_id);
        if (!entry) throw new GatewayError("not_found", "request not found");
        return ok(state, "request", entry);
      },
      { detail: detail("One entry of the request log") },
    );
}

/**
 * Admin API: only with TEXTAI_ADMIN_TOKEN set (else 404); a wrong token is 403, and counted as a
 * guess from the client address like a wrong token at the operator sign-in (429 past the limit).
 */
export function adminRoutes(deps: AppDeps) {
  return new Elysia({ name: "admin" }).use(adminAccounts(deps)).use(adminKeys(deps)).use(adminRequests(deps));
}
