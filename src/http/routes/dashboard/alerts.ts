/**
 * The Alerts page of the account dashboard (docs/alerts.md): the signed-in account's webhook
 * endpoints, added, rotated and removed here, with their recent deliveries, each resent on request.
 * For the account's owners and admins (docs/teams.md): a lower role is 403.
 */
import { Elysia } from "elysia";
import { GatewayError } from "../../../errors";
import { edgePlugin, type Holder } from "../../edge-plugin";
import { type Ctx, redirect } from "../../session";
import { createWebhook, endpointOf, removeWebhook, rotateWebhook } from "../webhooks";
import { alertsPage } from "./alerts-page";
import { byHolder, type DashboardDeps, page, readForm, who } from "./common";
import { backTo, orBack, redirectWith, refillOf, shown, takeFlash } from "./forms";

/** Deliveries shown per endpoint. */
const RECENT = 10;
const PAGE = "/dashboard/alerts";
/** the add form's fields, filled in again when it is refused */
const ENDPOINT_FIELDS = ["url", "events", "balance_below", "expiring_days", "spike_factor", "format"];

/** The Alerts page, with what its flash carries: a secret just made or rotated (shown once), or a refusal. */
async function alertsView(deps: DashboardDeps, c: Ctx, h: Holder) {
  const list = await deps.alerts.store.list(h.accountId);
  const endpoints = await Promise.all(
    list.map(async (endpoint) => ({ endpoint, deliveries: await deps.alerts.store.deliveries(endpoint.id, RECENT) })),
  );
  const f = await takeFlash(deps, c);
  const secret = f?.once?.secret ? { id: f.once.id ?? "", secret: f.once.secret } : null;
  return page(
    deps,
    c,
    f?.status ?? 200,
    { title: "Alerts", who: who(h.email, h.role), active: PAGE, flash: shown(f) },
    alertsPage({ endpoints, secret, refill: refillOf(f) }),
  );
}

/** A signing secret shown on the Alerts page this once; a reload makes no other. */
const showSecret = (deps: DashboardDeps, c: Ctx, id: string, secret: string) =>
  redirectWith(deps, c, PAGE, { status: 200, kind: "ok", text: "", once: { id, secret } });

/** The form's endpoint, created for the account; a refusal goes back to the page, saying why. */
async function addEndpoint(deps: DashboardDeps, c: Ctx, h: Holder) {
  const form = await readForm(deps, c);
  const num = (name: string) => {
    const v = form.get(name);
    return v ? Math.trunc(Number(v)) || null : null;
  };
  return orBack(backTo(deps, c, PAGE, form, ENDPOINT_FIELDS), async () => {
    const created = await createWebhook(
      deps,
      {
        account_id: h.accountId,
        url: (form.get("url") ?? "").trim(),
        events: form.getAll("events"),
        balance_below: num("balance_below"),
        expiring_days: num("expiring_days"),
        spike_factor: num("spike_factor"),
        format: form.get("format") === "slack" ? "slack" : "json",
      },
      byHolder(c, h),
    );
    return showSecret(deps, c, created.id, created.secret);
  });
}

export function alertsPages(deps: DashboardDeps) {
  return new Elysia({ name: "dashboard-alerts" })
    .use(edgePlugin(deps))
    .get("/dashboard/alerts", ({ c, holder: h }) => alertsView(deps, c, h), { session: { role: "admin" } })
    .post("/dashboard/alerts", ({ c, holder: h }) => addEndpoint(deps, c, h), {
      session: { origin: true, role: "admin" },
      parse: "none",
    })
    .post(
      "/dashboard/alerts/:id/rotate",
      ({ c, holder: h, params }) =>
        orBack(backTo(deps, c, PAGE), async () => {
          const e = await endpointOf(deps, params.id, h.accountId);
          const r = await rotateWebhook(deps, e, byHolder(c, h));
          return showSecret(deps, c, e.id, r.secret);
        }),
      { session: { origin: true, role: "admin" }, parse: "none" },
    )
    .post(
      "/dashboard/alerts/:id/remove",
      ({ c, holder: h, params }) =>
        orBack(backTo(deps, c, PAGE), async () => {
          await removeWebhook(deps, await endpointOf(deps, params.id, h.accountId), byHolder(c, h));
          return redirect(c, PAGE);
        }),
      { session: { origin: true, role: "admin" }, parse: "none" },
    )
    .post(
      "/dashboard/alerts/:id/deliveries/:delivery_id/resend",
      ({ c, holder: h, params }) =>
        orBack(backTo(deps, c, PAGE), async () => {
          const e = await endpointOf(deps, params.id, h.accountId);
          if (!(await deps.alerts.store.resend(e.id, params.delivery_id, byHolder(c, h))))
            throw new GatewayError("not_found", "delivery not found");
          return redirect(c, PAGE);
        }),
      { session: { origin: true, role: "admin" }, parse: "none" },
    );
}
