/**
 * The request edge as one Elysia plugin: a route declares the credential it needs in its options
 * and finds the request's state, caller and body in its context, already checked.
 *
 *   .get(path, ({ state, auth }) => …, { key: { fn: "account" } })        // an API key
 *   .post(path, ({ state, payload }) => …, { key: { fn: R, rateClass } })  // + the JSON body
 *   .get(path, ({ state }) => …, { admin: true })                           // the admin token
 *   .get(path, ({ c, holder }) => …, { session: true })                     // a dashboard session
 *   .post(path, ({ c }) => …, { operator: { origin: true } })               // the operator's, same origin
 *   .post(path, ({ state, auth, payload }) => …,                              // a call as the signed-in
 *         { sessionCall: { edge: (p: Record<string, string>) => functionEdge(def) } }) // account (playground)
 *
 * `key` runs `requestEdge` (body for POST/PUT/PATCH unless `body` says otherwise, authentication,
 * the key's policy, the key's then the account's rate limit); `admin` checks TEXTAI_ADMIN_TOKEN
 * (404 when none is configured, 403 when missing or wrong, a wrong one counted as a guess);
 * `session` and `operator` read the dashboard session (a page without one is redirected to its
 * sign-in page, a JSON route answers 401 not_signed_in; `origin: true` refuses another Origin first).
 * `sessionCall` is a function call made as the signed-in account instead of with a key (the
 * dashboard's playground): the session as a same-origin JSON route, then the key edge for the
 * function its callback names, with the account as the caller. A refusal is thrown as a GatewayError, answered by the app's one error handler in the envelope.
 * test/core/security-matrix.test.ts checks every registered route against its class.
 */
import { Elysia } from "elysia";
import type { AuthInfo } from "../auth/interface";
import type { Session } from "../dashboard/interface";
import { type Role, roleAtLeast } from "../dashboard/members";
import { GatewayError } from "../errors";
import type { AnyFunctionDef } from "../functions/define";
import type { RateClass } from "../ratelimit/interface";
import { adminTokenOf } from "./admin-token";
import type { AppDeps } from "./deps";
import { requestEdge } from "./edge";
import { newRequestId } from "./envelope";
import { brokenPath, decodablePath, pathOf } from "./path";
import { checkOrigin, dashboardCtx, forbiddenPage, type RouteContext, redirect, sessionOf } from "./session";
import { newRequestState, stateOf, type WithState } from "./state";

export interface KeyEdge {
  /** the rate-limit bucket, request-log and metrics name, e.g. "account", "knowledge-bases" */
  fn: string;
  /** "standard" unless given */
  rateClass?: RateClass;
  /** read the JSON body; by default for POST, PUT and PATCH */
  body?: boolean;
  /**
   * a function call the pipeline runs: with Redis (`callStarter`), the rate limit is left to the
   * call's first trip (http/admission.ts `firstTrip`), taken with its Idempotency-Key claim and cache lookup
   */
  deferLimit?: boolean;
}

export interface AdminEdge {
  /** the 404 message when no admin token is configured */
  unset?: string;
  /** the request's function name in logs and metrics: "admin" unless given; false leaves it unset */
  fn?: string | false;
}

/** A function call's edge: its name and rate class, the body always read. */
export const functionEdge = (def: Pick<AnyFunctionDef, "name" | "rateClass" | "prepare">): Required<KeyEdge> => ({
  fn: def.name,
  rateClass: def.rateClass,
  body: true,
  // a function that prepares its request (embeds a query) sends it out before its first trip: limited here
  deferLimit: def.prepare === undefined,
});

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

export type EdgeDeps = Pick<AppDeps, "keys" | "limiter" | "config" | "signIns" | "dashboard"> &
  Partial<Pick<AppDeps, "callStarter">>;

export type EdgeKind = "key" | "admin" | "session" | "operator";

export interface SessionEdge {
  /** a JSON route: no session is 401 not_signed_in (a page is redirected to its sign-in page) */
  json?: boolean;
  /** the least role a member needs (docs/teams.md): "viewer" (any member) unless given; a lower one is 403 */
  role?: Role;
  /** a state-changing route: another Origin is 403, checked before the session */
  origin?: boolean;
}

export interface SessionCallEdge {
  /**
   * the key edge of the function the route's path parameters name (it throws 404 for none); type
   * its parameter (`p: Record<string, string>`), or Elysia loses the context this macro adds
   */
  edge: (params: Record<string, string>) => KeyEdge;
}

/** An answer the edge gives instead of the route (a page's redirect to sign-in): the app's error handler sends it as is. */
export class EdgeAnswer extends Error {
  constructor(readonly response: Response) {
    super("answered by the request edge");
  }
}
/** the edge's resolvers, by the credential they check: how a registered route tells it runs the edge */
const resolvers = new WeakMap<object, EdgeKind>();
const tagged = <F extends object>(kind: EdgeKind, fn: F): F => {
  resolvers.set(fn, kind);
  return fn;
};

/** the least role each session route's resolver lets through, for the security matrix */
const roles = new WeakMap<object, Role>();

/** each key route's resolver's function name (`KeyEdge.fn`): what a refusal before the edge ran is logged under */
const keyFns = new WeakMap<object, string>();
const keyFn = <F extends object>(fn: string, resolver: F): F => {
  keyFns.set(resolver, fn);
  return resolver;
};

/** What `tags` holds of a registered route's edge resolver (from `app.routes[i].hooks`), null when it runs none. */
function taggedOf<T>(hooks: unknown, tags: WeakMap<object, T>): T | null {
  const before = (hooks as { beforeHandle?: unknown } | undefined)?.beforeHandle;
  for (const h of Array.isArray(before) ? before : before ? [before] : []) {
    const tag = tags.get((h as { fn?: object }).fn ?? (h as object));
    if (tag) return tag;
  }
  return null;
}

/** The least member role a registered route's session edge lets through, null for no session route. */
export const roleOf = (hooks: unknown): Role | null => taggedOf(hooks, roles);

/** The function name a registered route's key edge runs under (`KeyEdge.fn`), null for a route without a key edge. */
export const keyFnOf = (hooks: unknown): string | null => taggedOf(hooks, keyFns);

/** After the credential (401 and 403 first, as on every route): a path that does not decode is 400. */
function checkPath(request: Request): void {
  if (!decodablePath(pathOf(request.url))) throw brokenPath();
}

/** The credential a registered route's edge checks (from `app.routes[i].hooks`), null when it runs none. */
export const edgeOf = (hooks: unknown): EdgeKind | null => taggedOf(hooks, resolvers);

/** A signed-in member: its session, account, id, role and email. */
export interface Holder {
  session: Session;
  accountId: string;
  memberId: string;
  role: Role;
  email: string;
}

const article = (role: Role) => (role === "owner" || role === "admin" ? `an ${role}` : `a ${role}`);
const sessionCallRole = <F extends object>(fn: F): F => {
  roles.set(tagged("session", fn), "developer");
  return fn;
};

export function edgePlugin(deps: EdgeDeps) {
  /** The signed-in account holder (a page without a session is redirected to sign-in, a JSON route answers 401). */
  const holderOf = async (context: RouteContext, o: SessionEdge) => {
    const c = dashboardCtx(deps, context);
    const { request } = context;
    if (o.origin) checkOrigin(c);
    const s = await sessionOf(deps, request);
    // the member is read on every request: a new role counts from the next one, a removed member is signed out
    const member = s?.kind === "account" && s.memberId ? await deps.dashboard.memberById(s.memberId) : null;
    if (s && member && member.accountId === s.accountId) {
      if (!roleAtLeast(member.role, o.role ?? "viewer")) {
        const why = `this needs the ${o.role} role or above; you are ${article(member.role)}`;
        // nothing of the route runs: a page says so as a page, a JSON route in the envelope
        if (o.json) throw new GatewayError("forbidden", why);
        throw new EdgeAnswer(forbiddenPage(c, `${why[0]?.toUpperCase()}${why.slice(1)}.`));
      }
      checkPath(request);
      const holder: Holder = {
        session: s,
        accountId: member.accountId,
        memberId: member.id,
        role: member.role,
        email: member.email,
      };
      return { c, holder };
    }
    if (s?.kind === "account") await deps.dashboard.deleteSession(s.tokenHash);
    if (o.json) throw new GatewayError("not_signed_in", "sign in to the dashboard first");
    throw new EdgeAnswer(redirect(c, s?.kind === "operator" ? "/dashboard/operator" : "/dashboard/login"));
  };
  /** The caller of a call made in the dashboard: the signed-in account, as a key of its own would be. */
  const accountCaller = async (accountId: string): Promise<AuthInfo> => {
    const acc = await deps.keys.getAccount(accountId);
    if (!acc) throw new GatewayError("not_found", "account not found");
    return { keyId: `dashboard:${accountId}`, accountId, plan: acc.plan, label: "dashboard playground" };
  };
  // no plugin name: each route family uses its own instance (an app per deps, several per test process)
  return new Elysia().macro({
    key: (opts: KeyEdge) => ({
      // the context read by property, never passed to a function (the app's onRequest says why)
      resolve: keyFn(
        opts.fn,
        tagged("key", async (context: RouteContext & WithState) => {
          const { request } = context;
          const state = context.state ?? newRequestState(newRequestId());
          context.state = state;
          const { auth, body } = await requestEdge(deps, request, state, {
            fn: opts.fn,
            rateClass: opts.rateClass ?? "standard",
            body: opts.body ?? BODY_METHODS.has(request.method),
            deferLimit: opts.deferLimit === true && deps.callStarter != null,
          });
          return { state, auth, payload: body };
        }),
      ),
    }),
    admin: (opts: true | AdminEdge) => ({
      resolve: tagged("admin", async (context: RouteContext) => {
        const { request, server } = context;
        const o: AdminEdge = opts === true ? {} : opts;
        const state = stateOf(context);
        if (o.fn !== false) state.fn = o.fn ?? "admin";
        if (!deps.config.adminToken) throw new GatewayError("not_found", o.unset ?? "no such route");
        if ((await adminTokenOf(deps, request, server)) !== "right")
          throw new GatewayError("forbidden", "admin token missing or wrong");
        checkPath(request);
        return { state };
      }),
    }),
    session: (opts: true | SessionEdge) => {
      const o = opts === true ? {} : opts;
      const fn = tagged("session", (context: RouteContext) => holderOf(context, o));
      roles.set(fn, o.role ?? "viewer");
      return { resolve: fn };
    },
    sessionCall: (opts: SessionCallEdge) => ({
      resolve: sessionCallRole(async (context: RouteContext & { params: Record<string, string> }) => {
        const { request, params } = context;
        // the playground: developers and above (docs/teams.md)
        const { c, holder } = await holderOf(context, { json: true, origin: true, role: "developer" });
        const edge = opts.edge(params);
        // the signed-in account instead of a key; the body and the account's rate limit as for a key
        const caller = await accountCaller(holder.accountId);
        const { auth, body } = await requestEdge(deps, request, c.state, {
          fn: edge.fn,
          rateClass: edge.rateClass ?? "standard",
          body: edge.body ?? BODY_METHODS.has(request.method),
          auth: caller,
          deferLimit: edge.deferLimit === true && deps.callStarter != null,
        });
        return { c, holder, state: c.state, auth, payload: body };
      }),
    }),
    operator: (opts: true | SessionEdge) => ({
      resolve: tagged("operator", async (context: RouteContext) => {
        const { request } = context;
        const o: SessionEdge = opts === true ? {} : opts;
        const c = dashboardCtx(deps, context);
        if (!deps.config.adminToken) throw new GatewayError("not_found", "no such route");
        if (o.origin) checkOrigin(c);
        const s = await sessionOf(deps, request);
        if (s?.kind === "operator") {
          checkPath(request);
          return { c, operatorSession: s };
        }
        if (o.json) throw new GatewayError("not_signed_in", "sign in as the operator first");
        throw new EdgeAnswer(redirect(c, "/dashboard/operator/login"));
      }),
    }),
  });
}
