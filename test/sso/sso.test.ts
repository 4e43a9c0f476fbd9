/**
 * Single sign-on with OpenID Connect (docs/sso.md, CONTRACT section 17) through a real server on a
 * real SQLite file, against a real OpenID provider started here (test/helpers/oidc-issuer.ts: the
 * `oidc-provider` package behind a front server that can alter its ID tokens):
 *  - a member is made on first sign-in with the role its group maps to; a later sign-in with other
 *    groups changes the role (audited, actor `sso`); an email domain maps too; an unmapped identity,
 *    an unverified email and an email of another account's member are refused, saying why, with
 *    no session (a map to an account that does not exist stops the start:
 *    test/core/config-start-refusals.test.ts);
 *  - a wrong and a reused `state`, a callback without the browser's sign-in cookie or with an
 *    altered one, an ID token that is expired, carries another nonce or is signed by a key the
 *    issuer never published: each refused with a page that says why, and no session; an issuer out
 *    of reach at the callback is a 503 "could not be reached", not a failed verification;
 *  - the operator console through the issuer's groups (`?operator=1`), refused to others;
 *  - `sso_required`: the account's members' passwords are refused (another account's still work),
 *    and an invitation to it is refused up front (409) by the admin API, the CLI and the Members page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shown, submit } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { startIssuer, type TestIssuer } from "../helpers/oidc-issuer";

const TOKEN = "admin-token-for-the-sso-test-0123456789abcdef";
const admin = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const PASSWORD = "a long enough password";

// biome-ignore lint/suspicious/noExplicitAny: the tests walk the envelope; their assertions check its shape
type Json = Record<string, any>;

let dir: string;
let gw: TestGateway;
let issuer: TestIssuer;
let origin: string;
let accA: string;
let accB: string;
let db: string;
let configPath: string;
const CLI = join(import.meta.dir, "../../src/cli.ts");

/** a port free now, for the gateway whose callback URL the issuer must know before it starts */
function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port as number;
  s.stop(true);
  return port;
}

async function adminPost(path: string, body: unknown) {
  const res = await fetch(origin + path, { method: "POST", headers: admin, body: JSON.stringify(body) });
  const json = (await res.json()) as Json;
  expect(res.status, JSON.stringify(json)).toBeLessThan(300);
  return json.data.result;
}

/** The callback as the browser would open it (with the gateway's sign-in cookie): status, page, session cookie. */
async function callback(url: string, ssoCookie: string) {
  const res = await fetch(url, { redirect: "manual", headers: ssoCookie ? { cookie: ssoCookie } : {} });
  const session = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0] as string)
    .find((c) => c.startsWith("textai_session=") && c.length > "textai_session=".length);
  return { status: res.status, text: await res.text(), session: session ?? null };
}

const signIn = async (login: string, operator = false) => {
  const { callback: url, ssoCookie } = await issuer.signIn(
    `${origin}/dashboard/sso/start${operator ? "?operator=1" : ""}`,
    login,
  );
  return { ...(await callback(url, ssoCookie)), url, ssoCookie };
};
const page = (path: string, session: string) => fetch(origin + path, { redirect: "manual", headers: { cookie: session } });
const members = async (account: string) => {
  const res = await fetch(`${origin}/admin/v1/accounts/${account}/members`, { headers: admin });
  return ((await res.json()) as Json).data.result.data as { email: string; role: string; id: string }[];
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "textai-sso-"));
  db = join(dir, "sso.db");
  // the accounts the map names exist before the gateway reads the map
  const first = await startGateway({ env: { TEXTAI_DB: db, TEXTAI_ADMIN_TOKEN: TOKEN } });
  origin = first.url;
  accA = (await adminPost("/admin/v1/accounts", { email: "owner@corp.example", password: PASSWORD, credits: 10 })).id;
  accB = (await adminPost("/admin/v1/accounts", { email: "owner@partner.example", password: PASSWORD, credits: 10 })).id;
  await first.close();

  const port = freePort();
  const redirectUri = `http://127.0.0.1:${port}/dashboard/sso/callback`;
  issuer = await startIssuer({
    redirectUri,
    users: {
      alice: { email: "alice@corp.example", email_verified: true, name: "Alice", groups: ["eng"] },
      bob: { email: "bob@corp.example", email_verified: true, groups: ["gateway-admins"] },
      carol: { email: "Carol@Partner.example", email_verified: true, name: "Carol" },
      dave: { email: "dave@elsewhere.example", email_verified: true, groups: ["marketing"] },
      erin: { email: "erin@partner.example", email_verified: false },
      owen: { email: "owner@partner.example", email_verified: true, groups: ["eng"] },
      olga: { email: "owner@corp.example", email_verified: true, groups: ["eng"] },
    },
  });
  const toml = `
[sso]
issuer = "${issuer.url}"
client_id = "${issuer.clientId}"
redirect_uri = "${redirectUri}"
operator_groups = ["gateway-admins"]
sso_required = ["${accA}"]

[[sso.map]]
group = "eng-leads"
account = "${accA}"
role = "admin"

[[sso.map]]
group = "eng"
account = "${accA}"
role = "developer"

[[sso.map]]
email_domain = "partner.example"
account = "${accB}"
role = "viewer"

`;
  configPath = join(dir, "sso.toml");
  await Bun.write(configPath, toml);
  gw = await startGateway({
    env: { TEXTAI_DB: db, TEXTAI_ADMIN_TOKEN: TOKEN, PORT: String(port), TEXTAI_SSO_CLIENT_SECRET: issuer.clientSecret },
    configText: toml,
  });
  origin = gw.url;
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await issuer?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("single sign-on: members and roles from the issuer's groups", () => {
  test("a first sign-in makes the member with its group's role; the session is theirs and the role holds", async () => {
    const r = await signIn("alice");
    expect(r.status, r.text).toBe(200);
    expect(r.session).not.toBeNull();
    const alice = (await members(accA)).find((m) => m.email === "alice@corp.example");
    expect(alice?.role).toBe("developer");
    const home = await page("/dashboard", r.session as string);
    expect(home.status).toBe(200);
    expect(await home.text()).toContain("alice@corp.example");
    // a developer may not read the audit trail (admins and owners may)
    expect((await page("/dashboard/audit", r.session as string)).status).toBe(403);
    // made without a password: none signs in as them
    const pw = await submit(origin, "/dashboard/login", { email: "alice@corp.example", password: "!sso" });
    expect([pw.posted.status, pw.page?.status], shown(pw)).toEqual([303, 401]);
  });

  test("a later sign-in with other groups changes the role (audited, actor sso); the new session has it", async () => {
    issuer.users.set("alice", { ...issuer.users.get("alice"), groups: ["eng", "eng-leads"] });
    const r = await signIn("alice");
    expect(r.status, r.text).toBe(200);
    const alice = (await members(accA)).find((m) => m.email === "alice@corp.example");
    expect(alice?.role).toBe("admin");
    expect((await page("/dashboard/audit", r.session as string)).status).toBe(200);
    const audit = await fetch(`${origin}/admin/v1/audit?account_id=${accA}&limit=50`, { headers: admin });
    const entries = ((await audit.json()) as Json).data.result.data as Json[];
    const mine = entries.filter((e) => e.target_id === alice?.id && e.action !== "member.sso.signin");
    expect(mine.map((e) => e.action).sort()).toEqual(["member.join", "member.role.update"]);
    expect(mine.find((e) => e.action === "member.join")?.after).toMatchObject({ email: "alice@corp.example", via: "sso" });
    expect(mine.find((e) => e.action === "member.role.update")).toMatchObject({
      actor: "sso",
      before: { role: "developer" },
      after: { role: "admin" },
    });
  });

  test("an email domain maps too (case folded); an unverified email, an unmapped identity and another account's email are refused", async () => {
    const carol = await signIn("carol");
    expect(carol.status, carol.text).toBe(200);
    expect((await members(accB)).find((m) => m.email === "carol@partner.example")?.role).toBe("viewer");

    const refusals: [string, number, string][] = [
      ["erin", 403, "not verified"],
      ["dave", 403, "No account of this gateway is mapped to dave@elsewhere.example"],
      // owner@partner.example is account B's owner; the "eng" group maps it to account A
      ["owen", 403, "already a member of another account"],
    ];
    for (const [login, status, why] of refusals) {
      const r = await signIn(login);
      expect(r.status, `${login}: ${r.text}`).toBe(status);
      expect(r.text).toContain(why);
      expect(r.session).toBeNull();
    }
    expect((await members(accA)).map((m) => m.email)).not.toContain("owner@partner.example");
  });
});

describe("single sign-on: the flow's checks", () => {
  test("a wrong state, a missing or altered sign-in cookie and a reused state are refused, with no session", async () => {
    const { callback: url, ssoCookie } = await issuer.signIn(`${origin}/dashboard/sso/start`, "alice");
    const wrong = new URL(url);
    wrong.searchParams.set("state", "a-state-this-browser-never-started");
    const w = await callback(wrong.href, ssoCookie);
    expect(w.status).toBe(400);
    expect(w.text).toContain("state does not match");
    expect(w.session).toBeNull();

    const none = await callback(url, "");
    expect(none.status).toBe(400);
    expect(none.text).toContain("not started in this browser");
    const [name, value] = ssoCookie.split("=") as [string, string];
    const forged = await callback(url, `${name}=${value.slice(0, -4)}AAAA`);
    expect(forged.status).toBe(400);
    expect(forged.session).toBeNull();

    // the real one still works once; its replay is refused before the issuer is asked
    const ok = await callback(url, ssoCookie);
    expect(ok.status, ok.text).toBe(200);
    const calls = issuer.tokenCalls;
    const again = await callback(url, ssoCookie);
    expect(again.status).toBe(400);
    expect(again.text).toContain("already used");
    expect(again.session).toBeNull();
    expect(issuer.tokenCalls).toBe(calls);
  });

  for (const [tamper, why] of [
    ["expired", "expiration is past"],
    ["nonce", "&quot;nonce&quot; claim value"],
    ["foreign-key", "signature verification failed"],
  ] as const) {
    test(`an ID token ${tamper === "foreign-key" ? "signed by a key the issuer never published" : tamper === "nonce" ? "with another nonce" : "that has expired"} is refused, with no session`, async () => {
      issuer.tamper = tamper;
      try {
        const r = await signIn("alice");
        expect(r.status, r.text).toBe(403);
        expect(r.text).toContain("failed verification");
        expect(r.text).toContain(why);
        expect(r.session).toBeNull();
      } finally {
        issuer.tamper = null;
      }
    });
  }

  test("an issuer out of reach at the callback (its token endpoint and keys) answers 503, not a failed verification; back, it works", async () => {
    // the start discovered the issuer; it goes away before the code is exchanged
    const { callback: url, ssoCookie } = await issuer.signIn(`${origin}/dashboard/sso/start`, "alice");
    issuer.down();
    try {
      const r = await callback(url, ssoCookie);
      expect(r.status, r.text).toBe(503);
      expect(r.text).toContain("The identity provider could not be reached (");
      expect(r.text).not.toContain("failed verification");
      expect(r.session).toBeNull();
    } finally {
      issuer.up();
    }
    const again = await signIn("alice");
    expect(again.status, again.text).toBe(200);
  });

  test("the issuer's refusal (an error on the callback) is shown, with no session", async () => {
    const { callback: url, ssoCookie } = await issuer.signIn(`${origin}/dashboard/sso/start`, "alice");
    const state = new URL(url).searchParams.get("state") as string;
    const denied = `${origin}/dashboard/sso/callback?error=access_denied&error_description=End-User+aborted&state=${state}`;
    const r = await callback(denied, ssoCookie);
    expect(r.status).toBe(403);
    expect(r.text).toContain("access_denied");
    expect(r.session).toBeNull();
  });
});

describe("single sign-on: the operator console and sso_required", () => {
  test("the operator's groups open the console; anyone else is refused", async () => {
    const bob = await signIn("bob", true);
    expect(bob.status, bob.text).toBe(200);
    expect(bob.text).toContain("/dashboard/operator");
    expect((await page("/dashboard/operator", bob.session as string)).status).toBe(200);
    const alice = await signIn("alice", true);
    expect(alice.status).toBe(403);
    expect(alice.text).toContain("operator console");
    expect(alice.session).toBeNull();
  });

  test("an operator signed in by single sign-on is the actor of its console changes (operator:EMAIL); its sign-in and a member's are audited", async () => {
    const bob = await signIn("bob", true);
    expect(bob.status, bob.text).toBe(200);
    const grant = await submit(
      origin,
      `/dashboard/operator/accounts/${accB}/credits`,
      { amount: "5", reason: "granted by an sso operator" },
      { cookie: bob.session as string },
    );
    expect([grant.posted.status, grant.page?.status], shown(grant)).toEqual([303, 200]);
    const read = async (q: string) =>
      ((await (await fetch(`${origin}/admin/v1/audit?${q}&limit=100`, { headers: admin })).json()) as Json).data.result
        .data as Json[];
    const granted = (await read(`account_id=${accB}&action=credits.grant`)).find(
      (e) => e.after?.reason === "granted by an sso operator",
    );
    expect(granted?.actor).toBe("operator:bob@corp.example");
    // the trail's actor filter finds them by it
    expect((await read("actor=operator:bob@corp.example")).map((e) => e.action)).toContain("credits.grant");
    expect((await read("action=operator.sso.signin"))[0]).toMatchObject({
      actor: "operator:bob@corp.example",
      account_id: null,
      after: { email: "bob@corp.example", sso_subject: "bob", sso_issuer: issuer.url },
    });
    const alice = (await members(accA)).find((m) => m.email === "alice@corp.example");
    const aliceIn = (await read(`account_id=${accA}&action=member.sso.signin`)).filter((e) => e.actor === alice?.id);
    expect(aliceIn.length).toBeGreaterThan(0);
    expect(aliceIn[0]).toMatchObject({ target_id: alice?.id, after: { email: "alice@corp.example", sso_subject: "alice" } });
  });

  test("an account with sso_required takes no password; another account's password still works", async () => {
    // refused like any form: a 303 to the sign-in page, which says why (Post/Redirect/Get)
    const a = await submit(origin, "/dashboard/login", { email: "owner@corp.example", password: PASSWORD });
    expect([a.posted.status, a.page?.status], shown(a)).toEqual([303, 403]);
    expect(a.page?.body).toContain("single sign-on only");
    expect(a.posted.headers["set-cookie"] ?? "").not.toContain("textai_session=");
    const b = await submit(origin, "/dashboard/login", { email: "owner@partner.example", password: PASSWORD });
    expect([b.posted.status, b.location], shown(b)).toEqual([303, "/dashboard"]);
  });

  test("an account with sso_required takes no invitation on any way in: admin API, CLI, Members page (409 saying why, nothing made)", async () => {
    const before = (await members(accA)).length;
    const res = await fetch(`${origin}/admin/v1/accounts/${accA}/members`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ email: "newcomer@corp.example", role: "viewer" }),
    });
    const body = (await res.json()) as Json;
    expect(res.status, JSON.stringify(body)).toBe(409);
    expect(body.error.code).toBe("conflict");
    expect(body.error.message).toContain("requires single sign-on (sso_required) and takes no invitation");

    const args = ["members", "add", "--account", accA, "--email", "newcomer@corp.example", "--role", "viewer"];
    const r = Bun.spawnSync([process.execPath, CLI, ...args], {
      env: { ...process.env, TEXTAI_DB: db, TEXTAI_CONFIG: configPath, TEXTAI_SSO_CLIENT_SECRET: issuer.clientSecret },
      stdin: "ignore",
    });
    expect(r.exitCode, r.stderr.toString()).toBe(1);
    expect(r.stderr.toString()).toContain("takes no invitation");
    expect(r.stdout.toString()).not.toContain("the link works once");

    // the account's owner, signed in through the issuer (the last owner keeps the role), on the Members page
    const owner = await signIn("olga");
    expect(owner.status, owner.text).toBe(200);
    const list = await (await page("/dashboard/members", owner.session as string)).text();
    expect(list).not.toContain('action="/dashboard/members" class="card narrow"');
    expect(list).toContain("takes no invitation");
    const form = await submit(
      origin,
      "/dashboard/members",
      { email: "newcomer@corp.example", role: "viewer" },
      {
        cookie: owner.session as string,
      },
    );
    expect([form.posted.status, form.page?.status], shown(form)).toEqual([303, 409]);
    expect(form.page?.body).toContain("takes no invitation");
    expect((await members(accA)).length).toBe(before);
  }, 20_000);
});
