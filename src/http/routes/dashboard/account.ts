/**
 * The account holder's pages under /dashboard (a session of an account; forms from the same
 * origin): the overview, keys and their policies, the credit ledger, the request log and its CSV,
 * the password, and the playground's page (its calls are the JSON API's, api.ts).
 */
import { Elysia } from "elysia";
import type { KeyView } from "../../../auth/interface";
import { hashPassword, passwordProblem, verifyPassword } from "../../../auth/passwords";
import { POLICY_FIELDS } from "../../../auth/policy";
import { GatewayError } from "../../../errors";
import { csvStream } from "../../../requestlog/csv";
import type { RequestLogQuery } from "../../../requestlog/interface";
import { decodeCursor, MAX_LIMIT, parseLogQuery, readPage } from "../../../requestlog/query";
import { edgePlugin } from "../../edge-plugin";
import { MESSAGES_FN } from "../../messages-translate";
import { queryInt } from "../../query";
import { redirect } from "../../session";
import {
  byHolder,
  createOwnKey,
  type DashboardDeps,
  KEY_PAGE,
  keysOf,
  LEDGER_PAGE,
  narrowOwnKey,
  page,
  policyFromForm,
  readForm,
  revokeOwnKey,
  SECURITY_HEADERS,
  startSession,
  tooMany,
  who,
} from "./common";
import { backTo, orBack, redirectWith, refillOf, shown, takeFlash } from "./forms";
import * as pages from "./pages";
import { playgroundExample, playgroundFunctions } from "./playground";

const REQUEST_PAGE = 50;
/** the rows a CSV download holds at most */
const CSV_MAX_ROWS = 100_000;
/** the last page whose offset is still an exact integer */
const MAX_LEDGER_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / LEDGER_PAGE);

/**
 * The Requests page's filters from its query string, for the signed-in account; the times as a
 * datetime-local field shows them (UTC). A filter it refuses: the 400 names it.
 */
function requestFilters(accountId: string, query: Record<string, string | undefined>) {
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
}

/** The function names the Requests page's filter offers: the gateway's functions and its other routes. */
function functionNames(deps: DashboardDeps): string[] {
  return [
    ...new Set([
      ...deps.functions.map((f) => f.name),
      "chat-completions",
      "embeddings",
      "responses",
      MESSAGES_FN,
      "models",
      "account",
    ]),
  ];
}

/** The overview and the keys: a new key (shown once), a revocation, a key's policy. */
function keyPages(deps: DashboardDeps) {
  const { ledger } = deps;
  return new Elysia({ name: "dashboard-account-keys" })
    .use(edgePlugin(deps))
    .get(
      "/dashboard",
      async ({ c, holder: h }) => {
        const usage = await ledger.monthToDate(h.accountId);
        return page(
          deps,
          c,
          200,
          { title: "Overview", who: who(h.email, h.role), active: "/dashboard" },
          pages.overviewPage(usage),
        );
      },
      { session: true },
    )
    .get(
      "/dashboard/keys",
      async ({ c, holder: h, query }) => {
        const offset = queryInt(query, "offset", { fallback: 0, min: 0, max: Number.MAX_SAFE_INTEGER });
        const list = await keysOf(deps, h, { limit: KEY_PAGE + 1, offset });
        const f = await takeFlash(deps, c);
        const created = f?.once?.key ? { key: f.once.key, label: f.once.label ?? "" } : null;
        return page(
          deps,
          c,
          f?.status ?? 200,
          { title: "Keys", who: who(h.email, h.role), active: "/dashboard/keys", flash: shown(f) },
          pages.keysPage(list.slice(0, KEY_PAGE), created, { offset, size: KEY_PAGE, more: list.length > KEY_PAGE }, refillOf(f)),
        );
      },
      { session: true },
    )
    .post(
      "/dashboard/keys",
      async ({ c, holder: h }) => {
        const form = await readForm(deps, c);
        return orBack(backTo(deps, c, "/dashboard/keys", form, ["label"]), async () => {
          // the label's one check (auth/attributes.ts keyLabel) runs before the key-creation limit is spent
          const created = await createOwnKey(deps, c, h, form.get("label"));
          // without JavaScript: the keys page shows the key this once (the flash is sealed, and
          // cleared by that page), never again, and a reload makes no second key
          return redirectWith(deps, c, "/dashboard/keys", {
            status: 200,
            kind: "ok",
            text: "",
            once: { key: created.key, label: created.label },
          });
        });
      },
      { session: { origin: true, role: "developer" }, parse: "none" },
    )
    .post(
      "/dashboard/keys/:id/revoke",
      async ({ c, holder: h, params }) =>
        orBack(backTo(deps, c, "/dashboard/keys"), async () => {
          await revokeOwnKey(deps, c, h, params.id);
          return redirect(c, "/dashboard/keys");
        }),
      { session: { origin: true, role: "developer" }, parse: "none" },
    )
    .post(
      "/dashboard/keys/:id/policy",
      async ({ c, holder: h, params }) => {
        const form = await readForm(deps, c);
        // refused: the keys page again, saying why, this key's form open with what was sent
        return orBack(backTo(deps, c, "/dashboard/keys", form, POLICY_FIELDS), async () => {
          await narrowOwnKey(deps, c, h, params.id, policyFromForm(deps, form));
          return redirect(c, "/dashboard/keys");
        });
      },
      { session: { origin: true, role: "admin" }, parse: "none" },
    );
}

/** The credit ledger, a page at a time. */
function ledgerPages(deps: DashboardDeps) {
  const store = deps.dashboard;
  return new Elysia({ name: "dashboard-account-ledger" }).use(edgePlugin(deps)).get(
    "/dashboard/ledger",
    async ({ c, holder: h, query }) => {
      let n: number;
      try {
        n = queryInt(query, "page", { fallback: 1, min: 1, max: MAX_LEDGER_PAGE });
      } catch (err) {
        // a page the pager never links to: the first page, with the reason above it
        const text = err instanceof GatewayError ? err.message : "no such page";
        const { rows, total } = await store.ledgerPage(h.accountId, LEDGER_PAGE, 0);
        return page(
          deps,
          c,
          400,
          { title: "Credit ledger", who: who(h.email, h.role), active: "/dashboard/ledger", flash: { kind: "error", text } },
          pages.ledgerPage(rows, 1, Math.max(1, Math.ceil(total / LEDGER_PAGE)), total),
        );
      }
      const { rows, total } = await store.ledgerPage(h.accountId, LEDGER_PAGE, (n - 1) * LEDGER_PAGE);
      const pageCount = Math.max(1, Math.ceil(total / LEDGER_PAGE));
      // past the last page (an old link, a hand-typed number): the last page, not "page 99 of 2" and an empty table
      if (n > pageCount) return redirect(c, pageCount === 1 ? "/dashboard/ledger" : `/dashboard/ledger?page=${pageCount}`);
      return page(
        deps,
        c,
        200,
        { title: "Credit ledger", who: who(h.email, h.role), active: "/dashboard/ledger" },
        pages.ledgerPage(rows, n, pageCount, total),
      );
    },
    { session: true },
  );
}

/** The request log: its filtered pages, its CSV download, one request. */
function requestPages(deps: DashboardDeps) {
  const { keys } = deps;
  return new Elysia({ name: "dashboard-account-requests" })
    .use(edgePlugin(deps))
    .get(
      "/dashboard/requests",
      async ({ c, holder: h, query }) => {
        const o = { title: "Requests", who: who(h.email, h.role), active: "/dashboard/requests" };
        const ownKeys = (await keysOf(deps, h, { limit: 500, offset: 0 })) as KeyView[];
        let parsed: ReturnType<typeof requestFilters>;
        try {
          parsed = requestFilters(h.accountId, query);
        } catch (e) {
          if (!(e instanceof GatewayError) || e.status !== 400) throw e;
          const empty = { function: "", status: "", key_id: "", from: "", to: "" };
          return page(
            deps,
            c,
            400,
            { ...o, flash: { kind: "error", text: e.message } },
            pages.requestsPage({
              entries: [],
              filters: empty,
              keys: ownKeys,
              functions: functionNames(deps),
              nextCursor: null,
              firstPage: true,
            }),
          );
        }
        const { data, next_cursor } = await readPage((x) => deps.requestLog.page(x), parsed.q);
        return page(
          deps,
          c,
          200,
          o,
          pages.requestsPage({
            entries: data,
            filters: parsed.filters,
            keys: ownKeys,
            functions: functionNames(deps),
            nextCursor: next_cursor,
            firstPage: !parsed.q.cursor,
          }),
        );
      },
      { session: { role: "developer" } },
    )
    .get(
      "/dashboard/requests.csv",
      async ({ c, holder: h, query }) => {
        const { q } = requestFilters(h.accountId, { ...query, cursor: undefined });
        // each row's key by its label too, as the page shows it (a developer's: the keys it made)
        const labels = new Map(((await keysOf(deps, h, { limit: 100_000, offset: 0 })) as KeyView[]).map((k) => [k.id, k.label]));
        const body = csvStream(
          (cursor) =>
            readPage((x) => deps.requestLog.page(x), {
              ...q,
              limit: MAX_LIMIT,
              cursor: cursor ? decodeCursor(cursor) : undefined,
            }),
          CSV_MAX_ROWS,
          [["key_label", (e) => (e.key_id ? labels.get(e.key_id) : undefined)]],
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
      { session: { role: "developer" } },
    )
    .get(
      "/dashboard/requests/:id",
      async ({ c, holder: h, params }) => {
        const entry = await deps.requestLog.get(params.id, h.accountId);
        if (!entry) throw new GatewayError("not_found", "request not found");
        const key = entry.key_id.startsWith("dashboard:") ? null : await keys.get(entry.key_id);
        return page(
          deps,
          c,
          200,
          { title: "Request", who: who(h.email, h.role), active: "/dashboard/requests" },
          pages.requestDetailPage(entry, key && key.account_id === h.accountId ? key.label : null),
        );
      },
      { session: { role: "developer" } },
    );
}

/** The password form and its change (guesses limited; every other session ended). */
function passwordPages(deps: DashboardDeps) {
  const limiter = deps.signIns;
  const store = deps.dashboard;
  return new Elysia({ name: "dashboard-account-password" })
    .use(edgePlugin(deps))
    .get(
      "/dashboard/password",
      async ({ c, holder: h }) => {
        const f = await takeFlash(deps, c);
        return page(
          deps,
          c,
          f?.status ?? 200,
          { title: "Change password", who: who(h.email, h.role), active: "/dashboard/password", flash: shown(f) },
          pages.passwordPage(refillOf(f)),
        );
      },
      { session: true },
    )
    .post(
      "/dashboard/password",
      async ({ c, holder: h }) => {
        const form = await readForm(deps, c);
        const current = form.get("current") ?? "";
        const next = form.get("next") ?? "";
        const login = await store.loginByEmail(h.email);
        // refused, the form's page says why; a reload asks for that page, never sends the current
        // password again (a wrong one would count again toward the limit)
        const back = backTo(deps, c, "/dashboard/password");
        // guesses here are their own target: sign-in failures at the email never block this form
        const target = `password-change:${h.memberId}`;
        const v = await limiter.attempt(target, c.client);
        if (!v.allowed) {
          const t = tooMany(v);
          return back(429, t.text, { retryAfter: t.retryAfter, focus: "current" });
        }
        if (!login || !(await verifyPassword(current.slice(0, 200), login.passwordHash)))
          return back(400, "The current password is wrong.", { focus: "current" });
        await limiter.succeeded(target, c.client);
        const problem = passwordProblem(next);
        if (problem) return back(400, problem, { focus: "next" });
        // ends every session of the member, this one included; this browser gets a new one
        await store.setPassword(h.accountId, await hashPassword(next), byHolder(c, h), h.memberId);
        const s = await startSession(deps, c, { accountId: h.accountId, memberId: h.memberId, kind: "account" });
        return redirectWith(
          deps,
          c,
          "/dashboard/password",
          { status: 200, kind: "ok", text: "Password changed. Every other session has ended." },
          { session: s.token, cookies: [s.cookie] },
        );
      },
      { session: { origin: true }, parse: "none" },
    );
}

/** The playground's page (its calls are the JSON API's, api.ts). */
function playgroundPage(deps: DashboardDeps) {
  return new Elysia({ name: "dashboard-account-playground" }).use(edgePlugin(deps)).get(
    "/dashboard/playground",
    async ({ c, holder: h, query }) => {
      const offered = playgroundFunctions(deps);
      const f = offered.find((p) => p.id === query.fn) ?? offered[0];
      return page(
        deps,
        c,
        200,
        { title: "Playground", who: who(h.email, h.role), active: "/dashboard/playground" },
        pages.playgroundPage(
          offered.map((p) => p.id),
          {
            name: f.id,
            path: f.path,
            inPath: f.inPath,
            summary: f.def.summary,
            cost: deps.pipeline.costOf(f.def),
            schema: f.schema,
            example: await playgroundExample(deps, f, h.accountId),
          },
          c.origin,
        ),
      );
    },
    { session: { role: "developer" } },
  );
}

export function accountPages(deps: DashboardDeps) {
  return new Elysia({ name: "dashboard-account" })
    .use(keyPages(deps))
    .use(ledgerPages(deps))
    .use(requestPages(deps))
    .use(passwordPages(deps))
    .use(playgroundPage(deps));
}
