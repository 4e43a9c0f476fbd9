/**
 * Members of an account (docs/teams.md): the operations the admin API, the dashboard's Members
 * page and the CLI share (an invitation's one-time URL, a role change, a removal, each refusal in
 * the envelope), and the admin API's routes under /admin/v1/accounts/:id/members.
 */
import { Type as T } from "@sinclair/typebox";
import type { AuditBy } from "../../audit/interface";
import { emailProblem } from "../../auth/passwords";
import type { DashboardStore } from "../../dashboard/interface";
import {
  isRole,
  LAST_OWNER,
  type MemberChange,
  memberView,
  NOT_AN_OWNER,
  newInvitationToken,
  ROLES,
  type Role,
} from "../../dashboard/members";
import { requestOrigin } from "../../dashboard/security";
import { GatewayError } from "../../errors";
import type { AppDeps } from "../deps";
import { ok } from "../respond";
import type { RouteContext } from "../session";
import { adminBody, adminFamily, byToken } from "./admin";

type MemberDeps = { dashboard: DashboardStore; config: Pick<AppDeps["config"], "dashboard" | "sso"> };

/**
 * An account that requires single sign-on (`[sso] sso_required`) takes no invitation: its link
 * could never be used (the join page refuses a password of its members), and the identity
 * provider's groups make its members. Said to every way in (admin API, CLI, Members page).
 */
export const SSO_NO_INVITATION =
  "this account requires single sign-on (sso_required) and takes no invitation: its members are made at their first sign-in by the identity provider's groups (sso.map)";

const RoleSchema = T.Union(
  ROLES.map((r) => T.Literal(r)),
  { description: "owner, admin, developer or viewer" },
);
const Invite = T.Object({ email: T.String({ minLength: 3, maxLength: 254 }), role: RoleSchema });
const ChangeRole = T.Object({ role: RoleSchema });

/**
 * The path of an invitation's link (its token is shown only in this URL, once). The token is in the
 * query, never the path: the gateway's log lines and traces carry a request's path only.
 */
export const joinPath = (accountId: string, token: string) => `/dashboard/join/${accountId}?token=${token}`;

/** A role from a form or the CLI: 400 naming the field when it is none. */
export function roleFrom(v: unknown, param = "role"): Role {
  if (!isRole(v)) throw new GatewayError("invalid_request", `role must be one of ${ROLES.join(", ")}`, { param });
  return v;
}

/** Invites `email` to the account with `role`: the one-time URL (under `origin`) and when it expires. */
export async function inviteMember(deps: MemberDeps, accountId: string, email: string, role: Role, by: AuditBy, origin: string) {
  const e = email.trim().toLowerCase();
  const problem = emailProblem(e);
  if (problem) throw new GatewayError("invalid_request", problem, { param: "email" });
  if (deps.config.sso?.ssoRequired.has(accountId)) throw new GatewayError("conflict", SSO_NO_INVITATION);
  const { token, hash } = newInvitationToken();
  const expiresAt = Date.now() + deps.config.dashboard.invitationHours * 3_600_000;
  const r = await deps.dashboard.invite(accountId, e, role, hash, expiresAt, by);
  if (!r.ok && r.reason === "forbidden") throw new GatewayError("forbidden", NOT_AN_OWNER);
  if (!r.ok)
    throw r.reason === "unknown_account"
      ? new GatewayError("not_found", "account not found")
      : new GatewayError("conflict", "this email already belongs to a member", { param: "email" });
  return {
    id: r.id,
    account_id: accountId,
    email: e,
    role,
    url: `${origin}${joinPath(accountId, token)}`,
    expires_at: new Date(r.expiresAt).toISOString(),
  };
}

/** A role change's or a removal's result, its refusals as errors (the last owner: 409). */
export function changed(r: MemberChange) {
  if (r.ok) return memberView(r.member);
  if (r.reason === "forbidden") throw new GatewayError("forbidden", NOT_AN_OWNER);
  throw r.reason === "not_found"
    ? new GatewayError("not_found", "member not found")
    : new GatewayError("conflict", LAST_OWNER, { param: "member_id" });
}

/** The admin API's origin, for an invitation's URL (behind a trusted proxy, the one it forwards). */
function originOf(deps: Pick<AppDeps, "config">, context: RouteContext): string {
  const peer = context.server?.requestIP(context.request)?.address ?? null;
  return requestOrigin(context.request, peer, deps.config.dashboard.trustedProxies).origin;
}

const detail = (summary: string) => ({ tags: ["Admin"], summary, security: [{ bearer: [] }] });

/** The admin API's member routes. */
export function adminMembers(deps: AppDeps) {
  const body = adminBody(deps.config);
  const store = deps.dashboard;
  const known = async (id: string) => {
    if (!(await deps.keys.getAccount(id))) throw new GatewayError("not_found", "account not found");
  };
  return adminFamily(deps, "admin-members")
    .post(
      "/admin/v1/accounts/:id/members",
      async (context) => {
        const b = await body(context.request, Invite);
        const inv = await inviteMember(deps, context.params.id, b.email, b.role, byToken(deps, context), originOf(deps, context));
        return ok(context.state, "member invited; the invitation URL is shown only in this response", inv, 201);
      },
      { parse: "none", detail: detail("Invite a member ({email, role}): answers the one-time invitation url and expires_at") },
    )
    .get(
      "/admin/v1/accounts/:id/members",
      async ({ state, params }) => {
        await known(params.id);
        return ok(state, "members", { data: (await store.listMembers(params.id)).map(memberView) });
      },
      { detail: detail("An account's members and their roles") },
    )
    .patch(
      "/admin/v1/accounts/:id/members/:member_id",
      async (context) => {
        const { params } = context;
        const b = await body(context.request, ChangeRole);
        const r = await store.setRole(params.id, params.member_id, b.role, byToken(deps, context));
        return ok(context.state, "role changed", changed(r));
      },
      { parse: "none", detail: detail("Change a member's role ({role}); the last owner is never demoted (409)") },
    )
    .delete(
      "/admin/v1/accounts/:id/members/:member_id",
      async (context) => {
        const { params } = context;
        const r = await store.removeMember(params.id, params.member_id, byToken(deps, context));
        return ok(context.state, "member removed", changed(r));
      },
      { detail: detail("Remove a member and end its sessions; the last owner is never removed (409)") },
    );
}
