import { MAX_LABEL, MAX_NAME } from "../../../auth/attributes";
import type { KeyView } from "../../../auth/interface";
import { MIN_PASSWORD } from "../../../auth/passwords";
import { policySummary } from "../../../auth/policy";
import { MAX_REASON } from "../../../credits/amount";
import type { UsageFigures } from "../../../credits/interface";
import type { AccountSummary, LedgerRow } from "../../../dashboard/interface";
import { type Role, roleAtLeast } from "../../../dashboard/members";
import type { RequestLogEntry } from "../../../requestlog/interface";
import { barChart, breakableEmail, counted, type Html, html, noun, raw } from "./html";

export interface PageOpts {
  title: string;
  /** who is signed in: an account member's email (and role), "operator", or nobody */
  who?: { kind: "account" | "operator"; name: string; role?: Role } | null;
  active?: string;
  flash?: { kind: "ok" | "error"; text: string } | null;
  operatorEnabled?: boolean;
}

/** A refused form's fields, to fill it in again (never a secret: forms.ts), and the field to type in again. */
export interface Refill {
  /** the form's action, a path */
  action: string;
  fields: URLSearchParams;
  focus?: string;
}

const refillAt = (r: Refill | null | undefined, action: string) => (r && r.action === action.split("?")[0] ? r : null);
/** ` autofocus` on the field of the refused form at `action` to type in again */
export const focusOn = (r: Refill | null | undefined, action: string, name: string): Html =>
  refillAt(r, action)?.focus === name ? html` autofocus` : html``;
/** A field's ` value`: what the refused form at `action` sent, else `fallback`; and its focus. */
export const fieldValue = (r: Refill | null | undefined, action: string, name: string, fallback = ""): Html =>
  html` value="${refillAt(r, action)?.fields.get(name) ?? fallback}"${focusOn(r, action, name)}`;
/** The value a choice of the refused form at `action` had, else `fallback`. */
export const chosen = (r: Refill | null | undefined, action: string, name: string, fallback: string): string =>
  refillAt(r, action)?.fields.get(name) ?? fallback;
/** Whether the refused form at `action` had this box ticked. */
export const ticked = (r: Refill | null | undefined, action: string, name: string, value: string): boolean =>
  refillAt(r, action)?.fields.getAll(name).includes(value) ?? false;

const NAV: [string, string][] = [
  ["/dashboard", "Overview"],
  ["/dashboard/keys", "Keys"],
  ["/dashboard/ledger", "Ledger"],
  ["/dashboard/requests", "Requests"],
  ["/dashboard/audit", "Audit"],
  ["/dashboard/alerts", "Alerts"],
  ["/dashboard/playground", "Playground"],
  ["/dashboard/members", "Members"],
  ["/dashboard/password", "Password"],
];

/** The least role a page of the nav needs (docs/teams.md); the others are every member's. */
const NAV_ROLES: Record<string, Role> = {
  "/dashboard/requests": "developer",
  "/dashboard/playground": "developer",
  "/dashboard/audit": "admin",
  "/dashboard/alerts": "admin",
};
const navFor = (role: Role | undefined) => NAV.filter(([href]) => !role || roleAtLeast(role, NAV_ROLES[href] ?? "viewer"));

export function layout(o: PageOpts, body: Html): string {
  const nav =
    o.who?.kind === "account"
      ? navFor(o.who.role).map(
          ([href, name]) => html`<a href="${href}"${o.active === href ? html` aria-current="page"` : ""}>${name}</a>`,
        )
      : o.who?.kind === "operator"
        ? [
            html`<a href="/dashboard/operator"${o.active === "/dashboard/operator/audit" ? "" : html` aria-current="page"`}>Accounts and gateway</a>`,
            html`<a href="/dashboard/operator/audit"${o.active === "/dashboard/operator/audit" ? html` aria-current="page"` : ""}>Audit trail</a>`,
          ]
        : [];
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · Text-AI Gateway</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/dashboard/assets/app.css">
<script src="/dashboard/assets/app.js" defer></script></head>
<body><a class="skip" href="#main">Skip to content</a><header><a class="brand" href="/dashboard">Text-AI Gateway</a><nav aria-label="Main">${nav}</nav>
${o.who ? html`<form method="post" action="/dashboard/logout" class="signout"><span class="who">${o.who.name}</span><button type="submit">Sign out</button></form>` : ""}
</header><main id="main"><h1>${o.title}</h1>
${o.flash ? html`<p class="flash ${o.flash.kind}" role="${o.flash.kind === "error" ? "alert" : "status"}">${o.flash.text}</p>` : ""}
${body}</main></body></html>`}`;
}

/** How an account is made on this gateway, for the sign-in page: open sign-up, or the operator. */
const CLI_CREATE = "npx -y bun@1.4.5 src/cli.ts accounts create --email EMAIL";

/** The single sign-on button of a sign-in page (when `[sso]` is set): a link, the start is a GET. */
const ssoButton = (href: string) =>
  html`<p class="sso"><a class="button" href="${href}" data-testid="sso">Sign in with single sign-on</a></p>`;

export function signInPage(opts: { refill?: Refill | null; signup: boolean; operatorEnabled: boolean; sso?: boolean }): Html {
  const r = opts.refill;
  const a = "/dashboard/login";
  const links = [
    opts.signup ? html`<a href="/dashboard/signup">Create an account</a>` : null,
    opts.operatorEnabled ? html`<a href="/dashboard/operator/login">Operator sign-in</a>` : null,
  ].filter((l) => l !== null);
  return html`<form method="post" action="/dashboard/login" class="card narrow">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required${fieldValue(r, a, "email")}>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required${focusOn(r, a, "password")}>
<button type="submit">Sign in</button></form>
${opts.sso ? ssoButton("/dashboard/sso/start") : ""}
<p class="hint" id="how-accounts">${
    opts.signup
      ? "No account yet? Anyone may create one on this gateway."
      : html`No account yet? Accounts on this gateway are made by its operator: ask them for one. (Operator: <code>${CLI_CREATE}</code> with the password on standard input, the operator console, or <code>POST /admin/v1/accounts</code>.)`
  }</p>
${links.length ? html`<p class="links">${links.map((l, i) => (i ? html` · ${l}` : l))}</p>` : ""}`;
}

export function signUpPage(r?: Refill | null): Html {
  const a = "/dashboard/signup";
  return html`<form method="post" action="${a}" class="card narrow">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required${fieldValue(r, a, "email")}>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD}" required${focusOn(r, a, "password")}>
<button type="submit">Create account</button></form>
<p class="hint">You are signed in as soon as the account is made. <a href="/dashboard/login">Sign in</a> instead if you have one.</p>`;
}

export function operatorSignInPage(sso = false, r?: Refill | null): Html {
  const a = "/dashboard/operator/login";
  return html`<form method="post" action="${a}" class="card narrow">
<label for="token">Admin token</label><input id="token" name="token" type="password" autocomplete="off" required${focusOn(r, a, "token")}>
<button type="submit">Sign in</button></form>
${sso ? ssoButton("/dashboard/sso/start?operator=1") : ""}`;
}

/** A single sign-on refused: the reason is in the page's flash; the way back. */
export function ssoRefusedPage(operator: boolean): Html {
  const back = operator ? "/dashboard/operator/login" : "/dashboard/login";
  return html`<p class="hint">Nothing was signed in. <a href="${back}">Back to sign-in</a></p>`;
}

/**
 * A single sign-on done: the session's cookie is SameSite=Strict, and a browser sends none on a
 * redirect chain that began on the identity provider's site, so this page (same-site) moves on.
 */
export function ssoDonePage(to: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${to}"><title>Signed in</title></head><body><p>Signed in. <a href="${to}">Continue</a></p></body></html>`;
}

/**
 * What the month's call count is (the ledger's charges): the Requests page lists every request,
 * refused and failed ones too, so the count says which it counts wherever it is shown.
 */
const CHARGED_CALLS = "answered and charged, cache hits included";

export function overviewPage(u: UsageFigures): Html {
  const days = daysOfMonth(u);
  return html`<section class="figures" aria-label="This month">
<div class="figure"><span class="name">Balance</span><span class="value" data-testid="balance">${u.balance}</span><span class="unit">${noun(u.balance, "credit")}</span></div>
<div class="figure"><span class="name">Plan</span><span class="value" data-testid="plan">${u.plan}</span></div>
<div class="figure"><span class="name">Charged calls this month</span><span class="value" data-testid="requests">${u.requests}</span><span class="unit">${CHARGED_CALLS}; <a href="${requestsLink({ from: u.period.start.slice(0, 10) })}">every request</a></span></div>
<div class="figure"><span class="name">Credits used this month</span><span class="value" data-testid="credits-used">${u.credits_used}</span></div>
</section>
<h2>Credits used by day</h2>
${barChart(
  "Credits used by day this month",
  days.map((d) => ({ label: d.day.slice(8), value: d.credits_used, href: requestsLink({ from: d.day, to: nextDay(d.day) }) })),
)}
<h2>By function</h2>
${
  u.by_function.length
    ? html`${barChart(
        "Requests by function this month",
        u.by_function.map((f) => ({
          label: f.function,
          value: f.requests,
          href: requestsLink({ function: f.function, from: u.period.start.slice(0, 10) }),
        })),
      )}${dataTable({
        caption: `Usage by function, ${u.period.start.slice(0, 7)}`,
        rows: u.by_function,
        columns: [
          { head: "Function", cell: (f) => f.function },
          { head: "Requests", num: true, cell: (f) => f.requests },
          { head: "Credits", num: true, cell: (f) => f.credits },
          { head: "Cached", num: true, cell: (f) => f.cached },
          {
            head: "Tokens in / out",
            num: true,
            cell: (f) => (f.input_tokens || f.output_tokens ? `${f.input_tokens} / ${f.output_tokens}` : ""),
            shown: (f) => !!(f.input_tokens || f.output_tokens),
          },
        ],
      })}`
    : html`<p>No calls yet this month.</p>`
}`;
}

/**
 * A table column: its header and cell; `num` right-aligns it and keeps it on one line. A column
 * with `shown` is one whose rows may all be empty (no tokens for an account that only calls
 * functions, no provider for the offline engine): it is left out unless some row has a value.
 */
export interface Column<T> {
  head: string;
  cell: (row: T) => Html | string | number;
  num?: boolean;
  /** the cell's class (besides `num`): `nw` keeps it on one line, `any` lets it break anywhere */
  cls?: string;
  shown?: (row: T) => boolean;
}

/**
 * A table in its scroll container: the columns some row fills, each cell's content free to wrap
 * (long values truncate through `truncated`, with the full value in `title`). The container
 * scrolls only when the table cannot be narrower than the window (400 px); app.js makes it
 * focusable and named then, and app.css shades the edge that has more.
 */
export function dataTable<T>(o: {
  caption: string | Html;
  rows: T[];
  columns: Column<T>[];
  id?: string;
  rowAttrs?: (row: T) => Html;
}): Html {
  const cols = o.columns.filter((c) => !c.shown || o.rows.some(c.shown));
  const cls = (c: Column<T>) => [c.num ? "num" : "", c.cls ?? ""].filter(Boolean).join(" ");
  const td = (c: Column<T>, r: T) => (cls(c) ? html`<td class="${cls(c)}">${c.cell(r)}</td>` : html`<td>${c.cell(r)}</td>`);
  return html`<div class="scroll"><table${o.id ? html` id="${o.id}"` : ""}><caption>${o.caption}</caption>
<thead><tr>${cols.map((c) => html`<th scope="col"${c.num ? html` class="num"` : ""}>${c.head}</th>`)}</tr></thead>
<tbody>${o.rows.map((r) => html`<tr${o.rowAttrs ? o.rowAttrs(r) : ""}>${cols.map((c) => td(c, r))}</tr>\n`)}</tbody></table></div>`;
}

/** A value shown on one line, cut with an ellipsis past its room; the full value in its title (a tooltip). */
export const truncated = (text: string): Html => html`<span class="trunc" title="${text}">${text}</span>`;

/** The Requests page with these filters. */
export const requestsLink = (filters: Record<string, string>, path = "/dashboard/requests"): string => {
  const q = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== "")).toString();
  return q ? `${path}?${q}` : path;
};
const nextDay = (day: string) => new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10);

/** The filters of the Requests page, as the form and its links carry them. */
export interface RequestFilters {
  function: string;
  status: string;
  key_id: string;
  from: string;
  to: string;
}

const STATUS_CHOICES: [string, string][] = [
  ["", "any"],
  ["2xx", "2xx success"],
  ["4xx", "4xx refused"],
  ["5xx", "5xx failed"],
  ["400", "400"],
  ["401", "401"],
  ["402", "402"],
  ["403", "403"],
  ["404", "404"],
  ["429", "429"],
  ["499", "499"],
  ["502", "502"],
  ["503", "503"],
  ["504", "504"],
];

export function requestsPage(o: {
  entries: RequestLogEntry[];
  filters: RequestFilters;
  keys: { id: string; label: string; masked_key: string }[];
  functions: string[];
  nextCursor: string | null;
  firstPage: boolean;
}): Html {
  const f = o.filters;
  const statusChoices = STATUS_CHOICES.some(([v]) => v === f.status) ? STATUS_CHOICES : [...STATUS_CHOICES, [f.status, f.status]];
  const keyLabel = new Map(o.keys.map((k) => [k.id, k.label]));
  return html`<form method="get" action="/dashboard/requests" class="card filters" role="search" aria-label="Filter requests">
<div><label for="f-function">Function</label><input id="f-function" name="function" list="function-names" value="${f.function}" placeholder="any">
<datalist id="function-names">${o.functions.map((n) => html`<option value="${n}">`)}</datalist></div>
<div><label for="f-status">Status</label><select id="f-status" name="status">${statusChoices.map(
    ([v, label]) => html`<option value="${v}"${v === f.status ? html` selected` : ""}>${label}</option>`,
  )}</select></div>
<div><label for="f-key">Key</label><select id="f-key" name="key_id"><option value="">any</option>${o.keys.map(
    (k) => html`<option value="${k.id}"${k.id === f.key_id ? html` selected` : ""}>${k.label} (${k.masked_key})</option>`,
  )}${f.key_id && !keyLabel.has(f.key_id) ? html`<option value="${f.key_id}" selected>${f.key_id}</option>` : ""}</select></div>
<div><label for="f-from">From (UTC)</label><input id="f-from" name="from" type="datetime-local" value="${f.from}"></div>
<div><label for="f-to">To (UTC)</label><input id="f-to" name="to" type="datetime-local" value="${f.to}"></div>
<div class="actions"><button type="submit">Filter</button><a href="/dashboard/requests">Clear</a></div></form>
<p class="row"><a id="csv" href="${requestsLink({ ...f }, "/dashboard/requests.csv")}" download>Download CSV of these requests</a></p>
${dataTable({
  id: "requests-table",
  caption: `Requests${o.firstPage ? ", newest first" : ", older"}${o.entries.length ? "" : ": none match"}`,
  rows: o.entries,
  rowAttrs: (e) => html` data-request-id="${e.request_id}"`,
  columns: [
    {
      head: "Time (UTC)",
      cls: "nw",
      cell: (e) =>
        html`<a href="/dashboard/requests/${encodeURIComponent(e.request_id)}" title="${e.request_id}" aria-label="Request ${e.request_id} at ${whenSeconds(e.time)}">${whenSeconds(e.time)}</a>`,
    },
    { head: "Function", cell: (e) => e.function ?? "" },
    {
      head: "Status",
      cell: (e) =>
        html`<span class="code ${statusClass(e.status)}">${e.status}</span>${e.error_code ? html` <small>${e.error_code}</small>` : ""}`,
    },
    {
      head: "Key",
      cell: (e) => truncated(keyLabel.get(e.key_id) ?? (e.key_id.startsWith("dashboard:") ? "playground" : e.key_id)),
    },
    { head: "Credits", num: true, cell: (e) => e.credits },
    { head: "Latency", num: true, cell: (e) => `${e.latency_ms} ms` },
    { head: "Provider", cell: (e) => e.provider ?? "", shown: (e) => !!e.provider },
    { head: "Cache", cell: (e) => e.cache ?? "", shown: (e) => !!e.cache },
  ],
})}
<nav class="pager" aria-label="Request pages">${o.firstPage ? "" : html`<a href="${requestsLink({ ...f })}">Newest</a>`}
${o.nextCursor ? html`<a href="${requestsLink({ ...f, cursor: o.nextCursor })}" rel="next">Older</a>` : ""}</nav>`;
}

export function requestDetailPage(e: RequestLogEntry, keyLabel: string | null): Html {
  const row = (name: string, value: unknown) =>
    html`<dt>${name}</dt><dd>${value === null || value === undefined ? "—" : String(value)}</dd>`;
  return html`<p><a href="/dashboard/requests">← All requests</a></p>
<dl class="card detail" data-testid="request-detail">
${row("Request id", e.request_id)}${row("Time (UTC)", e.time)}${row("Method", e.method)}${row("Path", e.path)}
${row("Function", e.function)}${row("Status", e.status)}${row("Error code", e.error_code)}
${row("Key", keyLabel ? `${keyLabel} (${e.key_id})` : e.key_id)}${row("Provider", e.provider)}${row("Model", e.model)}
${row("Latency", `${e.latency_ms} ms`)}${row("Credits", e.credits)}${row("Cache", e.cache)}
${row("Prompt tokens", e.prompt_tokens)}${row("Completion tokens", e.completion_tokens)}
${row("Idempotent replay", e.idempotent_replay ? "yes" : "no")}${row("Guardrails", e.guardrails ? JSON.stringify(e.guardrails) : null)}
</dl><p>The gateway keeps the metadata of a request, never what was sent or answered.</p>`;
}

const statusClass = (status: number) => (status >= 500 ? "bad" : status >= 400 ? "warn" : "good");
const whenSeconds = (iso: string) => iso.slice(0, 19).replace("T", " ");

/** Every day of the month so far, the days without a ledger row as zero. */
function daysOfMonth(u: UsageFigures): UsageFigures["by_day"] {
  const byDay = new Map(u.by_day.map((d) => [d.day, d]));
  const out: UsageFigures["by_day"] = [];
  const start = new Date(u.period.start);
  const today = new Date().toISOString().slice(0, 10);
  for (let d = new Date(start); d.toISOString().slice(0, 10) <= today && out.length < 31; d.setUTCDate(d.getUTCDate() + 1)) {
    const day = d.toISOString().slice(0, 10);
    out.push(byDay.get(day) ?? { day, requests: 0, credits_used: 0, credits_granted: 0 });
  }
  return out;
}

/** A key's tags as the form shows and reads them: `region=eu, tier=gold`. */
const tagsText = (tags: Record<string, string> | null | undefined): string =>
  tags
    ? Object.entries(tags)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")
    : "";

/**
 * A key's policy form: its fields as they are; an empty field clears that limit. `narrowOnly`: the
 * account holder's form, which may only narrow (docs/key-policies.md).
 */
function policyForm(k: KeyView, action: string, narrowOnly: boolean, r?: Refill | null): Html {
  const p = k.policy;
  const id = (name: string) => `${name}-${k.id}`;
  // a refused change is shown open, with what was sent
  const field = (name: string, label: string, value: string, attrs: Html = html``) =>
    html`<label for="${id(name)}">${label}</label><input id="${id(name)}" name="${name}"${fieldValue(r, action, name, value)}${attrs}>`;
  return html`<details class="policy"${refillAt(r, action) ? html` open` : ""}><summary>Edit policy</summary><form method="post" action="${action}" class="card" data-key-policy="${k.id}">
${field("allowed_functions", "Allowed functions (comma-separated)", p.allowed_functions?.join(", ") ?? "", html` placeholder="any"`)}
${field("allowed_models", "Allowed models (* matches anything)", p.allowed_models?.join(", ") ?? "", html` placeholder="any"`)}
${field("rate_limit_per_minute", "Requests per minute per function", p.rate_limit_per_minute?.toString() ?? "", html` inputmode="numeric" placeholder="plan's limit"`)}
${field("monthly_credit_limit", "Credits per month", p.monthly_credit_limit?.toString() ?? "", html` inputmode="numeric" placeholder="no limit"`)}
${field("expires_at", "Expires at (ISO 8601, UTC)", p.expires_at ?? "", html` placeholder="never"`)}
${field("tags", "Tags (name=value, comma-separated: model groups' residency)", tagsText(p.tags), html` placeholder="none"`)}
${narrowOnly ? html`<p class="hint">You can only narrow a key here; to widen or clear a limit, ask the operator.</p>` : ""}
<button type="submit">Save policy</button></form></details>`;
}

export function keyTable(
  keys: KeyView[],
  revokeAction: (k: KeyView) => string,
  policy?: { action: (k: KeyView) => string; narrowOnly: boolean; refill?: Refill | null },
): Html {
  return html`<label for="key-filter">Filter keys</label><input id="key-filter" type="search" data-filter="keys-table" placeholder="label, key or status">
<div class="scroll"><table id="keys-table" class="sortable"><caption>API keys</caption><thead><tr>
<th scope="col" aria-sort="none"><button type="button" data-sort="0">Label</button></th>
<th scope="col" aria-sort="none"><button type="button" data-sort="1">Key</button></th>
<th scope="col" aria-sort="none"><button type="button" data-sort="2">Status</button></th>
<th scope="col" aria-sort="descending"><button type="button" data-sort="3">Created</button></th>
<th scope="col" aria-sort="none"><button type="button" data-sort="4">Last used</button></th>
<th scope="col" aria-sort="none"><button type="button" data-sort="5">Policy</button></th>
<th scope="col"><span class="sr">Actions</span></th></tr></thead><tbody>
${keys.map(
  (
    k,
  ) => html`<tr data-key-id="${k.id}"><td class="key-label">${truncated(k.label)}</td><td class="nw"><code>${k.masked_key}</code></td><td><span class="status ${k.status}">${k.status}</span></td>
<td class="nw" data-value="${k.created_at}">${when(k.created_at)}</td><td class="nw" data-value="${k.last_used_at ?? ""}">${k.last_used_at ? when(k.last_used_at) : "never"}</td>
<td class="policy-summary any" data-value="${policySummary(k.policy)}" data-text="${policySummary(k.policy)}">${policySummary(k.policy) === "-" ? "none" : policySummary(k.policy)}${
    policy && k.status === "active" ? policyForm(k, policy.action(k), policy.narrowOnly, policy.refill) : ""
  }</td>
<td>${
    k.status === "active"
      ? html`<form method="post" action="${revokeAction(k)}" data-confirm="Revoke the key “${k.label}” (${k.masked_key})? Every request with it will be refused."><button type="submit" class="danger" aria-label="Revoke" title="Revoke ${k.label}">Revoke</button></form>`
      : ""
  }</td></tr>`,
)}
</tbody></table></div>${keys.length ? "" : html`<p id="no-keys">No keys yet.</p>`}`;
}

export function keysPage(
  keys: KeyView[],
  created?: { key: string; label: string } | null,
  paging: { offset: number; size: number; more: boolean } = { offset: 0, size: keys.length, more: false },
  refill?: Refill | null,
): Html {
  const { offset, size, more } = paging;
  return html`<form method="post" action="/dashboard/keys" class="card" id="create-key">
<label for="label">Label</label><input id="label" name="label" required maxlength="${MAX_LABEL}" placeholder="e.g. production server"${fieldValue(refill, "/dashboard/keys", "label")}>
<button type="submit">Create key</button></form>
<div id="new-key" class="card secret"${created ? "" : html` hidden`} role="status">${
    created ? newKeyBox(created.key, created.label) : ""
  }</div>
${keyTable(keys, (k) => `/dashboard/keys/${encodeURIComponent(k.id)}/revoke`, {
  action: (k) => `/dashboard/keys/${encodeURIComponent(k.id)}/policy`,
  narrowOnly: true,
  refill,
})}
<nav class="pager" aria-label="Key pages">${offset > 0 ? html`<a href="/dashboard/keys?offset=${Math.max(0, offset - size)}" rel="prev">Newer</a>` : ""}
${more ? html`<a href="/dashboard/keys?offset=${offset + size}" rel="next">Older</a>` : ""}</nav>`;
}

export function newKeyBox(key: string, label: string): Html {
  return html`<p>Your new key “${truncated(label)}”. Copy it now: it is shown only this once.</p>
<p class="row"><code id="new-key-value">${key}</code><button type="button" data-copy="new-key-value">Copy</button></p>`;
}

export function ledgerPage(rows: LedgerRow[], page: number, pages: number, total: number): Html {
  return html`${dataTable({
    caption: `Credit ledger (${counted(total, "entry")}), page ${page} of ${pages}`,
    rows,
    columns: [
      { head: "When", cls: "nw", cell: (r) => when(r.created_at) },
      { head: "Kind", cell: (r) => r.kind },
      {
        head: "Amount",
        num: true,
        cell: (r) => html`<span class="${r.amount < 0 ? "neg" : "pos"}">${r.amount > 0 ? "+" : ""}${r.amount}</span>`,
      },
      { head: "Function or reason", cell: (r) => r.function ?? r.reason ?? "" },
      {
        head: "Tokens in / out",
        num: true,
        cell: (r) => (r.input_tokens === null ? "" : `${r.input_tokens} / ${r.output_tokens ?? 0}`),
        shown: (r) => r.input_tokens !== null,
      },
      {
        head: "Request",
        cls: "nw",
        // the whole id on a desktop, cut on a phone (in full in its title), linked to the request's details
        cell: (r) =>
          r.request_id
            ? html`<a class="trunc" href="/dashboard/requests/${encodeURIComponent(r.request_id)}" title="${r.request_id}"><code>${r.request_id}</code></a>`
            : "",
        shown: (r) => !!r.request_id,
      },
    ],
  })}
<nav class="pager" aria-label="Ledger pages">${page > 1 ? html`<a href="/dashboard/ledger?page=${page - 1}" rel="prev">Newer</a>` : ""}
${page < pages ? html`<a href="/dashboard/ledger?page=${page + 1}" rel="next">Older</a>` : ""}</nav>`;
}

export function passwordPage(r?: Refill | null): Html {
  const a = "/dashboard/password";
  return html`<form method="post" action="${a}" class="card narrow">
<label for="current">Current password</label><input id="current" name="current" type="password" autocomplete="current-password" required${focusOn(r, a, "current")}>
<label for="next">New password</label><input id="next" name="next" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD}" required${focusOn(r, a, "next")}>
<button type="submit">Change password</button></form>
<p>Changing the password signs out every other browser.</p>`;
}

export function operatorPage(accounts: AccountSummary[], q: string, plans: string[], r?: Refill | null): Html {
  const a = "/dashboard/operator/accounts";
  const plan = chosen(r, a, "plan", "free");
  return html`<section><h2>Gateway</h2><div id="gateway-state" data-src="/dashboard/api/operator/state"><p>Loading the gateway's state…</p></div></section>
<section><h2>Accounts</h2>
<form method="get" action="/dashboard/operator" class="row" role="search"><label for="q">Search accounts</label><input id="q" name="q" type="search" value="${q}"><button type="submit">Search</button></form>
${dataTable({
  caption: counted(accounts.length, "account"),
  rows: accounts,
  columns: [
    {
      head: "Account",
      cell: (a) => html`<a href="/dashboard/operator/accounts/${encodeURIComponent(a.id)}">${a.name ?? a.id}</a>`,
    },
    { head: "Email", cell: (a) => (a.email ? breakableEmail(a.email) : "no login") },
    { head: "Plan", cell: (a) => a.plan },
    { head: "Balance", num: true, cell: (a) => a.balance },
    { head: "Created", cls: "nw", cell: (a) => when(a.created_at) },
  ],
})}</section>
<section><h2>Create an account</h2>
<form method="post" action="${a}" class="card">
<label for="new-email">Email</label><input id="new-email" name="email" type="email" autocomplete="off" required${fieldValue(r, a, "email")}>
<label for="new-password">Password</label><input id="new-password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD}" required${focusOn(r, a, "password")}>
<label for="new-name">Name</label><input id="new-name" name="name" maxlength="${MAX_NAME}"${fieldValue(r, a, "name")}>
<label for="new-plan">Plan</label><select id="new-plan" name="plan">${plans.map((p) => html`<option${p === plan ? html` selected` : ""}>${p}</option>`)}</select>
<label for="new-credits">Credits</label><input id="new-credits" name="credits" type="number" min="0" step="1" placeholder="welcome credits"${fieldValue(r, a, "credits")}>
<button type="submit">Create account</button></form></section>`;
}

export function operatorAccountPage(
  a: AccountSummary,
  u: UsageFigures,
  keys: KeyView[],
  plans: string[],
  r?: Refill | null,
): Html {
  const grant = `/dashboard/operator/accounts/${encodeURIComponent(a.id)}/credits`;
  return html`<p><a href="/dashboard/operator">← All accounts</a></p>
<section class="figures" aria-label="Account"><div class="figure"><span class="name">Email</span><span class="value small">${a.email ?? "no login"}</span></div>
<div class="figure"><span class="name">Balance</span><span class="value" data-testid="balance">${a.balance}</span></div>
<div class="figure"><span class="name">Plan</span><span class="value">${a.plan}</span></div>
<div class="figure"><span class="name">Charged calls this month</span><span class="value">${u.requests}</span><span class="unit">${CHARGED_CALLS}</span></div></section>
<div class="grid2"><form method="post" action="${grant}" class="card">
<label for="amount">Credits to grant</label><input id="amount" name="amount" type="number" step="1" required${fieldValue(r, grant, "amount")}>
<label for="reason">Reason</label><input id="reason" name="reason" maxlength="${MAX_REASON}"${fieldValue(r, grant, "reason")}>
<button type="submit">Grant credits</button></form>
<form method="post" action="/dashboard/operator/accounts/${encodeURIComponent(a.id)}/plan" class="card">
<label for="plan">Plan</label><select id="plan" name="plan">${plans.map((p) => html`<option${p === a.plan ? html` selected` : ""}>${p}</option>`)}</select>
<button type="submit">Change plan</button></form></div>
<h2>Keys</h2>${keyTable(keys, (k) => `/dashboard/operator/keys/${encodeURIComponent(k.id)}/revoke`, {
    action: (k) => `/dashboard/operator/keys/${encodeURIComponent(k.id)}/policy`,
    narrowOnly: false,
    refill: r,
  })}`;
}

export function playgroundPage(
  names: string[],
  chosen: { name: string; path: string; inPath: string[]; summary: string; cost: number; schema: unknown; example: unknown },
  origin: string,
): Html {
  return html`<form method="get" action="/dashboard/playground" class="row"><label for="fn">Function</label>
<select id="fn" name="fn">${names.map((n) => html`<option value="${n}"${n === chosen.name ? html` selected` : ""}>${n}</option>`)}</select>
<button type="submit">Choose</button></form>
<p>${chosen.summary}. Costs ${counted(chosen.cost, "credit")} per successful call, charged to this account.</p>
<form id="playground" class="card" data-fn="${chosen.name}" data-path="${chosen.path}" data-in-path="${chosen.inPath.join(" ")}" data-origin="${origin}">
<div id="fields"></div><button type="submit">Run</button></form>
<script type="application/json" id="fn-schema">${raw(jsonForScript({ schema: chosen.schema, example: chosen.example }))}</script>
<h2>curl</h2><pre id="curl"></pre>
<h2>Answer</h2><pre id="envelope" aria-live="polite">Run the function to see its envelope.</pre>`;
}

const jsonForScript = (v: unknown) => JSON.stringify(v).replace(/</g, "\\u003c");

const when = (iso: string) => iso.slice(0, 16).replace("T", " ");
