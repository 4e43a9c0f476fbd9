// The security matrix (issue 21), as Unkey's API has one: every route the app registered is put in
// one class by the credential it needs, and each class's contract statuses are checked on each of
// its routes over real HTTP. A route in no class fails the first test: a new route declares itself
// here (a public one by name; the prefixes place /api, /v1, /admin and /dashboard routes).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ROLES, type Role, roleAtLeast } from "../../src/dashboard/members";
import type { ErrorCode } from "../../src/errors";
import { messagesErrorType } from "../../src/http/messages-errors";
import { usageNames } from "../../src/http/routes/usage-names";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { RawConnection } from "../helpers/raw-http";

const TOKEN = "admin-token-for-the-security-matrix-0123456789";
const admin = { authorization: `Bearer ${TOKEN}` };

type Class = "public" | "key" | "admin" | "session" | "operator";
type Route = { method: string; path: string; edge?: Class | null; role?: Role | null };

/** Routes anyone may call: named one by one, so a new public route is a decision, never a default. */
const PUBLIC = new Set([
  // the landing page: the version and links, nothing of any account (test/core/landing.test.ts)
  "GET /",
  "GET /health",
  "GET /ready",
  "GET /docs",
  "GET /docs/*",
  "GET /docs/json",
  "GET /docs/assets/scalar.js",
  "GET /openapi.json",
  "GET /login",
  "GET /dashboard/assets/app.css",
  "GET /dashboard/assets/app.js",
  "GET /dashboard/login",
  "POST /dashboard/login",
  "POST /dashboard/logout",
  "GET /dashboard/signup",
  "POST /dashboard/signup",
  "GET /dashboard/operator/login",
  "POST /dashboard/operator/login",
  // an invitation's one-time link: the link is the credential (test/dashboard/members.test.ts)
  "GET /dashboard/join/:account",
  "POST /dashboard/join/:account",
  // single sign-on: the start sends to the issuer, the callback checks its sealed cookie and state (test/sso/)
  "GET /dashboard/sso/start",
  "GET /dashboard/sso/callback",
]);

function classOf(r: Route): Class | null {
  const name = `${r.method} ${r.path}`;
  if (PUBLIC.has(name)) return "public";
  if (r.path.startsWith("/api/v1/") || r.path.startsWith("/v1/")) return "key";
  if (r.path.startsWith("/admin/v1/") || name === "GET /metrics") return "admin";
  if (r.path.startsWith("/dashboard/operator") || r.path.startsWith("/dashboard/api/operator/")) return "operator";
  if (r.path === "/dashboard" || r.path.startsWith("/dashboard/")) return "session";
  return null;
}

let gw: TestGateway;
let origin: string;
let holderCookie: string;
let operatorCookie: string;
const memberCookies: Partial<Record<Role, string>> = {};
let routes: (Route & { cls: Class | null })[];

/** a concrete URL path for a route pattern (path parameters and wildcards filled with "x") */
const concrete = (path: string) => path.replace(/:[^/]+/g, "x").replace(/\*/g, "x");
const hasBody = (method: string) => method === "POST" || method === "PUT" || method === "PATCH";

async function call(r: Route, headers: Record<string, string> = {}, form = false) {
  const res = await fetch(gw.url + concrete(r.path), {
    method: r.method,
    redirect: "manual",
    headers: hasBody(r.method)
      ? { "content-type": form ? "application/x-www-form-urlencoded" : "application/json", ...headers }
      : headers,
    body: hasBody(r.method) ? (form ? "" : "{}") : undefined,
  });
  const text = await res.text();
  let json: { type?: string; error?: { code?: string; type?: string } } = {};
  try {
    json = JSON.parse(text);
  } catch {}
  return {
    status: res.status,
    headers: res.headers,
    json,
    text,
    label: `${r.method} ${r.path}: ${res.status} ${text.slice(0, 200)}`,
  };
}

/**
 * The refusal's code: `error.code` in the envelope and OpenAI's shape; in Anthropic's (the
 * Messages API's routes, which name no code) the code's Anthropic type, with its request-id header.
 */
function expectCode(res: Omit<Awaited<ReturnType<typeof call>>, "text">, code: ErrorCode): void {
  if (res.json.type !== "error") return void expect(res.json.error?.code, res.label).toBe(code);
  expect(res.json.error?.type, res.label).toBe(messagesErrorType(code));
  expect(res.headers.get("request-id"), res.label).toStartWith("req_");
}

/** a dashboard form route (HTML) rather than one of its JSON routes */
const isForm = (r: Route) => !r.path.startsWith("/dashboard/api/");
const of = (cls: Class) => routes.filter((r) => r.cls === cls);
let clientNo = 0;
/** a client address of its own (the gateway trusts 127.0.0.1 as a proxy), so guesses are counted per check */
const freshClient = () => ({ "x-forwarded-for": `10.77.${Math.floor(++clientNo / 250)}.${clientNo % 250}` });

async function createKey(policy?: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const res = await gw.post("/admin/v1/keys", { label: "matrix", credits: 100, ...(policy ? { policy } : {}) }, admin);
  expect(res.status).toBe(201);
  return { key: res.json.data.result.key, id: res.json.data.result.id };
}

beforeAll(async () => {
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: TOKEN, TEXTAI_TRUSTED_PROXIES: "127.0.0.1" },
    // the matrix's account holder is on a plan of its own: one playground call a minute
    configText:
      '[dashboard]\nsignup = true\n[plans.matrix.rate_limits]\n"sentiment-analysis" = 1\n' +
      // single sign-on's routes are mounted (and so classified); its issuer is never reached here
      '[sso]\nissuer = "https://idp.example.invalid"\nclient_id = "matrix"\nclient_secret = "matrix-secret"\nredirect_uri = "https://gw.example.invalid/dashboard/sso/callback"\n',
  });
  origin = new URL(gw.url).origin;
  routes = gw.routes.map((r) => ({ ...r, cls: classOf(r) }));
  const formPost = (path: string, body: Record<string, string>) =>
    fetch(gw.url + path, {
      method: "POST",
      redirect: "manual",
      headers: { origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body),
    });
  const made = await gw.post(
    "/admin/v1/accounts",
    { email: "matrix@example.com", password: "a long enough password", credits: 50, plan: "matrix" },
    admin,
  );
  expect(made.status).toBe(201);
  const signedIn = await formPost("/dashboard/login", { email: "matrix@example.com", password: "a long enough password" });
  expect(signedIn.status).toBe(303);
  holderCookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] as string;
  // a member of each role in the holder's account, joined by invitation (the owner is the login)
  memberCookies.owner = holderCookie;
  for (const role of ["admin", "developer", "viewer"] as const) {
    const invited = await gw.post(
      `/admin/v1/accounts/${made.json.data.result.id}/members`,
      { email: `${role}@matrix.example`, role },
      admin,
    );
    expect(invited.status).toBe(201);
    const link = new URL(invited.json.data.result.url);
    const joined = await formPost(link.pathname + link.search, { password: "a long enough password" });
    expect(joined.status).toBe(303);
    memberCookies[role] = (joined.headers.get("set-cookie") ?? "").split(";")[0] as string;
  }
  const op = await formPost("/dashboard/operator/login", { token: TOKEN });
  expect(op.status).toBe(303);
  operatorCookie = (op.headers.get("set-cookie") ?? "").split(";")[0] as string;
});
afterAll(() => gw.close());

describe("security matrix: every registered route", () => {
  test("every route is in exactly one class (a new route must declare itself)", () => {
    expect(routes.length).toBeGreaterThan(50);
    const unclassified = routes.filter((r) => r.cls === null).map((r) => `${r.method} ${r.path}`);
    expect(unclassified).toEqual([]);
    // each class is present, so a prefix typo cannot empty one silently
    for (const c of ["public", "key", "admin", "session", "operator"] as const) expect(of(c).length).toBeGreaterThan(0);
  });

  test("every authenticated route runs the edge plugin (src/http/edge-plugin.ts) for its credential", () => {
    const off = routes.filter((r) => r.cls !== "public" && r.edge !== r.cls).map((r) => `${r.method} ${r.path}`);
    expect(off).toEqual([]);
    // and no public route runs it
    expect(of("public").filter((r) => r.edge !== null)).toEqual([]);
  });

  test("public routes answer without any credential", async () => {
    // (an invitation's link with a made-up token is a 404 page: test/dashboard/members.test.ts walks it)
    // (single sign-on's routes are walked against a real issuer in test/sso/)
    const plain = (r: Route) =>
      r.method === "GET" && !r.path.includes("*") && !r.path.includes("/:") && !r.path.includes("/sso/");
    for (const r of of("public").filter(plain)) {
      const res = await call(r);
      expect(res.status, res.label).toBeLessThan(400);
    }
  });

  test("key routes: no key, an unknown key and a revoked key are 401 in the route's error shape", async () => {
    const revoked = await createKey();
    const del = await fetch(`${gw.url}/admin/v1/keys/${revoked.id}`, { method: "DELETE", headers: admin });
    expect(del.status).toBe(200);
    for (const r of of("key")) {
      const none = await call(r);
      expect(none.status, none.label).toBe(401);
      expectCode(none, "missing_api_key");
      const unknown = await call(r, { "x-api-key": "tai_live_thisKeyWasNeverIssuedToAnyone00000000" });
      expect(unknown.status, unknown.label).toBe(401);
      expectCode(unknown, "invalid_api_key");
      const gone = await call(r, { "x-api-key": revoked.key });
      expect(gone.status, gone.label).toBe(401);
      expectCode(gone, "invalid_api_key");
      // an admin token or a dashboard session is no API key
      const other = await call(r, { ...admin, cookie: holderCookie });
      expect(other.status, other.label).toBe(401);
    }
  });

  test("key routes: an expired key is 401 expired_api_key; a key whose allowed_functions leave the route out is 403", async () => {
    // a key is never made expired (src/auth/attributes.ts); one that exists is given a time past, which ends it at once
    const expired = await createKey();
    const ended = await fetch(`${gw.url}/admin/v1/keys/${expired.id}`, {
      method: "PATCH",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify({ policy: { expires_at: "2001-01-01T00:00:00Z" } }),
    });
    expect(ended.status).toBe(200);
    // `account` only: a name allowed_functions accepts that leaves out every route it can leave out
    const narrow = await createKey({ allowed_functions: ["account"] });
    // docs/key-policies.md: no allowed_functions list refuses the account's own figures or the model list
    // (the audit trail, which holds more than the account's figures, has a usage name of its own)
    const alwaysAllowed = (r: Route) =>
      (r.path.startsWith("/api/v1/account/") && r.path !== "/api/v1/account/audit") || r.path.startsWith("/v1/models");
    const refusedAs = new Set<string>();
    for (const r of of("key")) {
      const old = await call(r, { "x-api-key": expired.key });
      expect(old.status, old.label).toBe(401);
      expectCode(old, "expired_api_key");
      const outside = await call(r, { "x-api-key": narrow.key });
      if (alwaysAllowed(r)) expect([401, 403, 429], outside.label).not.toContain(outside.status);
      else {
        expect(outside.status, outside.label).toBe(403);
        expectCode(outside, "forbidden");
        const fn = /this key may not call (\S+?);/.exec(outside.label)?.[1];
        expect(fn, outside.label).toBeDefined();
        refusedAs.add(fn as string);
      }
    }
    // every name a route is refused (and limited, and logged) under is one allowed_functions accepts
    const known = usageNames(gw.deps.functions);
    expect([...refusedAs].filter((f) => !known.has(f))).toEqual([]);
    expect(refusedAs).toContain("chatbots");
    expect(refusedAs).toContain("audit");
    expect((await createKey({ allowed_functions: [...refusedAs] })).key).toStartWith("tai_");
  });

  test("key routes: over the key's limit is 429 rate_limited with Retry-After", async () => {
    // rate_limit_per_minute 1: a bucket per (key, route's function name); the first call takes the
    // one token (or finds it taken by a route of the same name), the second is refused
    const limited = await createKey({ rate_limit_per_minute: 1 });
    for (const r of of("key")) {
      await call(r, { "x-api-key": limited.key });
      const over = await call(r, { "x-api-key": limited.key });
      expect(over.status, over.label).toBe(429);
      expectCode(over, "rate_limited");
      expect(Number(over.headers.get("retry-after")), over.label).toBeGreaterThan(0);
    }
  });

  test("admin routes: no token and a wrong token are 403; a wrong token counts as a guess", async () => {
    // each route from addresses of its own, all at once: every wrong token's answer is slowed (250 ms)
    await Promise.all(
      of("admin").map(async (r) => {
        const none = await call(r, freshClient());
        expect(none.status, none.label).toBe(403);
        expectCode(none, "forbidden");
        const client = freshClient();
        const wrong = await call(r, { ...client, authorization: "Bearer not-the-admin-token-but-long-enough-000000" });
        expect(wrong.status, wrong.label).toBe(403);
        expectCode(wrong, "forbidden");
        // an API key is no admin token
        const key = await call(r, { ...freshClient(), "x-api-key": (await createKey()).key });
        expect(key.status, key.label).toBe(403);
        // past the guesses one address may make, its wrong tokens are refused (429)
        for (let i = 0; i < 4; i++) await call(r, { ...client, authorization: `Bearer wrong-guess-${i}` });
        const throttled = await call(r, { ...client, authorization: "Bearer wrong-guess-again" });
        expect(throttled.status, throttled.label).toBe(429);
        expect(Number(throttled.headers.get("retry-after")), throttled.label).toBeGreaterThan(0);
        // and the right token passes the edge, from that address (never refused) and from another
        for (const from of [client, freshClient()]) {
          const right = await call(r, { ...from, ...admin });
          expect([401, 403, 429], right.label).not.toContain(right.status);
        }
      }),
    );
  }, 30_000);

  test("session routes: no session is 303 to sign-in (pages) or 401 not_signed_in (JSON); a key or an admin token is no session", async () => {
    for (const r of of("session")) {
      for (const creds of [{} as Record<string, string>, { "x-api-key": (await createKey()).key }, admin]) {
        const res = await call(r, { origin, ...creds }, isForm(r));
        if (isForm(r)) {
          expect(res.status, res.label).toBe(303);
          expect(res.headers.get("location"), res.label).toBe("/dashboard/login");
        } else {
          expect(res.status, res.label).toBe(401);
          expectCode(res, "not_signed_in");
        }
      }
    }
  });

  test("session routes, for each member role: a route the role may use answers, any other is 403 forbidden and changes nothing", async () => {
    // every session route states the least role it lets through (edge-plugin.ts `role`)
    expect(of("session").filter((r) => !r.role)).toEqual([]);
    const audited = async () => (await gw.get("/admin/v1/audit?limit=1", admin)).json.data.result.data[0]?.seq ?? 0;
    for (const role of ROLES) {
      const cookie = memberCookies[role] as string;
      const before = await audited();
      for (const r of of("session")) {
        const res = await call(r, { origin, cookie, ...freshClient() }, isForm(r));
        if (roleAtLeast(role, r.role as Role)) {
          expect([401, 403], `${role}: ${res.label}`).not.toContain(res.status);
        } else {
          expect(res.status, `${role}: ${res.label}`).toBe(403);
          // a page answers a page that says which role it needs; a JSON route the envelope
          if (isForm(r)) expect(res.text, `${role}: ${res.label}`).toContain("role or above");
          else expectCode(res, "forbidden");
        }
      }
      // what a role may not do was never begun: no entry in the audit trail, none of the allowed calls' empty bodies made one either
      expect(await audited(), role).toBe(before);
    }
    // the playground is a developer's at least; the Members page's changes an owner's; the Audit page an admin's
    const roleOfRoute = (name: string) => routes.find((r) => `${r.method} ${r.path}` === name)?.role;
    expect(roleOfRoute("POST /dashboard/api/playground/:fn")).toBe("developer");
    expect(roleOfRoute("POST /dashboard/members")).toBe("owner");
    expect(roleOfRoute("GET /dashboard/audit")).toBe("admin");
    expect(roleOfRoute("GET /dashboard/members")).toBe("viewer");
  });

  test("the playground runs the key edge through the session's account: its function, the account's limit, 429 with Retry-After", async () => {
    // a call as the signed-in account: the session edge (a session route of the matrix, checked
    // above like the others), then the key edge for the function its path names
    const registered = routes.filter((r) => r.path.startsWith("/dashboard/api/playground/"));
    expect(registered.map((r) => `${r.method} ${r.path} ${r.cls} ${r.edge}`)).toEqual([
      "POST /dashboard/api/playground/:fn session session",
    ]);
    const play = async (fn: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${gw.url}/dashboard/api/playground/${fn}`, {
        method: "POST",
        headers: { origin, cookie: holderCookie, "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as { success?: boolean; error?: { code?: string } };
      return {
        status: res.status,
        headers: res.headers,
        json,
        label: `${fn}: ${res.status} ${JSON.stringify(json).slice(0, 200)}`,
      };
    };
    const unknown = await play("no-such-function", { text: "x" });
    expect(unknown.status, unknown.label).toBe(404);
    // the body is read and validated as for a key (a key in it is no credential here)
    const bad = await play("sentiment-analysis", "not an object");
    expect(bad.status, bad.label).toBe(400);
    expectCode(bad, "invalid_request");
    const first = await play("sentiment-analysis", { text: "What a lovely day.", api_key: "tai_live_notAKey" });
    expect(first.status, first.label).toBe(200);
    expect(first.json.success, first.label).toBe(true);
    const over = await play("sentiment-analysis", { text: "What a lovely day." });
    expect(over.status, over.label).toBe(429);
    expectCode(over, "rate_limited");
    expect(Number(over.headers.get("retry-after")), over.label).toBeGreaterThan(0);
  });

  test("operator routes: no session, an account holder's session or the admin token alone are refused", async () => {
    for (const r of of("operator")) {
      for (const creds of [{} as Record<string, string>, { cookie: holderCookie }, admin]) {
        const res = await call(r, { origin, ...creds }, isForm(r));
        if (isForm(r)) {
          expect(res.status, res.label).toBe(303);
          expect(res.headers.get("location"), res.label).toBe("/dashboard/operator/login");
        } else {
          expect(res.status, res.label).toBe(401);
          expectCode(res, "not_signed_in");
        }
      }
    }
  });

  test("every state-changing dashboard route refuses a wrong Origin with 403, signed in or not", async () => {
    const changing = routes.filter(
      (r) =>
        (r.cls === "session" || r.cls === "operator" || r.cls === "public") &&
        r.method !== "GET" &&
        r.path.startsWith("/dashboard"),
    );
    expect(changing.length).toBeGreaterThan(5);
    for (const r of changing) {
      const cookie = r.cls === "operator" ? operatorCookie : holderCookie;
      for (const o of [{ origin: "https://evil.example" }, { origin: "null" }]) {
        const res = await call(r, { ...o, cookie }, isForm(r));
        expect(res.status, res.label).toBe(403);
      }
    }
  });

  test("every dashboard form answers 303 to a page, refused or not, never a page of its own (Post/Redirect/Get); that page says why", async () => {
    // a page answered to a form post is posted again by a reload: a wrong password would count twice
    // toward the guessing limit (docs/dashboard.md). Each form is sent empty or about an unknown id,
    // so each is refused: by its own checks, never by the edge (the matrix's other tests cover that)
    const forms = routes.filter((r) => r.method === "POST" && r.path.startsWith("/dashboard") && isForm(r));
    expect(forms.length).toBeGreaterThan(15);
    for (const r of forms) {
      // the public forms with no session (sign-out would end the matrix's own)
      const cookie = r.cls === "operator" ? operatorCookie : r.cls === "session" ? holderCookie : "";
      const res = await call(r, { origin, ...(cookie ? { cookie } : {}), ...freshClient() }, true);
      expect(res.status, res.label).toBe(303);
      expect(res.text, res.label).toBe("");
      expect(res.headers.get("content-type") ?? "", res.label).not.toContain("text/html");
      const to = res.headers.get("location") ?? "";
      expect(to, res.label).toMatch(/^\/dashboard(\/|$)/);
      if (r.path === "/dashboard/logout") continue;
      // the page it names, asked as a browser asks it after the redirect: the refusal is said there
      const flash = res.headers.getSetCookie().find((c) => c.startsWith("textai_flash="));
      expect(flash, res.label).toBeDefined();
      const jar = [cookie, flash?.split(";")[0]].filter(Boolean).join("; ");
      const page = await fetch(gw.url + to, { headers: { cookie: jar }, redirect: "manual" });
      expect(await page.text(), `${res.label} -> ${to}: ${page.status}`).toContain('role="alert"');
    }
  }, 30_000);

  test("a page the edge refuses with its body unread closes the connection (the body is never read as a next request)", async () => {
    const c = new RawConnection(gw.port);
    await c.ready;
    const body = "label=x";
    c.write(
      `POST /dashboard/keys HTTP/1.1\r\nHost: ${new URL(gw.url).host}\r\nOrigin: ${origin}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    const res = await c.next(5000);
    expect(res?.status).toBe(303);
    expect(res?.headers.location).toBe("/dashboard/login");
    expect(res?.headers.connection).toBe("close");
    c.destroy();
  });
});
