/**
 * The operator console under /dashboard/operator (the operator's session, opened with the admin
 * token; forms from the same origin): accounts, their credits, plans and keys, and the gateway's
 * state. Registered only when an admin token is configured.
 */
import { Elysia } from "elysia";
import type { AuditBy } from "../../../audit/interface";
import type { KeyView } from "../../../auth/interface";
import { checkPlan } from "../../../auth/interface";
import { emailProblem, hashPassword, passwordProblem } from "../../../auth/passwords";
import { POLICY_FIELDS } from "../../../auth/policy";
import { grantAmount, grantReason, newCredits } from "../../../credits/amount";
import type { Session } from "../../../dashboard/interface";
import { GatewayError } from "../../../errors";
import { planNames } from "../../../ratelimit/limiter";
import { edgePlugin } from "../../edge-plugin";
import { ok } from "../../respond";
import { type Ctx, redirect } from "../../session";
import { byOperator, type DashboardDeps, detail, OPERATOR, page, plans, policyFromForm, readForm, revokeKey } from "./common";
import { type Back, backTo, orBack, refillOf, shown, takeFlash } from "./forms";
import { deploymentGroups, GatewayStateSampler } from "./gateway-state";
import * as pages from "./pages";

const accountPath = (id: string) => `/dashboard/operator/accounts/${encodeURIComponent(id)}`;

/**
 * What the console's routes share: its two pages, each with what its flash carries (a refusal, the
 * refused form's fields), and its form posts.
 */
function consoleViews(deps: DashboardDeps) {
  const { keys, ledger } = deps;
  const store = deps.dashboard;
  /** The operator console's account list. */
  const consolePage = async (c: Ctx, q: string) => {
    const list = await store.searchAccounts(q, 200);
    const f = await takeFlash(deps, c);
    return page(
      deps,
      c,
      f?.status ?? 200,
      { title: "Operator console", who: OPERATOR, flash: shown(f) },
      pages.operatorPage(list, q, plans(deps), refillOf(f)),
    );
  };
  /** One account in the operator console. */
  const accountPage = async (c: Ctx, id: string) => {
    const acc = await keys.getAccount(id);
    if (!acc) throw new GatewayError("not_found", "account not found");
    const login = await store.loginOf(acc.id);
    const [usage, list] = await Promise.all([ledger.monthToDate(acc.id), keys.list(acc.id)]);
    const f = await takeFlash(deps, c);
    return page(
      deps,
      c,
      f?.status ?? 200,
      { title: `Account ${acc.name ?? acc.id}`, who: OPERATOR, flash: shown(f) },
      pages.operatorAccountPage({ ...acc, email: login?.email ?? null }, usage, list as KeyView[], plans(deps), refillOf(f)),
    );
  };
  /**
   * An operator form post, written once: the origin, the form and the operator's session are
   * checked, `act` does the change and names the page to go to (303). A refusal it throws (a bad
   * value, an account or key that is gone) goes 303 to the page `back` names (`back` may read
   * what is still there), saying why, with the form's `keep` fields filled in again.
   */
  const operatorPost =
    <P extends Record<string, string>>(
      act: (form: URLSearchParams, params: P, by: AuditBy) => Promise<string>,
      back: (params: P) => Promise<string>,
      keep: readonly string[] = [],
    ) =>
    async ({ c, params, operatorSession }: { c: Ctx; params: P; operatorSession: Session }) => {
      const form = await readForm(deps, c);
      const refused: Back = async (...args) => backTo(deps, c, await back(params), form, keep)(...args);
      return orBack(refused, async () => redirect(c, await act(form, params, byOperator(c, operatorSession))));
    };
  return { consolePage, accountPage, operatorPost };
}

/** An account's page to go back to, or the account list when the account is gone. */
const accountOrList = async (deps: DashboardDeps, id: string | undefined) =>
  id && (await deps.keys.accountExists(id)) ? accountPath(id) : "/dashboard/operator";

type ConsoleViews = ReturnType<typeof consoleViews>;

/** The account list and one account: a new account, a grant of credits, a plan. */
function accountConsole(deps: DashboardDeps, { consolePage, accountPage, operatorPost }: ConsoleViews) {
  const { keys, ledger } = deps;
  const store = deps.dashboard;
  return new Elysia({ name: "dashboard-operator-accounts" })
    .use(edgePlugin(deps))
    .get(
      "/dashboard/operator",
      async ({ c, query }) => {
        return consolePage(c, String(query.q ?? "").slice(0, 200));
      },
      { operator: true },
    )
    .post(
      "/dashboard/operator/accounts",
      operatorPost<Record<string, never>>(
        async (form, _params, by) => {
          const email = (form.get("email") ?? "").trim().toLowerCase();
          const password = form.get("password") ?? "";
          // an empty field is one not given: the email stands for the name, the welcome credits for the credits
          const name = (form.get("name") ?? "").trim() || email;
          const plan = (form.get("plan") ?? "").trim() || "free";
          const text = (form.get("credits") ?? "").trim();
          const credits = text === "" ? undefined : newCredits(/^\d+$/.test(text) ? Number(text) : text);
          const problem =
            emailProblem(email) ??
            passwordProblem(password) ??
            ((await store.loginByEmail(email)) ? "an account with this email already exists" : null);
          if (problem) throw new GatewayError("invalid_request", problem);
          const login = { email, passwordHash: await hashPassword(password) };
          // the name and the plan are checked by the key store (src/auth/attributes.ts), as from every way in
          const acc = await keys.createAccount({ name, plan, credits, login, audit: by });
          return accountPath(acc.id);
        },
        async () => "/dashboard/operator",
        ["email", "name", "plan", "credits"],
      ),
      { operator: { origin: true }, parse: "none" },
    )
    .get(
      "/dashboard/operator/accounts/:id",
      async ({ c, params }) => {
        return accountPage(c, params.id);
      },
      { operator: true },
    )
    .post(
      "/dashboard/operator/accounts/:id/credits",
      operatorPost<{ id: string }>(
        async (form, params, by) => {
          // the ledger's checks, before the account is looked up (an empty field: no reason given)
          const field = (form.get("amount") ?? "").trim();
          // (a number typed as a whole number; anything else is refused as typed)
          const amount = grantAmount(/^-?\d{1,16}$/.test(field) ? Number(field) : field);
          const given = form.get("reason") ?? "";
          const reason = given.trim() === "" ? "granted in the dashboard" : (grantReason(given) as string);
          if (!(await keys.accountExists(params.id))) throw new GatewayError("not_found", "account not found");
          await ledger.grant(params.id, amount, "grant", reason, by);
          return accountPath(params.id);
        },
        (params) => accountOrList(deps, params.id),
        ["amount", "reason"],
      ),
      { operator: { origin: true }, parse: "none" },
    )
    .post(
      "/dashboard/operator/accounts/:id/plan",
      operatorPost<{ id: string }>(
        async (form, params, by) => {
          const plan = (form.get("plan") ?? "").trim();
          if (!plan || plan.length > 50) throw new GatewayError("invalid_request", "plan: 1 to 50 characters", { param: "plan" });
          checkPlan(planNames(deps.config.plans), plan);
          if (!(await store.setPlan(params.id, plan, by))) throw new GatewayError("not_found", "account not found");
          return accountPath(params.id);
        },
        (params) => accountOrList(deps, params.id),
      ),
      { operator: { origin: true }, parse: "none" },
    );
}

/** A key's revocation and policy, and the gateway's state (the console's figures). */
function keyConsole(deps: DashboardDeps, { operatorPost }: ConsoleViews) {
  const { keys } = deps;
  const sampler = new GatewayStateSampler(deps);
  return new Elysia({ name: "dashboard-operator-keys" })
    .use(edgePlugin(deps))
    .post(
      "/dashboard/operator/keys/:id/revoke",
      operatorPost<{ id: string }>(
        async (_form, params, by) => {
          const key = await keys.get(params.id);
          await revokeKey(deps, undefined, params.id, by);
          return accountPath(key?.account_id ?? "");
        },
        async (params) => accountOrList(deps, (await keys.get(params.id))?.account_id),
      ),
      { operator: { origin: true }, parse: "none" },
    )
    .post(
      "/dashboard/operator/keys/:id/policy",
      operatorPost<{ id: string }>(
        async (form, params, by) => {
          const view = await keys.setPolicy(params.id, policyFromForm(deps, form), { audit: by });
          if (!view) throw new GatewayError("not_found", "key not found");
          return accountPath(view.account_id);
        },
        async (params) => accountOrList(deps, (await keys.get(params.id))?.account_id),
        POLICY_FIELDS,
      ),
      { operator: { origin: true }, parse: "none" },
    )
    .get(
      "/dashboard/api/operator/state",
      async ({ c }) => {
        return ok(c.state, "gateway state", {
          ...sampler.read(),
          groups: await deploymentGroups(deps.deploymentState, deps.config.models),
        });
      },
      {
        operator: { json: true },
        detail: detail(
          "Operator: providers and their breakers, model groups' deployments and their state (in flight, rpm/tpm used, cool-down, latency), cache hit rate, requests and errors per minute (the /metrics figures)",
        ),
      },
    );
}

export function operatorConsole(deps: DashboardDeps) {
  const views = consoleViews(deps);
  return new Elysia({ name: "dashboard-operator" }).use(accountConsole(deps, views)).use(keyConsole(deps, views));
}
