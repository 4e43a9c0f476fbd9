/**
 * Single sign-on's two routes (docs/sso.md), mounted when `[sso]` is set: `GET /dashboard/sso/start`
 * (`?operator=1` for the operator console) sends the browser to the issuer with a sealed cookie of
 * the sign-in; `GET /dashboard/sso/callback` checks it, claims its state once across nodes, has the
 * code exchanged and the ID token verified, maps the identity to the operator or to an account's
 * member (made on its first sign-in, its role kept to the mapping's) and opens the session. Every
 * refusal is a page that says why, and opens no session.
 */
import { createHash } from "node:crypto";
import { Elysia } from "elysia";
import { memberSignInEntry, operatorSignInEntry, ssoOperatorActor } from "../../../dashboard/audit";
import { LAST_OWNER } from "../../../dashboard/members";
import { readCookie } from "../../../dashboard/security";
import { SSO_COOKIE, SSO_PENDING_MS, SsoClient, type SsoIdentity, SsoRefusal } from "../../../dashboard/sso";
import { type SsoTarget, ssoTarget } from "../../../dashboard/sso-map";
import { type Ctx, dashboardCtx, type RouteContext, redirect } from "../../session";
import { type DashboardDeps, page, SECURITY_HEADERS, startSession } from "./common";
import * as pages from "./pages";

/** the idempotency store's account a sign-in's state is claimed under (no account id looks like it) */
const STATE_CLAIMS = "sso-states";

const ssoCookie = (value: string, secure: boolean, maxAge: number) =>
  `${SSO_COOKIE}=${value}; Path=/dashboard/sso; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;

export function ssoRoutes(deps: DashboardDeps) {
  const sso = deps.config.sso;
  if (!sso) return new Elysia({ name: "dashboard-sso" });
  const client = new SsoClient(sso);
  const refused = (c: Ctx, err: unknown, operator: boolean) => {
    if (!(err instanceof SsoRefusal)) throw err;
    deps.logger.log("warn", "single sign-on refused", { request_id: c.state.requestId, client: c.client, reason: err.message });
    return page(
      deps,
      c,
      err.status,
      { title: "Single sign-on", flash: { kind: "error", text: err.message } },
      pages.ssoRefusedPage(operator),
      { "set-cookie": ssoCookie("", c.secure, 0) },
    );
  };
  return new Elysia({ name: "dashboard-sso" })
    .get("/dashboard/sso/start", async (context) => {
      const c = dashboardCtx(deps, context as RouteContext);
      const operator = (context.query as Record<string, string | undefined>).operator === "1";
      try {
        if (operator && !deps.config.adminToken)
          throw new SsoRefusal("The operator console is off on this gateway (no admin token is set).", 404);
        const { url, sealed } = await client.start(operator);
        return redirect(c, url, { "set-cookie": ssoCookie(sealed, c.secure, SSO_PENDING_MS / 1000) });
      } catch (err) {
        return refused(c, err, operator);
      }
    })
    .get("/dashboard/sso/callback", async (context) => {
      const c = dashboardCtx(deps, context as RouteContext);
      const pending = client.open(readCookie(c.request, SSO_COOKIE));
      try {
        if (!pending)
          throw new SsoRefusal(
            "This sign-in was not started in this browser, or took longer than ten minutes: start it again.",
            400,
          );
        const query = new URL(c.request.url).searchParams;
        if (query.get("state") !== pending.state && !query.get("error"))
          throw new SsoRefusal("The sign-in's state does not match the one this browser started: start it again.", 400);
        await claimState(deps, pending.state, c.state.requestId);
        const identity = await client.finish(query, pending);
        const target = ssoTarget(sso, identity, pending.operator);
        const to = await signIn(deps, c, target, identity);
        deps.logger.log("info", "single sign-on", {
          request_id: c.state.requestId,
          client: c.client,
          kind: to.session.kind,
          member: to.session.memberId ?? null,
        });
        const { cookie } = await startSession(deps, c, to.session, to.entry);
        c.state.status = 200;
        const headers = new Headers({
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-store",
          ...SECURITY_HEADERS,
          ...c.state.headers,
        });
        headers.append("set-cookie", ssoCookie("", c.secure, 0));
        headers.append("set-cookie", cookie);
        return new Response(pages.ssoDonePage(to.session.kind === "operator" ? "/dashboard/operator" : "/dashboard"), {
          headers,
        });
      } catch (err) {
        return refused(c, err, pending?.operator ?? false);
      }
    });
}

/** A sign-in's state is used once, on whichever node its callback lands (the idempotency store is shared as the nodes share it). */
async function claimState(deps: DashboardDeps, state: string, requestId: string): Promise<void> {
  const key = createHash("sha256").update(state).digest("hex");
  const begun = await deps.idempotency.begin(STATE_CLAIMS, key, "", requestId);
  if (begun.state !== "new") throw new SsoRefusal("This sign-in's state was already used: start it again.", 400);
  await deps.idempotency.complete(STATE_CLAIMS, key, { status: 204, body: "", headers: {} });
}

/** What each refusal of a single sign-on's member says (docs/sso.md). */
const MEMBER_REFUSALS = {
  other_account: (email: string) =>
    `${email} is already a member of another account of this gateway; an email belongs to one account.`,
  bound_elsewhere: (email: string) =>
    `${email} belongs to a member of this gateway who signs in as another identity of the identity provider, so this sign-in cannot be theirs. If the member's identity at the provider was replaced, ask the gateway's operator.`,
  unknown_account: (_email: string, account: string) =>
    `The account ${account} that sso.map names does not exist: ask the gateway's operator.`,
};

/**
 * The session a mapped identity opens, and its sign-in's audit entry: the operator's (its changes'
 * actor `operator:EMAIL`), or the member's (found by subject, made on first sign-in; its role kept
 * to the mapping's).
 */
async function signIn(deps: DashboardDeps, c: Ctx, target: SsoTarget, identity: SsoIdentity) {
  if (target.kind === "operator") {
    // the email names the operator only when it is verified (or trusted without the claim)
    const trusted =
      identity.emailVerified === true || (identity.emailVerified === null && deps.config.sso?.trustMissingEmailVerified);
    const who = { issuer: identity.issuer, subject: identity.sub, email: trusted ? identity.email : null };
    return {
      session: { kind: "operator" as const, accountId: null, actor: ssoOperatorActor(who) },
      entry: operatorSignInEntry(who, c.address),
    };
  }
  const email = identity.email as string;
  const login = { issuer: identity.issuer, subject: identity.sub, email, name: identity.name };
  const r = await deps.dashboard.ssoMember(target.accountId, login, target.role, Date.now(), c.address);
  if (!r.ok) throw new SsoRefusal(MEMBER_REFUSALS[r.reason](email, target.accountId));
  if (r.emailKept)
    deps.logger.log("warn", "single sign-on kept a member's email", {
      request_id: c.state.requestId,
      member: r.member.id,
      reason: `the identity provider now gives ${r.emailKept}, which another member has`,
    });
  let member = r.member;
  if (member.role !== target.role) {
    // the identity provider's groups decide the role at each sign-in, but never demote the last owner
    const changed = await deps.dashboard.setRole(target.accountId, member.id, target.role, { actor: "sso", client: c.address });
    if (changed.ok) member = changed.member;
    else
      deps.logger.log("warn", "single sign-on kept a role", {
        request_id: c.state.requestId,
        member: member.id,
        reason: changed.reason === "last_owner" ? LAST_OWNER : changed.reason,
      });
  }
  const who = { issuer: identity.issuer, subject: identity.sub, email: member.email };
  return {
    session: { kind: "account" as const, accountId: target.accountId, memberId: member.id },
    entry: memberSignInEntry(who, member, c.address),
  };
}
