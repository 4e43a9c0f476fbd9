/**
 * The Audit page (docs/audit.md#the-dashboard), the account holder's and the operator console's:
 * its filters, the CSV and JSON downloads of what they match, the entries with their changes, and
 * the pager.
 */
import { AUDIT_ACTIONS, type AuditEntry } from "../../../audit/interface";
import { type Html, html } from "./html";
import { dataTable, requestsLink, truncated } from "./pages";

/** The filters as the form and its links carry them (`account_id` on the operator's page only). */
export interface AuditFilters {
  account_id?: string;
  actor: string;
  action: string;
  since: string;
}

const shown = (v: unknown): string => (v === null || v === undefined ? "—" : typeof v === "string" ? v : JSON.stringify(v));

/** An entry's changes, a line per field: `field: before → after` (a creation: `field: value`). */
function changes(e: AuditEntry): Html {
  const keys = [...new Set([...Object.keys(e.before ?? {}), ...Object.keys(e.after ?? {})])].sort();
  if (keys.length === 0) return html`<span class="muted">no field changed</span>`;
  return html`<ul class="changes">${keys.map((k) => {
    const after = shown(e.after?.[k]);
    return e.before === null
      ? html`<li><b>${k}</b>: ${truncated(after)}</li>`
      : html`<li><b>${k}</b>: ${truncated(shown(e.before?.[k]))} → ${truncated(after)}</li>`;
  })}</ul>`;
}

/** The Audit page at `path` (/dashboard/audit, /dashboard/operator/audit). */
export function auditPage(o: {
  path: string;
  entries: AuditEntry[];
  filters: AuditFilters;
  nextCursor: string | null;
  firstPage: boolean;
  /** where the downloads are (the account's page only; the operator's are the admin API's) */
  downloads: boolean;
  /** members' emails by id: an actor that is a member reads as its email (its id in the title) */
  actorEmails?: ReadonlyMap<string, string>;
}): Html {
  const f = { ...o.filters } as Record<string, string>;
  const operator = o.filters.account_id !== undefined;
  return html`<form method="get" action="${o.path}" class="card filters" role="search" aria-label="Filter audit entries">
${operator ? html`<div><label for="f-account">Account</label><input id="f-account" name="account_id" value="${o.filters.account_id}" placeholder="any"></div>` : ""}
<div><label for="f-actor">Actor</label><input id="f-actor" name="actor" value="${o.filters.actor}" placeholder="any"></div>
<div><label for="f-action">Action</label><input id="f-action" name="action" list="audit-actions" value="${o.filters.action}" placeholder="any">
<datalist id="audit-actions">${AUDIT_ACTIONS.map((a) => html`<option value="${a}">`)}</datalist></div>
<div><label for="f-since">Since (UTC)</label><input id="f-since" name="since" type="datetime-local" value="${o.filters.since}"></div>
<div class="actions"><button type="submit">Filter</button><a href="${o.path}">Clear</a></div></form>
${
  o.downloads
    ? html`<p class="row"><a id="audit-csv" href="${requestsLink(f, `${o.path}.csv`)}" download>Download CSV</a> · <a id="audit-json" href="${requestsLink(f, `${o.path}.json`)}" download>Download JSON</a></p>`
    : ""
}
${dataTable({
  id: "audit-table",
  caption: `Audit entries${o.firstPage ? ", newest first" : ", older"}${o.entries.length ? "" : ": none match"}`,
  rows: o.entries,
  rowAttrs: (e) => html` data-seq="${e.seq}" data-action="${e.action}"`,
  columns: [
    { head: "Time (UTC)", cls: "nw", cell: (e) => html`<span title="${e.id}">${e.time.slice(0, 19).replace("T", " ")}</span>` },
    {
      head: "Actor",
      cell: (e) => {
        const email = o.actorEmails?.get(e.actor);
        return email ? html`<span class="trunc" title="${e.actor}">${email}</span>` : truncated(e.actor);
      },
    },
    { head: "Account", cell: (e) => truncated(e.account_id ?? "—"), shown: () => operator },
    { head: "Action", cell: (e) => html`<code>${e.action}</code>` },
    { head: "Target", cell: (e) => truncated(e.target_id ?? "—") },
    { head: "Changes", cls: "any", cell: changes },
    { head: "Client", cell: (e) => e.client ?? "—" },
    { head: "Entry", num: true, cell: (e) => html`<span title="sha-256 ${e.hash}">#${e.seq}</span>` },
  ],
})}
<nav class="pager" aria-label="Audit pages">${o.firstPage ? "" : html`<a href="${requestsLink(f, o.path)}">Newest</a>`}
${o.nextCursor ? html`<a href="${requestsLink({ ...f, cursor: o.nextCursor }, o.path)}" rel="next">Older</a>` : ""}</nav>`;
}
