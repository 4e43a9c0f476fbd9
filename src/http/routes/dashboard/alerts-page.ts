/**
 * The Alerts page (docs/alerts.md): the signed-in account's webhook endpoints, each with its recent
 * deliveries and a button to send one again, a form to add one, and the secret of one just made or
 * rotated, shown this once.
 */
import { ALERT_EVENTS, type DeliveryView, GATEWAY_EVENTS, type WebhookEndpoint } from "../../../alerts/interface";
import { MAX_WEBHOOK_URL } from "../../../alerts/sign";
import { counted, type Html, html } from "./html";
import { chosen, dataTable, fieldValue, type Refill, ticked, truncated } from "./pages";

/** an account's events (docs/alerts.md#events): the operator's endpoints take the provider.* ones */
const ACCOUNT_EVENTS = ALERT_EVENTS.filter((e) => !GATEWAY_EVENTS.has(e));
const path = (e: WebhookEndpoint, rest: string) => `/dashboard/alerts/${encodeURIComponent(e.id)}/${rest}`;
const time = (iso: string | null) => (iso ? iso.slice(0, 19).replace("T", " ") : "—");

function deliveriesTable(e: WebhookEndpoint, list: DeliveryView[]): Html {
  return dataTable({
    id: `deliveries-${e.id}`,
    caption: `Recent deliveries${list.length ? ", newest first" : ": none yet"}`,
    rows: list,
    rowAttrs: (d) => html` data-status="${d.status}"`,
    columns: [
      { head: "Time (UTC)", cls: "nw", cell: (d) => time(d.created) },
      { head: "Event", cell: (d) => html`<code>${d.type}</code>` },
      { head: "Id", cell: (d) => truncated(d.event_id) },
      { head: "Status", cell: (d) => html`<span class="status-${d.status}">${d.status}</span>` },
      { head: "Attempts", num: true, cell: (d) => String(d.attempts) },
      { head: "Last answer", cell: (d) => (d.last_status_code === null ? (d.last_error ?? "—") : String(d.last_status_code)) },
      {
        head: "",
        cell: (d) =>
          html`<form method="post" action="${path(e, `deliveries/${encodeURIComponent(d.id)}/resend`)}"><button type="submit" class="small">Resend</button></form>`,
      },
    ],
  });
}

function endpointCard(e: WebhookEndpoint, list: DeliveryView[]): Html {
  const thresholds = [
    e.balance_below !== null ? `balance under ${e.balance_below}` : "",
    e.spike_factor !== null ? `spike ×${e.spike_factor}` : "",
    e.expiring_days !== null ? `expiring in ${counted(e.expiring_days, "day")}` : "",
  ].filter(Boolean);
  return html`<section class="card endpoint" data-endpoint="${e.id}" aria-label="Endpoint ${e.url}">
<h2>${truncated(e.url)}</h2>
<p><code>${e.id}</code> · ${e.events.map((x) => html`<code>${x}</code> `)}${thresholds.length ? html` · ${thresholds.join(", ")}` : ""} · ${e.format}${
    e.previous_secret_valid_until ? html` · previous secret valid until ${time(e.previous_secret_valid_until)} UTC` : ""
  }</p>
<div class="row"><form method="post" action="${path(e, "rotate")}"><button type="submit">Rotate secret</button></form>
<form method="post" action="${path(e, "remove")}" data-confirm="Remove this endpoint?"><button type="submit" class="danger">Remove</button></form></div>
${deliveriesTable(e, list)}
</section>`;
}

export function alertsPage(o: {
  endpoints: { endpoint: WebhookEndpoint; deliveries: DeliveryView[] }[];
  /** a secret just made or rotated: shown this once */
  secret?: { id: string; secret: string } | null;
  /** a refused endpoint's fields, to fill the form in again */
  refill?: Refill | null;
}): Html {
  const r = o.refill;
  const a = "/dashboard/alerts";
  const slack = chosen(r, a, "format", "json") === "slack";
  return html`<form method="post" action="${a}" class="card" id="add-endpoint">
<label for="url">Webhook URL</label><input id="url" name="url" type="url" required maxlength="${MAX_WEBHOOK_URL}" placeholder="https://hooks.example.com/textai"${fieldValue(r, a, "url")}>
<fieldset><legend>Events</legend>${ACCOUNT_EVENTS.map(
    (e) =>
      html`<label class="check"><input type="checkbox" name="events" value="${e}"${ticked(r, a, "events", e) ? " checked" : ""}> <code>${e}</code></label>`,
  )}</fieldset>
<label for="balance_below">Balance under (for balance.low)</label><input id="balance_below" name="balance_below" type="number" min="1"${fieldValue(r, a, "balance_below")}>
<label for="expiring_days">Days before a key expires (for key.expiring)</label><input id="expiring_days" name="expiring_days" type="number" min="1" max="365"${fieldValue(r, a, "expiring_days")}>
<label for="spike_factor">Times the hourly mean (for spend.spike)</label><input id="spike_factor" name="spike_factor" type="number" min="1" max="1000"${fieldValue(r, a, "spike_factor")}>
<label for="format">Format</label><select id="format" name="format"><option value="json">JSON</option><option value="slack"${slack ? " selected" : ""}>Slack</option></select>
<button type="submit">Add endpoint</button></form>
${
  o.secret
    ? html`<div id="new-secret" class="card secret" role="status"><p>The signing secret of <code>${o.secret.id}</code>. Copy it now: it is shown only this once.</p>
<p class="row"><code id="new-secret-value">${o.secret.secret}</code><button type="button" data-copy="new-secret-value">Copy</button></p></div>`
    : ""
}
${o.endpoints.length ? o.endpoints.map((x) => endpointCard(x.endpoint, x.deliveries)) : html`<p class="muted">No endpoints yet.</p>`}`;
}
