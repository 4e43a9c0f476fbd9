import { Elysia } from "elysia";
import { KeyLimitError, type KeyView } from "../auth/interface";
import { keyDetail } from "../auth/key-detail";
import { safeEqual } from "../auth/keys";
import { emailProblem, hashPassword, passwordProblem, verifyPassword, warmDummyHash } from "../auth/passwords";
import {
  type KeyPolicy,
  POLICY_FIELDS,
  type PolicyPatch,
  parsePolicyPatch,
  policyPatchFromText,
  widenedField,
} from "../auth/policy";
import type { AppDeps } from "../deps";
import { GatewayError } from "../errors";
import { readBytes, readJsonBody } from "../http/body";
import { edgePlugin, functionEdge } from "../http/edge-plugin";
import type { FunctionPipeline } from "../http/pipeline";
import { limitOffset, queryInt } from "../http/query";
import { ok } from "../http/respond";
import { stateOf } from "../http/state";
import { rateLimitHeaders } from "../ratelimit/limiter";
import { csvStream } from "../requestlog/csv";
import type { RequestLogQuery } from "../requestlog/interface";
import { decodeCursor, MAX_LIMIT, parseLogQuery, readPage } from "../requestlog/query";
import appCss from "./assets/app.css" with { type: "text" };
import appJs from "./assets/app.js" with { type: "text" };
import { guessAdminToken, retryAfter } from "./guessing";
import type { Html } from "./html";
import type { DashboardStore, GuessVerdict, Session } from "./interface";
import * as pages from "./pages";
import { clearedCookie, hashToken, newSessionToken, type Peer, readCookie, sessionCookie } from "./security";
import { type Ctx, checkOrigin, dashboardCtx, redirect, sessionOf, storedHash } from "./session";
import { GatewayStateSampler } from "./state";

const FORM_LIMIT = 64 * 1024;
const LEDGER_PAGE = 25;
const REQUEST_PAGE = 50;
/** the rows a CSV download holds at most */
const CSV_MAX_ROWS = 100_000;
const KEY_PAGE = 100;
/** the rate-limit name of key creation: the plan's heavy class unless plans.NAME.rate_limits sets "key-create" */
const KEY_CREATE = "key-create";
/** the last page whose offset is still an exact integer */
const MAX_LEDGER_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / LEDGER_PAGE);
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};
/** The answer to every well-formed sign-up, whether the email was free or taken. */
const SIGNED_UP =
  "Thank you. If this email address had no account, it has one now: sign in with it and your password. If it had one, nothing has changed.";
const detail = (summary: string) => ({ tags: ["Dashboard"], summary, security: [{ session: [] }] });

/**
 * The account dashboard and the operator console: server-rendered pages under /dashboard (plain
 * forms, with app.js adding sorting, filtering, copy, confirmations and the playground), and the
 * JSON routes under /dashboard/api that the scripts call.
 */
export function dashboardRoutes(deps: AppDeps & { pipeline: FunctionPipeline }) {
  const { config, keys, ledger, logger } = deps;
  const limiter = deps.signIns;
  const sampler = new GatewayStateSampler(deps);
  warmDummyHash();
  const plans = () => [...new Set(["free", ...Object.keys(config.plans)])];

  const store = (): DashboardStore => deps.dashboard;
  /** A key for the signed-in account: limited per account like any call, within the plan's cap. */
  const createOwnKey = async (c: Ctx, accountId: string, label: string) => {
    const plan = (await keys.getAccount(accountId))?.plan ?? "free";
    const d = await deps.limiter.check(accountId, plan, KEY_CREATE, "heavy");
    Object.assign(c.state.headers, rateLimitHeaders(d));
    if (!d.allowed)
      throw new GatewayError("rate_limited", `at most ${d.limit} keys can be made a minute; retry in ${d.retryAfterSeconds}s`);
    try {
      return await keys.createKey({ label, accountId });
    } catch (err) {
      if (err instanceof KeyLimitError) throw new GatewayError("forbidden", err.message);
      throw err;
    }
  };
  const ctxOf = (request: Request, server: Peer): Ctx => dashboardCtx(deps, request, server);
  const page = (c: Ctx, status: number, o: pages.PageOpts, body: Html | string, headers: Record<string, string> = {}) => {
    c.state.status = status;
    const text = typeof body === "string" ? body : pages.layout({ operatorEnabled: !!config.adminToken, ...o }, body);
    return new Response(text, {
      status,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        ...SECURITY_HEADERS,
        ...c.state.headers,
        ...headers,
      },
    });
  };
  const readForm = async (c: Ctx): Promise<URLSearchParams> => {
    checkOrigin(c);
    const type = c.request.headers.get("content-type") ?? "";
    if (!type.startsWith("application/x-www-form-urlencoded"))
      throw new GatewayError("unsupported_media_type", "expected a form (application/x-www-form-urlencoded)");
    // counted while it arrives: no account is needed to send a form, so none is read whole first
    const bytes = await readBytes(c.request, FORM_LIMIT, config.limits.bodyTimeoutMs);
    return new URLSearchParams(new TextDecoder().decode(bytes));
  };
  const startSession = async (c: Ctx, s: Pick<Session, "accountId" | "kind">): Promise<string> => {
    const token = newSessionToken();
    const now = Date.now();
    await store().createSession({ tokenHash: storedHash(deps, token, s.kind), ...s, createdAt: now, lastSeenAt: now });
    return sessionCookie(token, c.secure);
  };
  const who = (email: string) => ({ kind: "account" as const, name: email });
  const OPERATOR = { kind: "operator" as const, name: "operator" };
  const accountPath = (id: string) => `/dashboard/operator/accounts/${encodeURIComponent(id)}`;
  const refused = (text: string | undefined) => (text ? { kind: "error" as const, text } : null);
  /** The operator console's account list, with a refusal shown above it when there is one. */
  const consolePage = async (c: Ctx, q: string, status = 200, error?: string) => {
    const list = await store().searchAccounts(q, 200);
    return page(
      c,
      status,
      { title: "Operator console", who: OPERATOR, flash: refused(error) },
      pages.operatorPage(list, q, plans()),
    );
  };
  /** One account in the operator console, with a refusal shown above it when there is one. */
  const accountPage = async (c: Ctx, id: string, status = 200, error?: string) => {
    const acc = await keys.getAccount(id);
    if (!acc) throw new GatewayError("not_found", "account not found");
    const login = await store().loginOf(acc.id);
    const [usage, list] = await Promise.all([ledger.monthToDate(acc.id), keys.list(acc.id)]);
    return page(
      c,
      status,
      { title: `Account ${acc.name ?? acc.id}`, who: OPERATOR, flash: refused(error) },
      pages.operatorAccountPage({ ...acc, email: login?.email ?? null }, usage, list as KeyView[], plans()),
    );
  };
  /**
   * An operator form post, written once: the origin, the form and the operator's session are
   * checked, `act` does the change and names the page to go to (303). A value it refuses (400) or
   * an account that is gone (404) re-renders the form's page with the reason, so a browser without
   * JavaScript sees a page, never a JSON envelope.
   */
  const operatorPost =
    <P extends Record<string, string>>(
      act: (form: URLSearchParams, params: P) => Promise<string>,
      onRefused: (c: Ctx, params: P, status: number, text: string) => Promise<Response>,
    ) =>
    async ({ c, params }: { c: Ctx; params: P }) => {
      const form = await readForm(c);
      try {
        return redirect(c, await act(form, params));
      } catch (e) {
        if (!(e instanceof GatewayError) || (e.status !== 400 && e.status !== 404)) throw e;
        return onRefused(c, params, e.status, e.message).catch(() => {
          throw e;
        });
      }
    };

  const signInFailed = (c: Ctx, email: string, signup: boolean) =>
    page(
      c,
      401,
      { title: "Sign in", flash: { kind: "error", text: "Wrong email or password." } },
      pages.signInPage({ email, signup, operatorEnabled: !!config.adminToken }),
    );
  /** A refused guess (or sign-up): 429 with the wait, on the form's own page. */
  const tooMany = (c: Ctx, v: GuessVerdict, o: pages.PageOpts, body: Html, what = "attempts") => {
    const wait = Number(retryAfter(v)["Retry-After"]);
    const when = wait < 120 ? `${wait} seconds` : `${Math.ceil(wait / 60)} minutes`;
    return page(c, 429, { ...o, flash: { kind: "error", text: `Too many ${what}. Try again in ${when}.` } }, body, retryAfter(v));
  };
  const signInForm = () => pages.signInPage({ signup: config.dashboard.signup, operatorEnabled: !!config.adminToken });
  /** The function the playground runs: 404 for a name no function has. */
  const functionNamed = (name: string | undefined) => {
    const def = deps.functions.find((f) => f.name === name);
    if (!def) throw new GatewayError("not_found", `no function ${name}`);
    return def;
  };
  /** A policy form's fields as a patch: an empty field clears that limit. */
  const policyFromForm = (form: URLSearchParams): PolicyPatch =>
    policyPatchFromText(Object.fromEntries(POLICY_FIELDS.map((f) => [f, form.get(f) ?? undefined])));
  /**
   * An account holder's change to one of its keys' policies: it may only narrow it (a subset of
   * the functions and models, lower limits, an earlier expiry); widening or clearing is the
   * operator's. Takes effect like the admin API's (cache dropped, broadcast).
   */
  const narrowOwn = async (accountId: string, id: string, patch: PolicyPatch) => {
    const narrowOnly = (before: KeyPolicy | undefined, after: KeyPolicy | undefined) => {
      const f = widenedField(before, after);
      if (f)
        throw new GatewayError(
          "forbidden",
          `${f}: you can only narrow a key's policy here; to widen or clear it, ask the operator`,
          { param: f },
        );
    };
    const view = await keys.setPolicy(id, patch, { accountId, check: narrowOnly });
    if (!view) throw new GatewayError("not_found", "key not found");
    return view;
  };
  const keysPageFor = async (c: Ctx, h: { accountId: string; email: string }, status = 200, error?: string) => {
    const list = await keys.list(h.accountId, { limit: KEY_PAGE + 1, offset: 0 });
    return page(
      c,
      status,
      { title: "Keys", who: who(h.email), active: "/dashboard/keys", flash: refused(error) },
      pages.keysPage(list.slice(0, KEY_PAGE), null, { offset: 0, size: KEY_PAGE, more: list.length > KEY_PAGE }),
    );
  };
  /**
   * The Requests page's filters from its query string, for the signed-in account; the times as a
   * datetime-local field shows them (UTC). A filter it refuses: the 400 names it.
   */
  const requestFilters = (accountId: string, query: Record<string, string | undefined>) => {
    const q: RequestLogQuery = {
      ...parseLogQuery({ ...query, limit: undefined }, { admin: false }),
      accountId,
      limit: REQUEST_PAGE,
    };
    const local = (t: number | undefined) => {
      if (t === undefined) return "";
      const iso = new Date(t).toISOString();
      return iso.endsWith(":00.000Z") ? iso.slice(0, 16) : iso.slice(0, 19);
    };
    const filters: pages.RequestFilters = {
      function: q.function ?? "",
      status: query.status ?? "",
      key_id: q.keyId ?? "",
      from: local(q.from),
      to: local(q.to),
    };
    return { q, filters };
  };
  const functionNames = () => [
    ...new Set([...deps.functions.map((f) => f.name), "chat-completions", "embeddings", "responses", "models", "account"]),
  ];
  const revokeOwn = async (accountId: string | undefined, id: string) => {
    // the same path as DELETE /admin/v1/keys/:id: the key store drops it from its cache and broadcasts it
    if (!(await keys.revoke(id, accountId))) throw new GatewayError("not_found", "key not found");
  };

  const app = new Elysia({ name: "dashboard" })
    .use(edgePlugin(deps))
    .get("/dashboard/assets/app.css", ({ request }) => new Response(appCss, { headers: assetHeaders(request, "text/css") }))
    .get("/dashboard/assets/app.js", ({ request }) => new Response(appJs, { headers: assetHeaders(request, "text/javascript") }))
    .get("/login", ({ request, server }) => redirect(ctxOf(request, server), "/dashboard/login"))
    .get("/dashboard/login", async ({ request, server }) => {
      const c = ctxOf(request, server);
      const s = await sessionOf(deps, request);
      if (s) return redirect(c, s.kind === "operator" ? "/dashboard/operator" : "/dashboard");
      return page(
        c,
        200,
        { title: "Sign in" },
        pages.signInPage({ signup: config.dashboard.signup, operatorEnabled: !!config.adminToken }),
      );
    })
    .post(
      "/dashboard/login",
      async ({ request, server }) => {
        const c = ctxOf(request, server);
        const form = await readForm(c);
        const email = (form.get("email") ?? "").trim().toLowerCase().slice(0, 254);
        const password = form.get("password") ?? "";
        const v = await limiter.attempt(email, c.client);
        if (!v.allowed) return tooMany(c, v, { title: "Sign in" }, signInForm(), "sign-in attempts");
        const login = password.length <= 200 ? await store().loginByEmail(email) : null;
        // the same argon2id work whether or not the email exists
        const good = await verifyPassword(password.slice(0, 200), login?.passwordHash ?? null);
        if (!good || !login) return signInFailed(c, email, config.dashboard.signup);
        await limiter.succeeded(email, c.client);
        const cookie = await startSession(c, { accountId: login.accountId, kind: "account" });
        return redirect(c, "/dashboard", { "set-cookie": cookie });
      },
      { parse: "none" },
    )
    .post(
      "/dashboard/logout",
      async ({ request, server }) => {
        const c = ctxOf(request, server);
        checkOrigin(c);
        const token = readCookie(request);
        if (token) {
          await store().deleteSession(hashToken(token));
          if (config.adminToken) await store().deleteSession(storedHash(deps, token, "operator"));
        }
        return redirect(c, "/dashboard/login", { "set-cookie": clearedCookie(c.secure) });
      },
      { parse: "none" },
    )
    .get("/dashboard/signup", ({ request, server }) => {
      const c = ctxOf(request, server);
      if (!config.dashboard.signup) throw new GatewayError("not_found", "sign-up is not open");
      return page(c, 200, { title: "Create an account" }, pages.signUpPage());
    })
    .post(
      "/dashboard/signup",
      async ({ request, server }) => {
        const c = ctxOf(request, server);
        if (!config.dashboard.signup) throw new GatewayError("not_found", "sign-up is not open");
        const form = await readForm(c);
        const email = (form.get("email") ?? "").trim().toLowerCase();
        const password = form.get("password") ?? "";
        const o = { title: "Create an account" };
        const problem = emailProblem(email) ?? passwordProblem(password);
        if (problem) return page(c, 400, { ...o, flash: { kind: "error", text: problem } }, pages.signUpPage(email));
        // every well-formed sign-up counts, whether it made an account or found the email taken
        const v = await limiter.signUp(c.client);
        if (!v.allowed) return tooMany(c, v, o, pages.signUpPage(email), "sign-ups from this address");
        // the same work and the same answer whether or not the email is taken (docs/security.md)
        const hash = await hashPassword(password);
        if (!(await store().loginByEmail(email))) {
          const acc = await keys.createAccount({ name: email, credits: config.dashboard.signupCredits });
          await store().setLogin(acc.id, email, hash);
        }
        return page(
          c,
          200,
          { title: "Sign in", flash: { kind: "ok", text: SIGNED_UP } },
          pages.signInPage({ email, signup: true, operatorEnabled: !!config.adminToken }),
        );
      },
      { parse: "none" },
    )
    .get(
      "/dashboard",
      async ({ c, holder: h }) => {
        const usage = await ledger.monthToDate(h.accountId);
        return page(c, 200, { title: "Overview", who: who(h.email), active: "/dashboard" }, pages.overviewPage(usage));
      },
      { session: true },
    )
    .get(
      "/dashboard/keys",
      async ({ c, holder: h, query }) => {
        const offset = queryInt(query, "offset", { fallback: 0, min: 0, max: Number.MAX_SAFE_INTEGER });
        const list = await keys.list(h.accountId, { limit: KEY_PAGE + 1, offset });
        return page(
          c,
          200,
          { title: "Keys", who: who(h.email), active: "/dashboard/keys" },
          pages.keysPage(list.slice(0, KEY_PAGE), null, { offset, size: KEY_PAGE, more: list.length > KEY_PAGE }),
        );
      },
      { session: true },
    )
    .post(
      "/dashboard/keys",
      async ({ c, holder: h }) => {
        // without JavaScript: the key is shown in this answer only (no-store), never again
        const form = await readForm(c);
        const label = (form.get("label") ?? "").trim();
        if (!label || label.length > 200) throw new GatewayError("invalid_request", "a label of 1 to 200 characters is required");
        const created = await createOwnKey(c, h.accountId, label);
        const list = await keys.list(h.accountId, { limit: KEY_PAGE, offset: 0 });
        return page(
          c,
          201,
          { title: "Keys", who: who(h.email), active: "/dashboard/keys" },
          pages.keysPage(list, { key: created.key, label }),
        );
      },
      { session: { origin: true }, parse: "none" },
    )
    .post(
      "/dashboard/keys/:id/revoke",
      async ({ c, holder: h, params }) => {
        await revokeOwn(h.accountId, params.id);
        return redirect(c, "/dashboard/keys");
      },
      { session: { origin: true }, parse: "none" },
    )
    .post(
      "/dashboard/keys/:id/policy",
      async ({ c, holder: h, params }) => {
        const form = await readForm(c);
        try {
          await narrowOwn(h.accountId, params.id, policyFromForm(form));
        } catch (e) {
          // refused: the keys page again, saying why (a browser without JavaScript sees a page)
          if (e instanceof GatewayError && [400, 403, 404].includes(e.status)) return keysPageFor(c, h, e.status, e.message);
          throw e;
        }
        return redirect(c, "/dashboard/keys");
      },
      { session: { origin: true }, parse: "none" },
    )
    .get(
      "/dashboard/ledger",
      async ({ c, holder: h, query }) => {
        let n: number;
        try {
          n = queryInt(query, "page", { fallback: 1, min: 1, max: MAX_LEDGER_PAGE });
        } catch (err) {
          // a page the pager never links to: the first page, with the reason above it
          const text = err instanceof GatewayError ? err.message : "no such page";
          const { rows, total } = await store().ledgerPage(h.accountId, LEDGER_PAGE, 0);
          return page(
            c,
            400,
            { title: "Credit ledger", who: who(h.email), active: "/dashboard/ledger", flash: { kind: "error", text } },
            pages.ledgerPage(rows, 1, Math.max(1, Math.ceil(total / LEDGER_PAGE)), total),
          );
        }
        const { rows, total } = await store().ledgerPage(h.accountId, LEDGER_PAGE, (n - 1) * LEDGER_PAGE);
        const pageCount = Math.max(1, Math.ceil(total / LEDGER_PAGE));
        return page(
          c,
          200,
          { title: "Credit ledger", who: who(h.email), active: "/dashboard/ledger" },
          pages.ledgerPage(rows, n, pageCount, total),
        );
      },
      { session: true },
    )
    .get(
      "/dashboard/requests",
      async ({ c, holder: h, query }) => {
        const o = { title: "Requests", who: who(h.email), active: "/dashboard/requests" };
        const ownKeys = (await keys.list(h.accountId, { limit: 500, offset: 0 })) as KeyView[];
        let parsed: ReturnType<typeof requestFilters>;
        try {
          parsed = requestFilters(h.accountId, query);
        } catch (e) {
          if (!(e instanceof GatewayError) || e.status !== 400) throw e;
          const empty = { function: "", status: "", key_id: "", from: "", to: "" };
          return page(
            c,
            400,
            { ...o, flash: { kind: "error", text: e.message } },
            pages.requestsPage({
              entries: [],
              filters: empty,
              keys: ownKeys,
              functions: functionNames(),
              nextCursor: null,
              firstPage: true,
            }),
          );
        }
        const { data, next_cursor } = await readPage((x) => deps.requestLog.page(x), parsed.q);
        return page(
          c,
          200,
          o,
          pages.requestsPage({
            entries: data,
            filters: parsed.filters,
            keys: ownKeys,
            functions: functionNames(),
            nextCursor: next_cursor,
            firstPage: !parsed.q.cursor,
          }),
        );
      },
      { session: true },
    )
    .get(
      "/dashboard/requests.csv",
      async ({ c, holder: h, query }) => {
        const { q } = requestFilters(h.accountId, { ...query, cursor: undefined });
        const body = csvStream(
          (cursor) =>
            readPage((x) => deps.requestLog.page(x), {
              ...q,
              limit: MAX_LIMIT,
              cursor: cursor ? decodeCursor(cursor) : undefined,
            }),
          CSV_MAX_ROWS,
        );
        c.state.status = 200;
        return new Response(body, {
          headers: {
            "content-type": "text/csv; charset=utf-8",
            "content-disposition": `attachment; filename="requests-${new Date().toISOString().slice(0, 10)}.csv"`,
            "cache-control": "no-store",
            ...SECURITY_HEADERS,
            ...c.state.headers,
          },
        });
      },
      { session: true },
    )
    .get(
      "/dashboard/requests/:id",
      async ({ c, holder: h, params }) => {
        const entry = await deps.requestLog.get(params.id, h.accountId);
        if (!entry) throw new GatewayError("not_found", "request not found");
        const key = entry.key_id.startsWith("dashboard:") ? null : await keys.get(entry.key_id);
        return page(
          c,
          200,
          { title: "Request", who: who(h.email), active: "/dashboard/requests" },
          pages.requestDetailPage(entry, key && key.account_id === h.accountId ? key.label : null),
        );
      },
      { session: true },
    )
    .get(
      "/dashboard/password",
      async ({ c, holder: h }) => {
        return page(c, 200, { title: "Change password", who: who(h.email), active: "/dashboard/password" }, pages.passwordPage());
      },
      { session: true },
    )
    .post(
      "/dashboard/password",
      async ({ c, holder: h }) => {
        const form = await readForm(c);
        const o = { title: "Change password", who: who(h.email), active: "/dashboard/password" };
        const current = form.get("current") ?? "";
        const next = form.get("next") ?? "";
        const login = await store().loginOf(h.accountId);
        // guesses here are their own target: sign-in failures at the email never block this form
        const target = `password-change:${h.accountId}`;
        const v = await limiter.attempt(target, c.client);
        if (!v.allowed) return tooMany(c, v, o, pages.passwordPage());
        if (!login || !(await verifyPassword(current.slice(0, 200), login.passwordHash)))
          return page(c, 400, { ...o, flash: { kind: "error", text: "The current password is wrong." } }, pages.passwordPage());
        await limiter.succeeded(target, c.client);
        const problem = passwordProblem(next);
        if (problem) return page(c, 400, { ...o, flash: { kind: "error", text: problem } }, pages.passwordPage());
        // ends every session of the account, this one included; this browser gets a new one
        await store().setPassword(h.accountId, await hashPassword(next));
        const cookie = await startSession(c, { accountId: h.accountId, kind: "account" });
        return page(
          c,
          200,
          { ...o, flash: { kind: "ok", text: "Password changed. Every other session has ended." } },
          pages.passwordPage(),
          { "set-cookie": cookie },
        );
      },
      { session: { origin: true }, parse: "none" },
    )
    .get(
      "/dashboard/playground",
      async ({ c, holder: h, query }) => {
        const def = deps.functions.find((f) => f.name === query.fn) ?? deps.functions[0];
        return page(
          c,
          200,
          { title: "Playground", who: who(h.email), active: "/dashboard/playground" },
          pages.playgroundPage(
            deps.functions.map((f) => ({ name: f.name, path: f.path, summary: f.summary })),
            {
              name: def.name,
              path: def.path,
              summary: def.summary,
              cost: deps.pipeline.costOf(def),
              schema: def.request,
              example: def.example.request,
            },
            c.origin,
          ),
        );
      },
      { session: true },
    )
    // JSON routes, called by app.js
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
        const list = await keys.list(h.accountId, { limit: limit + 1, offset });
        return ok(c.state, "keys", { data: list.slice(0, limit), limit, offset, has_more: list.length > limit });
      },
      { session: { json: true }, detail: detail("The signed-in account's keys (masked), newest first (limit, offset)") },
    )
    .post(
      "/dashboard/api/keys",
      async ({ c, holder: h }) => {
        const b = await readJsonBody(c.request, config.limits);
        const label = typeof b.label === "string" ? b.label.trim() : "";
        if (!label || label.length > 200)
          throw new GatewayError("invalid_request", "a label of 1 to 200 characters is required", { param: "label" });
        const created = await createOwnKey(c, h.accountId, label);
        return ok(c.state, "key created; the plaintext key is shown only in this response", created, 201);
      },
      {
        session: { json: true, origin: true },
        parse: "none",
        detail: detail("Create a key for the signed-in account; its plaintext appears in this response only"),
      },
    )
    .delete(
      "/dashboard/api/keys/:id",
      async ({ c, holder: h, params }) => {
        await revokeOwn(h.accountId, params.id);
        return ok(c.state, "key revoked", await keys.get(params.id));
      },
      {
        session: { json: true, origin: true },
        detail: detail("Revoke one of the signed-in account's keys: refused from the next request on"),
      },
    )
    .patch(
      "/dashboard/api/keys/:id",
      async ({ c, holder: h, params }) => {
        const b = await readJsonBody(c.request, config.limits);
        await narrowOwn(h.accountId, params.id, parsePolicyPatch(b.policy));
        return ok(c.state, "key policy updated", await keyDetail(keys, ledger, params.id));
      },
      {
        session: { json: true, origin: true },
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
        return ok(c.state, "ledger", { ...(await store().ledgerPage(h.accountId, limit, offset)), limit, offset });
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

  if (!config.adminToken) return app;
  return app
    .get("/dashboard/operator/login", async ({ request, server }) => {
      const c = ctxOf(request, server);
      return page(c, 200, { title: "Operator sign-in" }, pages.operatorSignInPage());
    })
    .post(
      "/dashboard/operator/login",
      async ({ request, server }) => {
        const c = ctxOf(request, server);
        const form = await readForm(c);
        const o = { title: "Operator sign-in" };
        const token = form.get("token") ?? "";
        const v = await guessAdminToken(limiter, !!config.adminToken && safeEqual(token, config.adminToken), c.client);
        if (!v.allowed) return tooMany(c, v, o, pages.operatorSignInPage(), "sign-in attempts");
        if (!v.right) {
          logger.log("warn", "operator sign-in refused", { request_id: c.state.requestId, client: c.client });
          return page(
            c,
            401,
            { title: "Operator sign-in", flash: { kind: "error", text: "Wrong admin token." } },
            pages.operatorSignInPage(),
          );
        }
        const cookie = await startSession(c, { accountId: null, kind: "operator" });
        return redirect(c, "/dashboard/operator", { "set-cookie": cookie });
      },
      { parse: "none" },
    )
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
        async (form) => {
          const email = (form.get("email") ?? "").trim().toLowerCase();
          const password = form.get("password") ?? "";
          const name = (form.get("name") ?? "").trim().slice(0, 200) || email;
          const plan = form.get("plan") || "free";
          const creditsRaw = form.get("credits") ?? "";
          const credits = creditsRaw === "" ? undefined : Number(creditsRaw);
          const problem =
            emailProblem(email) ??
            passwordProblem(password) ??
            (credits !== undefined && (!Number.isInteger(credits) || credits < 0)
              ? "credits must be a whole number, 0 or more"
              : null) ??
            ((await store().loginByEmail(email)) ? "an account with this email already exists" : null);
          if (problem) throw new GatewayError("invalid_request", problem);
          const acc = await keys.createAccount({ name, plan, credits });
          await store().setLogin(acc.id, email, await hashPassword(password));
          return accountPath(acc.id);
        },
        (c, _params, status, text) => consolePage(c, "", status, text),
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
        async (form, params) => {
          const amount = Number(form.get("amount"));
          if (!Number.isInteger(amount) || amount === 0 || Math.abs(amount) > 1_000_000_000)
            throw new GatewayError("invalid_request", "amount must be a whole number other than 0", { param: "amount" });
          if (!(await keys.accountExists(params.id))) throw new GatewayError("not_found", "account not found");
          await ledger.grant(params.id, amount, "grant", (form.get("reason") ?? "").slice(0, 500) || "granted in the dashboard");
          return accountPath(params.id);
        },
        (c, params, status, text) => accountPage(c, params.id, status, text),
      ),
      { operator: { origin: true }, parse: "none" },
    )
    .post(
      "/dashboard/operator/accounts/:id/plan",
      operatorPost<{ id: string }>(
        async (form, params) => {
          const plan = (form.get("plan") ?? "").trim();
          if (!plan || plan.length > 50) throw new GatewayError("invalid_request", "plan: 1 to 50 characters", { param: "plan" });
          if (!(await store().setPlan(params.id, plan))) throw new GatewayError("not_found", "account not found");
          return accountPath(params.id);
        },
        (c, params, status, text) => accountPage(c, params.id, status, text),
      ),
      { operator: { origin: true }, parse: "none" },
    )
    .post(
      "/dashboard/operator/keys/:id/revoke",
      async ({ c, params }) => {
        const key = await keys.get(params.id);
        await revokeOwn(undefined, params.id);
        return redirect(c, accountPath(key?.account_id ?? ""));
      },
      { operator: { origin: true }, parse: "none" },
    )
    .post(
      "/dashboard/operator/keys/:id/policy",
      operatorPost<{ id: string }>(
        async (form, params) => {
          const view = await keys.setPolicy(params.id, policyFromForm(form));
          if (!view) throw new GatewayError("not_found", "key not found");
          return accountPath(view.account_id);
        },
        async (c, params, status, text) => {
          const key = await keys.get(params.id);
          if (!key) throw new GatewayError("not_found", "key not found");
          return accountPage(c, key.account_id, status, text);
        },
      ),
      { operator: { origin: true }, parse: "none" },
    )
    .get(
      "/dashboard/api/operator/state",
      async ({ c }) => {
        return ok(c.state, "gateway state", sampler.read());
      },
      {
        operator: { json: true },
        detail: detail(
          "Operator: providers and their breakers, cache hit rate, requests and errors per minute (the /metrics figures)",
        ),
      },
    );
}

function assetHeaders(request: Request, type: string): Record<string, string> {
  return {
    "content-type": `${type}; charset=utf-8`,
    "cache-control": "public, max-age=3600",
    "x-content-type-options": "nosniff",
    ...stateOf(request).headers,
  };
}
