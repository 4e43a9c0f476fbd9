/**
 * What the dashboard's route plugins share: a page in the layout with the security headers, a form
 * read within limits from the same origin, a new session's cookie, what a refused guess says
 * (its page answers 429), and the key changes an account holder (or the operator) makes.
 */
import type { AuditBy, AuditDraft } from "../../../audit/interface";
import { keyLabel } from "../../../auth/attributes";
import { KeyLimitError } from "../../../auth/interface";
import { type KeyPolicy, POLICY_FIELDS, type PolicyPatch, policyPatchFromText, widenedField } from "../../../auth/policy";
import { retryAfter } from "../../../dashboard/guessing";
import type { GuessVerdict, Session } from "../../../dashboard/interface";
import type { Role } from "../../../dashboard/members";
import { newSessionToken, sessionCookie } from "../../../dashboard/security";
import { GatewayError } from "../../../errors";
import { limitRefusal, rateLimitHeaders } from "../../../ratelimit/limiter";
import { readBytes } from "../../body";
import type { AppDeps } from "../../deps";
import type { Holder } from "../../edge-plugin";
import type { FunctionPipeline } from "../../pipeline";
import { type Ctx, checkOrigin, SECURITY_HEADERS, storedHash } from "../../session";
import { KEY_CREATE_LIMIT, usageNames } from "../usage-names";
import { counted, type Html } from "./html";
import * as pages from "./pages";

export type DashboardDeps = AppDeps & { pipeline: FunctionPipeline };

const FORM_LIMIT = 64 * 1024;
export const LEDGER_PAGE = 25;
export const KEY_PAGE = 100;
/** the rate-limit name of key creation: the plan's heavy class unless plans.NAME.rate_limits sets "key-create" */
const KEY_CREATE = KEY_CREATE_LIMIT;

export { SECURITY_HEADERS } from "../../session";
/** a dashboard JSON route's OpenAPI entry */
export const detail = (summary: string) => ({ tags: ["Dashboard"], summary, security: [{ session: [] }] });

/** The signed-in member for the layout: its email, and its role (the nav shows the pages it may open). */
export const who = (email: string, role?: Role) => ({ kind: "account" as const, name: email, role });
/** Who makes a change in the dashboard, for its audit entry: the signed-in member, from the client's address. */
export const byHolder = (c: Ctx, h: Pick<Holder, "memberId">): AuditBy => ({ actor: h.memberId, client: c.address });
/** Who makes a change in the operator console, for its audit entry. */
/** The operator console's changes: `operator`, or who single sign-on said the session is (`operator:EMAIL`, docs/audit.md). */
export const byOperator = (c: Ctx, s: Pick<Session, "actor">): AuditBy => ({ actor: s.actor ?? "operator", client: c.address });
export const OPERATOR = { kind: "operator" as const, name: "operator" };
export const plans = (deps: Pick<AppDeps, "config">) => [...new Set(["free", ...Object.keys(deps.config.plans)])];

/** An HTML page (in the layout unless given as a string), with the request's and the security headers. */
export function page(
  deps: Pick<AppDeps, "config">,
  c: Ctx,
  status: number,
  o: pages.PageOpts,
  body: Html | string,
  headers: Record<string, string> = {},
): Response {
  c.state.status = status;
  const text = typeof body === "string" ? body : pages.layout({ operatorEnabled: !!deps.config.adminToken, ...o }, body);
  return new Response(text, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      ...SECURITY_HEADERS,
      ...c.state.headers,
      ...headers,
    },
  });
}

/** A form post from the same origin, counted while it arrives (no account is needed to send one, so none is read whole first). */
export async function readForm(deps: Pick<AppDeps, "config">, c: Ctx): Promise<URLSearchParams> {
  checkOrigin(c);
  const type = c.request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded"))
    throw new GatewayError("unsupported_media_type", "expected a form (application/x-www-form-urlencoded)");
  const bytes = await readBytes(c.request, FORM_LIMIT, deps.config.limits.bodyTimeoutMs);
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

/** A new session for an account holder or the operator: its token, and the cookie that carries it. */
export async function startSession(
  deps: Pick<AppDeps, "config" | "dashboard">,
  c: Ctx,
  s: Pick<Session, "accountId" | "kind" | "memberId" | "actor">,
  entry?: AuditDraft,
): Promise<{ token: string; cookie: string }> {
  const token = newSessionToken();
  const now = Date.now();
  await deps.dashboard.createSession(
    { tokenHash: storedHash(deps, token, s.kind), ...s, createdAt: now, lastSeenAt: now },
    entry,
  );
  return { token, cookie: sessionCookie(token, c.secure) };
}

/** Whether an account's members sign in only by single sign-on (`[sso] sso_required`, docs/sso.md): no password of theirs is taken. */
export const ssoOnly = (deps: Pick<DashboardDeps, "config">, accountId: string): boolean =>
  deps.config.sso?.ssoRequired.has(accountId) ?? false;
export const ssoOnlyFlash = {
  kind: "error" as const,
  text: "This account's members sign in with single sign-on only: use the single sign-on button.",
};

/** A refused guess (or sign-up) as its page says it (a 429): the wait, and its seconds for Retry-After. */
export function tooMany(v: GuessVerdict, what = "attempts"): { text: string; retryAfter: number } {
  const wait = Number(retryAfter(v)["Retry-After"]);
  const when = wait < 120 ? counted(wait, "second") : counted(Math.ceil(wait / 60), "minute");
  return { text: `Too many ${what}. Try again in ${when}.`, retryAfter: wait };
}

/**
 * A key for the signed-in member's account, owned by the member: limited per account like any call,
 * within the plan's cap. Its label is checked first (the key store's check, src/auth/attributes.ts),
 * so a bad one spends none of the limit.
 */
export async function createOwnKey(
  deps: Pick<AppDeps, "keys" | "limiter" | "dashboard">,
  c: Ctx,
  h: Holder,
  given: unknown,
  policy?: KeyPolicy,
) {
  const label = keyLabel(given);
  const { accountId } = h;
  const plan = (await deps.keys.getAccount(accountId))?.plan ?? "free";
  const d = await deps.limiter.check(accountId, plan, KEY_CREATE, "heavy");
  Object.assign(c.state.headers, rateLimitHeaders(d));
  if (!d.allowed)
    throw limitRefusal(
      d,
      "key creation",
      `at most ${counted(d.limit, "key")} can be made a minute; retry in ${d.retryAfterSeconds}s`,
    );
  try {
    const created = await deps.keys.createKey({ label, accountId, policy, audit: byHolder(c, h) });
    await deps.dashboard.setKeyOwner(created.id, h.memberId);
    return created;
  } catch (err) {
    if (err instanceof KeyLimitError) throw new GatewayError("forbidden", err.message);
    throw err;
  }
}

/** A key revoked, by its account's holder (accountId) or the operator (undefined). */
export async function revokeKey(
  deps: Pick<AppDeps, "keys">,
  accountId: string | undefined,
  id: string,
  by: AuditBy,
): Promise<void> {
  // the same path as DELETE /admin/v1/keys/:id: the key store drops it from its cache and broadcasts it
  if (!(await deps.keys.revoke(id, accountId, by))) throw new GatewayError("not_found", "key not found");
}

/** The keys the member sees (a developer: the ones it made), newest first. */
export async function keysOf(deps: Pick<AppDeps, "keys" | "dashboard">, h: Holder, p: { limit: number; offset: number }) {
  if (h.role !== "developer") return deps.keys.list(h.accountId, p);
  const own = new Set(await deps.dashboard.keysOwnedBy(h.memberId));
  const list = (await deps.keys.list(h.accountId)).filter((k) => own.has(k.id));
  return list.slice(p.offset, p.offset + p.limit);
}

/** A key of the member's account revoked by the member (a developer: only one it made). */
export async function revokeOwnKey(deps: Pick<AppDeps, "keys" | "dashboard">, c: Ctx, h: Holder, id: string): Promise<void> {
  // another member's key is none of a developer's: as unknown to it as another account's
  if (h.role === "developer" && !(await deps.dashboard.keysOwnedBy(h.memberId)).includes(id))
    throw new GatewayError("not_found", "key not found");
  await revokeKey(deps, h.accountId, id, byHolder(c, h));
}

/** A policy form's fields as a patch: an empty field clears that limit. */
export const policyFromForm = (deps: Pick<AppDeps, "functions">, form: URLSearchParams): PolicyPatch =>
  policyPatchFromText(Object.fromEntries(POLICY_FIELDS.map((f) => [f, form.get(f) ?? undefined])), usageNames(deps.functions));

/**
 * An account holder's change to one of its keys' policies: it may only narrow it (a subset of
 * the functions and models, lower limits, an earlier expiry); widening or clearing is the
 * operator's. Takes effect like the admin API's (cache dropped, broadcast).
 */
export async function narrowOwnKey(deps: Pick<AppDeps, "keys">, c: Ctx, h: Holder, id: string, patch: PolicyPatch) {
  const { accountId } = h;
  const narrowOnly = (before: KeyPolicy | undefined, after: KeyPolicy | undefined) => {
    const f = widenedField(before, after);
    if (f)
      throw new GatewayError(
        "forbidden",
        `${f}: you can only narrow a key's policy here; to widen or clear it, ask the operator`,
        { param: f },
      );
  };
  const view = await deps.keys.setPolicy(id, patch, { accountId, check: narrowOnly, audit: byHolder(c, h) });
  if (!view) throw new GatewayError("not_found", "key not found");
  return view;
}
