/**
 * The Members page (every member reads it; owners invite, change roles and remove) and the page
 * an invitation's one-time link opens (public: the link is the credential), docs/teams.md.
 */
import { Elysia } from "elysia";
import { displayNameProblem } from "../../../auth/attributes";
import { hashPassword, passwordProblem } from "../../../auth/passwords";
import { ACCEPT_REFUSALS, type AcceptResult, invitationHash } from "../../../dashboard/members";
import { edgePlugin, type Holder } from "../../edge-plugin";
import { type Ctx, dashboardCtx, type RouteContext, redirect } from "../../session";
import { changed, inviteMember, joinPath, roleFrom } from "../members";
import { byHolder, type DashboardDeps, page, readForm, ssoOnly, ssoOnlyFlash, startSession, who } from "./common";
import { backTo, orBack, redirectWith, refillOf, shown, takeFlash } from "./forms";
import { html } from "./html";
import { joinPage, membersPage } from "./members-page";

const tokenOf = (query: Record<string, string | undefined>) => (typeof query.token === "string" ? query.token : "");
const joinGone = () => html`<p><a href="/dashboard/login">Sign in</a></p>`;

type Refusal = Exclude<AcceptResult, { ok: true }>["reason"];
const REFUSAL_STATUS: Record<Refusal, number> = { unknown: 404, expired: 410, used: 410, wrong_account: 403, taken: 409 };

/** The Members page for the signed-in member, with what its flash carries: an invitation just made (shown once) or a refusal. */
async function membersFor(deps: DashboardDeps, c: Ctx, h: Holder) {
  const list = await deps.dashboard.listMembers(h.accountId);
  const f = await takeFlash(deps, c);
  const once = f?.once;
  const invited = once?.url
    ? { email: once.email ?? "", role: roleFrom(once.role), url: once.url, expires_at: once.expires_at ?? "" }
    : null;
  return page(
    deps,
    c,
    f?.status ?? 200,
    { title: "Members", who: who(h.email, h.role), active: "/dashboard/members", flash: shown(f) },
    membersPage(list, {
      canManage: h.role === "owner",
      me: h.memberId,
      invited,
      refill: refillOf(f),
      ssoOnly: ssoOnly(deps, h.accountId),
    }),
  );
}

/** A role change or removal from the page: back to the list, saying why not when it was refused. */
function memberChange(deps: DashboardDeps, c: Ctx, change: () => Promise<unknown>) {
  return orBack(backTo(deps, c, "/dashboard/members"), async () => {
    await change();
    return redirect(c, "/dashboard/members");
  });
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
        return orBack(backTo(deps, c, "/dashboard/members", form, ["email", "role"]), async () => {
          const role = roleFrom(form.get("role"));
          const invited = await inviteMember(deps, h.accountId, form.get("email") ?? "", role, byHolder(c, h), c.origin);
          // the link is shown this once on the Members page; a reload invites nobody again
          const { email, url, expires_at } = invited;
          return redirectWith(deps, c, "/dashboard/members", {
            status: 200,
            kind: "ok",
            text: "",
            once: { email, role: invited.role, url, expires_at },
          });
        });
      },
      { session: owner, parse: "none" },
    )
    .post(
      "/dashboard/members/:id/role",
      async ({ c, holder: h, params }) => {
        const form = await readForm(deps, c);
        return memberChange(deps, c, async () =>
          changed(await store.setRole(h.accountId, params.id, roleFrom(form.get("role")), byHolder(c, h))),
        );
      },
      { session: owner, parse: "none" },
    )
    .post(
      "/dashboard/members/:id/remove",
      async ({ c, holder: h, params }) => {
        await readForm(deps, c);
        return memberChange(deps, c, async () => changed(await store.removeMember(h.accountId, params.id, byHolder(c, h))));
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
      const f = await takeFlash(deps, c);
      if (!r.inv) return refusal(c, r.reason);
      if (ssoOnly(deps, account)) return page(deps, c, 403, { ...o, flash: ssoOnlyFlash }, joinGone());
      return page(deps, c, f?.status ?? 200, { ...o, flash: shown(f) }, joinPage(r.inv, joinPath(account, token), refillOf(f)));
    })
    .post(
      "/dashboard/join/:account",
      async (context) => {
        const c = dashboardCtx(deps, context as RouteContext);
        const { account } = context.params;
        const token = tokenOf(context.query);
        const form = await readForm(deps, c);
        // refused, back to the link's page (it says why again: the link is checked there too)
        const back = backTo(deps, c, `/dashboard/join/${encodeURIComponent(account)}?token=${encodeURIComponent(token)}`, form, [
          "name",
        ]);
        const r = await check(account, token);
        if (!r.inv) return back(REFUSAL_STATUS[r.reason], ACCEPT_REFUSALS[r.reason]);
        if (ssoOnly(deps, account)) return back(403, ssoOnlyFlash.text);
        const password = form.get("password") ?? "";
        const passwordRefused = passwordProblem(password);
        if (passwordRefused) return back(400, passwordRefused, { focus: "password" });
        // an empty name is one not given; a longer one than a name holds is refused, never cut
        const name = (form.get("name") ?? "").trim() || null;
        const nameRefused = name === null ? null : displayNameProblem(name, "the name");
        if (nameRefused) return back(400, nameRefused, { focus: "name" });
        const done = await store.acceptInvitation(
          account,
          invitationHash(token),
          await hashPassword(password),
          name,
          Date.now(),
          c.address,
        );
        if (!done.ok) return back(REFUSAL_STATUS[done.reason], ACCEPT_REFUSALS[done.reason]);
        const { cookie } = await startSession(deps, c, { accountId: account, memberId: done.member.id, kind: "account" });
        return redirect(c, "/dashboard", { "set-cookie": cookie });
      },
      { parse: "none" },
    );
}
