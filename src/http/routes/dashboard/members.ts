/**
 * The Members page (every member reads it; owners invite, change roles and remove) and the page
 * an invitation's one-time link opens (public: the link is the credential), docs/teams.md.
 */
import { Elysia } from "elysia";
import { displayNameProblem } from "../../../auth/attributes";
import { hashPassword, passwordProblem } from "../../../auth/passwords";
import { ACCEPT_REFUSALS, type AcceptResult, invitationHash } from "../../../dashboard/members";
import { GatewayError } from "../../../errors";
import { edgePlugin, type Holder } from "../../edge-plugin";
import { type Ctx, dashboardCtx, type RouteContext, redirect } from "../../session";
import { changed, inviteMember, joinPath, roleFrom } from "../members";
import { byHolder, type DashboardDeps, page, readForm, refused, ssoOnly, ssoOnlyFlash, startSession, who } from "./common";
import { html } from "./html";
import { joinPage, membersPage } from "./members-page";

const tokenOf = (query: Record<string, string | undefined>) => (typeof query.token === "string" ? query.token : "");
const joinGone = () => html`<p><a href="/dashboard/login">Sign in</a></p>`;

type Refusal = Exclude<AcceptResult, { ok: true }>["reason"];
const REFUSAL_STATUS: Record<Refusal, number> = { unknown: 404, expired: 410, used: 410, wrong_account: 403, taken: 409 };

/** The Members page for the signed-in member, with an invitation just made or a refusal. */
async function membersFor(
  deps: DashboardDeps,
  c: Ctx,
  h: Holder,
  status = 200,
  extra: { invited?: Parameters<typeof membersPage>[1]["invited"]; error?: string } = {},
) {
  const list = await deps.dashboard.listMembers(h.accountId);
  return page(
    deps,
    c,
    status,
    { title: "Members", who: who(h.email, h.role), active: "/dashboard/members", flash: refused(extra.error) },
    membersPage(list, { canManage: h.role === "owner", me: h.memberId, invited: extra.invited ?? null }),
  );
}

/** A role change or removal from the page: back to the list, or the list again saying why not. */
async function memberChange(deps: DashboardDeps, c: Ctx, h: Holder, change: () => Promise<unknown>) {
  try {
    await change();
  } catch (e) {
    if (e instanceof GatewayError && [400, 403, 404, 409].includes(e.status))
      return membersFor(deps, c, h, e.status, { error: e.message });
    throw e;
  }
  return redirect(c, "/dashboard/members");
}

export function memberPages(deps: DashboardDeps) {
  const store = deps.dashboard;
  const owner = { origin: true, role: "owner" as const };
  return new Elysia({ name: "dashboard-members" })
    .use(edgePlugin(deps))
    .get("/dashboard/members", ({ c, holder: h }) => membersFor(deps, c, h), { session: true })
    .post(
      "/dashboard/members",
      async ({ c, holder: h }) => {
        const form = await readForm(deps, c);
        try {
          const role = roleFrom(form.get("role"));
          const invited = await inviteMember(deps, h.accountId, form.get("email") ?? "", role, byHolder(c, h), c.origin);
          return membersFor(deps, c, h, 201, { invited });
        } catch (e) {
          if (e instanceof GatewayError && [400, 403, 409].includes(e.status))
            return membersFor(deps, c, h, e.status, { error: e.message });
          throw e;
        }
      },
      { session: owner, parse: "none" },
    )
    .post(
      "/dashboard/members/:id/role",
      async ({ c, holder: h, params }) => {
        const form = await readForm(deps, c);
        return memberChange(deps, c, h, async () =>
          changed(await store.setRole(h.accountId, params.id, roleFrom(form.get("role")), byHolder(c, h))),
        );
      },
      { session: owner, parse: "none" },
    )
    .post(
      "/dashboard/members/:id/remove",
      async ({ c, holder: h, params }) => {
        await readForm(deps, c);
        return memberChange(deps, c, h, async () => changed(await store.removeMember(h.accountId, params.id, byHolder(c, h))));
      },
      { session: owner, parse: "none" },
    );
}

/** The invitation's link: the form to join, or a page saying why the link no longer works. */
export function joinPages(deps: DashboardDeps) {
  const store = deps.dashboard;
  const o = { title: "Join an account" };
  const refusal = (c: Ctx, reason: Refusal) =>
    page(deps, c, REFUSAL_STATUS[reason], { ...o, flash: { kind: "error", text: ACCEPT_REFUSALS[reason] } }, joinGone());
  /** What the link is, or why it does not work (the store decides again when it is used). */
  const check = async (accountId: string, token: string) => {
    const inv = token.length <= 100 ? await store.invitationOf(invitationHash(token)) : null;
    if (!inv) return { reason: "unknown" as const };
    if (inv.accountId !== accountId) return { reason: "wrong_account" as const };
    if (inv.usedAt !== null) return { reason: "used" as const };
    if (inv.expiresAt <= Date.now()) return { reason: "expired" as const };
    return { inv };
  };
  return new Elysia({ name: "dashboard-join" })
    .get("/dashboard/join/:account", async (context) => {
      const c = dashboardCtx(deps, context as RouteContext);
      const { account } = context.params;
      const token = tokenOf(context.query);
      const r = await check(account, token);
      if (!r.inv) return refusal(c, r.reason);
      if (ssoOnly(deps, account)) return page(deps, c, 403, { ...o, flash: ssoOnlyFlash }, joinGone());
      return page(deps, c, 200, o, joinPage(r.inv, joinPath(account, token)));
    })
    .post(
      "/dashboard/join/:account",
      async (context) => {
        const c = dashboardCtx(deps, context as RouteContext);
        const { account } = context.params;
        const token = tokenOf(context.query);
        const form = await readForm(deps, c);
        const r = await check(account, token);
        if (!r.inv) return refusal(c, r.reason);
        if (ssoOnly(deps, account)) return page(deps, c, 403, { ...o, flash: ssoOnlyFlash }, joinGone());
        const password = form.get("password") ?? "";
        // an empty name is one not given; a longer one than a name holds is refused, never cut
        const name = (form.get("name") ?? "").trim() || null;
        const problem = passwordProblem(password) ?? (name === null ? null : displayNameProblem(name, "the name"));
        if (problem)
          return page(deps, c, 400, { ...o, flash: { kind: "error", text: problem } }, joinPage(r.inv, joinPath(account, token)));
        const done = await store.acceptInvitation(
          account,
          invitationHash(token),
          await hashPassword(password),
          name,
          Date.now(),
          c.address,
        );
        if (!done.ok) return refusal(c, done.reason);
        const cookie = await startSession(deps, c, { accountId: account, memberId: done.member.id, kind: "account" });
        return redirect(c, "/dashboard", { "set-cookie": cookie });
      },
      { parse: "none" },
    );
}
