/**
 * The audit trail's reads (docs/audit.md): every entry for the operator (`GET /admin/v1/audit`,
 * and the chain's check, `GET /admin/v1/audit/verify`), an account's own with one of its keys that
 * an owner or admin stands behind (`GET /api/v1/account/audit`, `readsAudit`); a page in the
 * envelope, or with `format=csv|json` every entry the filters match as a download. The dashboard's
 * pages are in dashboard/audit.ts.
 */
import { Elysia } from "elysia";
import type { AuditQuery } from "../../audit/interface";
import { exportFormat, exportHeaders, exportStream, parseAuditQuery, readAuditPage, withActorId } from "../../audit/query";
import type { KeyMaker } from "../../auth/interface";
import { AUDIT_FN } from "../../auth/policy";
import { roleAtLeast } from "../../dashboard/members";
import { GatewayError } from "../../errors";
import type { AppDeps } from "../deps";
import { edgePlugin } from "../edge-plugin";
import { ok } from "../respond";
import type { RequestState } from "../state";

const FILTERS = "limit, cursor, actor, action, since; format=csv or json: every entry they match, as a download";

/** Who may read an account's trail with a key: what a refused key is told. */
export const AUDIT_READERS =
  "the account's audit trail is readable only by its owners and admins: with a key made through the admin API or the CLI, or one made in the dashboard by a member who is now an owner or admin of the account";

/**
 * Whether a key may read its account's trail: one made with the admin API or the CLI (no member
 * made it), or one made in the dashboard by a member who is, now, an owner or admin of the account.
 */
export const readsAudit = (maker: KeyMaker | null): boolean =>
  maker !== null && (maker.memberId === null || (maker.role !== null && roleAtLeast(maker.role, "admin")));

/** The member id of an email, for an actor filter written as the dashboard shows a member (withActorId). */
export const memberIdOf =
  (deps: Pick<AppDeps, "dashboard">) =>
  async (email: string): Promise<string | null> =>
    (await deps.dashboard.loginByEmail(email))?.memberId ?? null;

/** A page in the envelope, or (`format`) the download of every entry the filters match. */
export async function auditAnswer(
  deps: Pick<AppDeps, "audit" | "dashboard">,
  state: RequestState,
  query: Record<string, string | undefined>,
  parsed: AuditQuery,
): Promise<Response> {
  const format = exportFormat(query.format);
  const q = await withActorId(parsed, memberIdOf(deps));
  const read = (x: AuditQuery) => deps.audit.page(x);
  if (!format) return ok(state, "audit entries", await readAuditPage(read, q));
  state.status = 200;
  return new Response(exportStream(read, q, format), { headers: { ...exportHeaders(format), ...state.headers } });
}

export function auditRoutes(deps: AppDeps) {
  const admin = new Elysia({ name: "admin-audit" })
    .use(edgePlugin(deps))
    .guard({ admin: true })
    .get("/admin/v1/audit", ({ state, query }) => auditAnswer(deps, state, query, parseAuditQuery(query, { admin: true })), {
      detail: {
        tags: ["Admin"],
        summary: `The audit trail of every account, newest first: every change of state made through the admin API, the CLI, the dashboard and the operator console (account_id, ${FILTERS})`,
        security: [{ bearer: [] }],
      },
    })
    .get("/admin/v1/audit/verify", async ({ state }) => ok(state, "audit chain checked", await deps.audit.verify()), {
      detail: {
        tags: ["Admin"],
        summary:
          "Walk the audit chain from its first entry to its head: ok, or its first broken link (a deleted or edited entry)",
        security: [{ bearer: [] }],
      },
    });
  const account = new Elysia({ name: "account-audit" })
    .use(edgePlugin(deps))
    // its own usage name: the trail holds members' emails, roles and client addresses, more than the
    // account's own figures, so a key whose allowed_functions leave it out is refused (403)
    .guard({ key: { fn: AUDIT_FN } })
    .onBeforeHandle(async ({ state, auth }) => {
      state.creditsRemaining = await deps.ledger.balance(auth.accountId);
      // the maker's role is read on every request: a demotion counts from the key's next read
      if (!readsAudit(await deps.keys.keyMaker(auth.keyId))) throw new GatewayError("forbidden", AUDIT_READERS);
    })
    .get(
      "/api/v1/account/audit",
      ({ state, auth, query }) =>
        auditAnswer(deps, state, query, { ...parseAuditQuery(query, { admin: false }), accountId: auth.accountId }),
      {
        detail: {
          tags: ["Account"],
          summary: `The calling account's audit trail, newest first (${FILTERS}); only with a key made through the admin API or the CLI, or by an owner or admin of the account in the dashboard (403 otherwise)`,
        },
      },
    );
  return new Elysia({ name: "audit" }).use(admin).use(account);
}
