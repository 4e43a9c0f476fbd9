/**
 * The dashboard's JSON routes under /dashboard/api, called by app.js as the signed-in account
 * (a session; those that change something from the same origin): its overview, keys, ledger, and
 * the playground's function calls, charged like an API call.
 */
import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { keyDetail } from "../../../auth/key-detail";
import { applyPolicyPatch, parsePolicyPatch } from "../../../auth/policy";
import { roleAtLeast } from "../../../dashboard/members";
import { GatewayError } from "../../../errors";
import { strictJsonBody } from "../../body";
import { edgePlugin, functionEdge } from "../../edge-plugin";
import { limitOffset } from "../../query";
import { ok } from "../../respond";
import { usageNames } from "../usage-names";
import { createOwnKey, type DashboardDeps, detail, KEY_PAGE, keysOf, LEDGER_PAGE, narrowOwnKey, revokeOwnKey } from "./common";
import { playgroundFunction } from "./playground";

/** `POST /dashboard/api/keys`: the label (checked by the key store), and a policy from an admin or owner. */
const NewOwnKey = T.Object({
  label: T.Optional(T.Unknown()),
  /** docs/key-policies.md: validated as the admin API's (parsePolicyPatch) */
  policy: T.Optional(T.Unknown()),
});
/** `PATCH /dashboard/api/keys/:id` */
const OwnKeyPolicy = T.Object({ policy: T.Unknown() });

export const NOT_ADMIN_POLICY = "a key's policy is set by the account's owners and admins: leave policy out, or ask one of them";

export function dashboardApi(deps: DashboardDeps) {
  const { config, keys, ledger } = deps;
  const known = usageNames(deps.functions);
  const store = deps.dashboard;
  // every JSON body strictly (http/body.ts): an unknown field is a 400 naming it, as on the admin API
  const body = strictJsonBody(config.limits);
  /** The function the playground runs: 404 for a name no function has. */
  const functionNamed = (name: string | undefined) => playgroundFunction(deps, name).def;

  return new Elysia({ name: "dashboard-api" })
    .use(edgePlugin(deps))
    .get(
      "/dashboard/api/overview",
      async ({ c, holder: h }) => {
        return ok(c.state, "overview", { email: h.email, usage: await ledger.monthToDate(h.accountId) });
      },
      {
        session: { json: true },
        detail: detail("The signed-in account: balance, plan and this month's usage by day and by function"),
      },
    )
    .get(
      "/dashboard/api/keys",
      async ({ c, holder: h, query }) => {
        const { limit, offset } = limitOffset(query, KEY_PAGE, 500);
        const list = await keysOf(deps, h, { limit: limit + 1, offset });
        return ok(c.state, "keys", { data: list.slice(0, limit), limit, offset, has_more: list.length > limit });
      },
      { session: { json: true }, detail: detail("The signed-in account's keys (masked), newest first (limit, offset)") },
    )
    .post(
      "/dashboard/api/keys",
      async ({ c, holder: h }) => {
        const b = await body(c.request, NewOwnKey);
        if (b.policy !== undefined && !roleAtLeast(h.role, "admin"))
          throw new GatewayError("forbidden", NOT_ADMIN_POLICY, { param: "policy" });
        const policy = b.policy === undefined ? undefined : applyPolicyPatch(undefined, parsePolicyPatch(b.policy, known));
        const created = await createOwnKey(deps, c, h, b.label, policy);
        const view = await keys.get(created.id);
        return ok(
          c.state,
          "key created; the plaintext key is shown only in this response",
          { ...created, policy: view?.policy },
          201,
        );
      },
      {
        session: { json: true, origin: true, role: "developer" },
        parse: "none",
        detail: detail(
          "Create a key for the signed-in account ({ label, policy? }: a policy from an owner or admin only); its plaintext appears in this response only",
        ),
      },
    )
    .delete(
      "/dashboard/api/keys/:id",
      async ({ c, holder: h, params }) => {
        await revokeOwnKey(deps, c, h, params.id);
        return ok(c.state, "key revoked", await keys.get(params.id));
      },
      {
        session: { json: true, origin: true, role: "developer" },
        detail: detail("Revoke one of the signed-in account's keys: refused from the next request on"),
      },
    )
    .patch(
      "/dashboard/api/keys/:id",
      async ({ c, holder: h, params }) => {
        const b = await body(c.request, OwnKeyPolicy);
        await narrowOwnKey(deps, c, h, params.id, parsePolicyPatch(b.policy, known));
        return ok(c.state, "key policy updated", await keyDetail(keys, ledger, params.id));
      },
      {
        session: { json: true, origin: true, role: "admin" },
        parse: "none",
        detail: detail(
          "Narrow one of the signed-in account's keys: { policy: { … } } replaces the fields given; widening or clearing is refused (403)",
        ),
      },
    )
    .get(
      "/dashboard/api/ledger",
      async ({ c, holder: h, query }) => {
        const { limit, offset } = limitOffset(query, LEDGER_PAGE, 200);
        return ok(c.state, "ledger", { ...(await store.ledgerPage(h.accountId, limit, offset)), limit, offset });
      },
      { session: { json: true }, detail: detail("The signed-in account's credit ledger, newest first (limit, offset)") },
    )
    .post(
      "/dashboard/api/playground/:fn",
      ({ request, params, state, auth, payload }) =>
        deps.pipeline.handle(functionNamed(params.fn), request, state, { auth, body: payload }),
      {
        // the signed-in account instead of a key; the body and the account's rate limit as for a key
        sessionCall: { edge: (params: Record<string, string>) => functionEdge(functionNamed(params.fn)) },
        parse: "none",
        detail: detail("Run a function as the signed-in account, charged like an API call; answers the function's envelope"),
      },
    );
}
