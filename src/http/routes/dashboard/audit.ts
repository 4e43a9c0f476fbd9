/**
 * The Audit pages (docs/audit.md#the-dashboard): the signed-in account's own entries with their
 * CSV and JSON downloads, and the operator console's view of every entry.
 */
import { Elysia } from "elysia";
import type { AuditQuery } from "../../../audit/interface";
import {
  type ExportFormat,
  exportHeaders,
  exportStream,
  parseAuditQuery,
  readAuditPage,
  withActorId,
} from "../../../audit/query";
import { GatewayError } from "../../../errors";
import { edgePlugin } from "../../edge-plugin";
import type { Ctx } from "../../session";
import { memberIdOf } from "../audit";
import { type AuditFilters, auditPage } from "./audit-page";
import { type DashboardDeps, OPERATOR, page, SECURITY_HEADERS, who } from "./common";
import type { PageOpts } from "./pages";

/** The page's filters from its query string; the since as a datetime-local field shows it (UTC). */
function auditFilters(query: Record<string, string | undefined>, admin: boolean): { q: AuditQuery; filters: AuditFilters } {
  const q = parseAuditQuery({ ...query, limit: undefined }, { admin });
  const since = q.since === undefined ? "" : new Date(q.since).toISOString().slice(0, 19);
  const filters: AuditFilters = {
    actor: q.actor ?? "",
    action: q.action ?? "",
    since: since.endsWith(":00") ? since.slice(0, 16) : since,
  };
  if (admin) filters.account_id = q.accountId ?? "";
  return { q, filters };
}

/** The page at `path`, for one account (accountId) or every one (the operator's); a filter it refuses is a 400 page naming it. */
async function auditView(
  deps: DashboardDeps,
  c: Ctx,
  o: PageOpts,
  path: string,
  query: Record<string, string | undefined>,
  accountId?: string,
) {
  const admin = accountId === undefined;
  let parsed: ReturnType<typeof auditFilters>;
  try {
    parsed = auditFilters(query, admin);
  } catch (e) {
    if (!(e instanceof GatewayError) || e.status !== 400) throw e;
    const filters: AuditFilters = { actor: "", action: "", since: "", ...(admin ? { account_id: "" } : {}) };
    const body = auditPage({ path, entries: [], filters, nextCursor: null, firstPage: true, downloads: !admin });
    return page(deps, c, 400, { ...o, flash: { kind: "error", text: e.message } }, body);
  }
  const q = await withActorId(admin ? parsed.q : { ...parsed.q, accountId }, memberIdOf(deps));
  const { data, next_cursor } = await readAuditPage((x) => deps.audit.page(x), q);
  const body = auditPage({
    path,
    entries: data,
    filters: parsed.filters,
    nextCursor: next_cursor,
    firstPage: !q.beforeSeq,
    downloads: !admin,
    actorEmails: await memberEmails(deps, data),
  });
  return page(deps, c, 200, o, body);
}

/** The emails of the members among the entries' actors (a member's id reads as nobody to a person). */
async function memberEmails(deps: DashboardDeps, entries: { actor: string }[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const id of new Set(entries.map((e) => e.actor).filter((a) => a.startsWith("mem_")))) {
    const m = await deps.dashboard.memberById(id);
    if (m) out.set(id, m.email);
  }
  return out;
}

/** A download of the account's entries the filters match. */
async function auditDownload(
  deps: DashboardDeps,
  c: Ctx,
  accountId: string,
  query: Record<string, string | undefined>,
  format: ExportFormat,
) {
  const { q } = auditFilters({ ...query, cursor: undefined }, false);
  c.state.status = 200;
  const body = exportStream((x) => deps.audit.page(x), await withActorId({ ...q, accountId }, memberIdOf(deps)), format);
  return new Response(body, { headers: { ...exportHeaders(format), ...SECURITY_HEADERS, ...c.state.headers } });
}

export function auditPages(deps: DashboardDeps) {
  const app = new Elysia({ name: "dashboard-audit" })
    .use(edgePlugin(deps))
    .get(
      "/dashboard/audit",
      ({ c, holder: h, query }) =>
        auditView(
          deps,
          c,
          { title: "Audit", who: who(h.email, h.role), active: "/dashboard/audit" },
          "/dashboard/audit",
          query,
          h.accountId,
        ),
      { session: { role: "admin" } },
    )
    .get("/dashboard/audit.csv", ({ c, holder: h, query }) => auditDownload(deps, c, h.accountId, query, "csv"), {
      session: { role: "admin" },
    })
    .get("/dashboard/audit.json", ({ c, holder: h, query }) => auditDownload(deps, c, h.accountId, query, "json"), {
      session: { role: "admin" },
    });
  if (!deps.config.adminToken) return app;
  return app.get(
    "/dashboard/operator/audit",
    ({ c, query }) =>
      auditView(
        deps,
        c,
        { title: "Audit trail", who: OPERATOR, active: "/dashboard/operator/audit" },
        "/dashboard/operator/audit",
        query,
      ),
    { operator: true },
  );
}
