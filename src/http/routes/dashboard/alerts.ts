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

/** Deliveries shown per endpoint. */
const RECENT = 10;

async function alertsView(
  deps: DashboardDeps,
  c: Ctx,
  h: Holder,
  status = 200,
  extra: { secret?: { id: string; secret: string }; error?: string } = {},
) {
  const list = await deps.alerts.store.list(h.accountId);
  const endpoints = await Promise.all(
    list.map(async (endpoint) => ({ endpoint, deliveries: await deps.alerts.store.deliveries(endpoint.id, RECENT) })),
  );
  const flash = extra.error ? { kind: "error" as const, text: extra.error } : undefined;
  return page(
    deps,
    c,
    status,
    { title: "Alerts", who: who(h.email, h.role), active: "/dashboard/alerts", flash },
    alertsPage({ endpoints, secret: extra.secret }),
  );
}

/** The form's endpoint, created for the account; a refusal is the page again, saying why. */
async function addEndpoint(deps: DashboardDeps, c: Ctx, h: Holder) {
  const form = await readForm(deps, c);
  const num = (name: string) => {
    const v = form.get(name);
    return v ? Math.trunc(Number(v)) || null : null;
  };
  try {
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
    return alertsView(deps, c, h, 201, { secret: { id: created.id, secret: created.secret } });
  } catch (e) {
    if (e instanceof GatewayError && (e.status === 400 || e.status === 404))
      return alertsView(deps, c, h, e.status, { error: e.message });
    throw e;
  }
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
      async ({ c, holder: h, params }) => {
        const e = await endpointOf(deps, params.id, h.accountId);
        const r = await rotateWebhook(deps, e, byHolder(c, h));
        return alertsView(deps, c, h, 200, { secret: { id: e.id, secret: r.secret } });
      },
      { session: { origin: true, role: "admin" }, parse: "none" },
    )
    .post(
      "/dashboard/alerts/:id/remove",
      async ({ c, holder: h, params }) => {
        await removeWebhook(deps, await endpointOf(deps, params.id, h.accountId), byHolder(c, h));
        return redirect(c, "/dashboard/alerts");
      },
      { session: { origin: true, role: "admin" }, parse: "none" },
    )
    .post(
      "/dashboard/alerts/:id/deliveries/:delivery_id/resend",
      async ({ c, holder: h, params }) => {
        const e = await endpointOf(deps, params.id, h.accountId);
        if (!(await deps.alerts.store.resend(e.id, params.delivery_id, byHolder(c, h))))
          throw new GatewayError("not_found", "delivery not found");
        return redirect(c, "/dashboard/alerts");
      },
      { session: { origin: true, role: "admin" }, parse: "none" },
    );
}
