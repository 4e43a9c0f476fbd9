/**
 * Who a single sign-on is (docs/sso.md#matching), through a real server on a real SQLite file and a
 * real OpenID provider (test/helpers/oidc-issuer.ts, where a user's login is its `sub`):
 *  - a member is bound to the provider's (issuer, subject) at its first sign-in; another subject
 *    whose email claim is that member's (in any case) is refused with a page that says why, no
 *    session, no role change, and a warn-level log (until 2026-12-06 it got the member's session,
 *    and its groups demoted the member);
 *  - a member whose email changes at the provider keeps its member (the email moved, audited), and
 *    keeps its own email when the new one is another member's; no second member is made;
 *  - a member made before binding (the account's password owner; a member made by single sign-on
 *    before binding began, its row as the upgrade leaves it) is bound by its email on its first
 *    sign-in, once (`member.sso.bind`); after that only its subject is it;
 *  - a missing `email_verified` claim is refused as unverified, unless
 *    `sso.trust_missing_email_verified` is set; `email_verified: false` is refused always.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { startIssuer, type TestIssuer } from "../helpers/oidc-issuer";

const TOKEN = "admin-token-for-the-sso-identity-test-0123456789";
const admin = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

// biome-ignore lint/suspicious/noExplicitAny: the tests walk the envelope; their assertions check its shape
type Json = Record<string, any>;

let dir: string;
let db: string;
let port: number;
let gw: TestGateway;
let issuer: TestIssuer;
let origin: string;
let account: string;
let ownerId: string;

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const p = s.port as number;
  s.stop(true);
  return p;
}

async function signIn(login: string) {
  const { callback: url, ssoCookie } = await issuer.signIn(`${origin}/dashboard/sso/start`, login);
  const res = await fetch(url, { redirect: "manual", headers: { cookie: ssoCookie } });
  const session = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0] as string)
    .find((c) => c.startsWith("textai_session=") && c.length > "textai_session=".length);
  return { status: res.status, text: await res.text(), session: session ?? null };
}

const members = async () => {
  const res = await fetch(`${origin}/admin/v1/accounts/${account}/members`, { headers: admin });
  return ((await res.json()) as Json).data.result.data as { email: string; role: string; id: string }[];
};
const auditOf = async (memberId: string) => {
  const res = await fetch(`${origin}/admin/v1/audit?account_id=${account}&limit=500`, { headers: admin });
  // the member's changes (its sign-ins, `member.sso.signin`, left out)
  return (((await res.json()) as Json).data.result.data as Json[]).filter(
    (e) => e.target_id === memberId && e.action !== "member.sso.signin",
  );
};
const warnings = () =>
  gw.logs.map((l) => JSON.parse(l) as Record<string, string>).filter((l) => l.level === "warn" && l.msg?.startsWith("single"));

async function serve(extra = "") {
  const redirectUri = `http://127.0.0.1:${port}/dashboard/sso/callback`;
  gw = await startGateway({
    env: { TEXTAI_DB: db, TEXTAI_ADMIN_TOKEN: TOKEN, PORT: String(port), TEXTAI_SSO_CLIENT_SECRET: issuer.clientSecret },
    configText: `[sso]
issuer = "${issuer.url}"
client_id = "${issuer.clientId}"
redirect_uri = "${redirectUri}"
${extra}
[[sso.map]]
group = "leads"
account = "${account}"
role = "admin"

[[sso.map]]
group = "eng"
account = "${account}"
role = "developer"
`,
  });
  origin = gw.url;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "textai-sso-identity-"));
  db = join(dir, "sso.db");
  const first = await startGateway({ env: { TEXTAI_DB: db, TEXTAI_ADMIN_TOKEN: TOKEN } });
  origin = first.url;
  const made = await fetch(`${origin}/admin/v1/accounts`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ email: "owner@acme.test", password: "a long enough password", credits: 10 }),
  });
  account = ((await made.json()) as Json).data.result.id;
  ownerId = ((await members()).find((m) => m.email === "owner@acme.test") as { id: string }).id;
  await first.close();
  port = freePort();
  issuer = await startIssuer({
    redirectUri: `http://127.0.0.1:${port}/dashboard/sso/callback`,
    users: {
      alice: { email: "alice@acme.test", email_verified: true, groups: ["leads"] },
      mallory: { email: "Alice@ACME.test", email_verified: true, groups: ["eng"] },
      bob: { email: "bob@acme.test", email_verified: true, groups: ["eng"] },
      olga: { email: "owner@acme.test", email_verified: true, groups: ["leads"] },
      oscar: { email: "OWNER@acme.test", email_verified: true, groups: ["leads"] },
      nova: { email: "nova@acme.test", groups: ["eng"] },
      erin: { email: "erin@acme.test", email_verified: false, groups: ["eng"] },
    },
  });
  await serve();
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await issuer?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("single sign-on: a member is its provider's subject, not its email", () => {
  test("another subject with a member's email (in another case) is refused: no session, no role change, a warn log", async () => {
    const a = await signIn("alice");
    expect(a.status, a.text).toBe(200);
    const alice = (await members()).find((m) => m.email === "alice@acme.test");
    expect(alice?.role).toBe("admin");

    const m = await signIn("mallory");
    expect(m.status, m.text).toBe(403);
    expect(m.text).toContain("alice@acme.test belongs to a member of this gateway who signs in as another identity");
    expect(m.session).toBeNull();
    expect((await members()).find((x) => x.id === alice?.id)?.role).toBe("admin");
    expect((await auditOf(alice?.id as string)).map((e) => e.action)).toEqual(["member.join"]);
    expect((await auditOf(alice?.id as string))[0]?.after).toMatchObject({ via: "sso", sso_subject: "alice" });
    expect(warnings().some((l) => l.msg === "single sign-on refused" && l.reason?.includes("another identity"))).toBe(true);

    // the real alice still signs in, as the same member
    const again = await signIn("alice");
    expect(again.status, again.text).toBe(200);
    expect((await members()).filter((x) => x.email === "alice@acme.test").map((x) => x.id)).toEqual([alice?.id as string]);
  });

  test("an email changed at the provider keeps the member (the email moved, audited); one another member has is kept", async () => {
    expect((await signIn("bob")).status).toBe(200);
    const bob = (await members()).find((m) => m.email === "bob@acme.test");
    const count = (await members()).length;

    issuer.users.set("bob", { ...issuer.users.get("bob"), email: "Robert@acme.test" });
    const moved = await signIn("bob");
    expect(moved.status, moved.text).toBe(200);
    const now = await members();
    expect(now.length).toBe(count);
    expect(now.find((m) => m.id === bob?.id)?.email).toBe("robert@acme.test");
    expect(now.some((m) => m.email === "bob@acme.test")).toBe(false);
    const home = await fetch(`${origin}/dashboard`, { headers: { cookie: moved.session as string } });
    expect(await home.text()).toContain("robert@acme.test");
    expect((await auditOf(bob?.id as string)).find((e) => e.action === "member.email.update")).toMatchObject({
      actor: "sso",
      before: { email: "bob@acme.test" },
      after: { email: "robert@acme.test" },
    });

    // the provider now gives bob alice's email: bob is still bob, alice keeps hers
    issuer.users.set("bob", { ...issuer.users.get("bob"), email: "alice@acme.test" });
    const clash = await signIn("bob");
    expect(clash.status, clash.text).toBe(200);
    const after = await members();
    expect(after.find((m) => m.id === bob?.id)?.email).toBe("robert@acme.test");
    expect(after.filter((m) => m.email === "alice@acme.test").length).toBe(1);
    expect(warnings().some((l) => l.msg === "single sign-on kept a member's email" && l.member === bob?.id)).toBe(true);
  });

  test("a member made before binding is bound by its email on its first sign-in, once; then another subject is refused", async () => {
    const olga = await signIn("olga");
    expect(olga.status, olga.text).toBe(200);
    expect((await members()).filter((m) => m.email === "owner@acme.test").map((m) => m.id)).toEqual([ownerId]);
    expect((await auditOf(ownerId)).find((e) => e.action === "member.sso.bind")).toMatchObject({
      actor: "sso",
      before: { sso_subject: null },
      after: { sso_subject: "olga" },
    });
    const oscar = await signIn("oscar");
    expect(oscar.status, oscar.text).toBe(403);
    expect(oscar.session).toBeNull();
    expect(oscar.text).toContain("signs in as another identity");
    expect((await signIn("olga")).status).toBe(200);
    expect((await auditOf(ownerId)).filter((e) => e.action === "member.sso.bind").length).toBe(1);

    // a member made by single sign-on before binding began: its row as the upgrade left it (no subject)
    const alice = (await members()).find((m) => m.email === "alice@acme.test") as { id: string };
    const file = new Database(db);
    file.query("UPDATE members SET sso_issuer = NULL, sso_subject = NULL WHERE id = ?").run(alice.id);
    file.close();
    expect((await signIn("alice")).status).toBe(200);
    expect((await auditOf(alice.id)).filter((e) => e.action === "member.sso.bind").map((e) => e.after)).toEqual([
      { sso_issuer: issuer.url, sso_subject: "alice" },
    ]);
    expect((await signIn("mallory")).status).toBe(403);
  });

  test("a missing email_verified is refused as unverified; trust_missing_email_verified takes it; false is refused always", async () => {
    const nova = await signIn("nova");
    expect(nova.status, nova.text).toBe(403);
    expect(nova.text).toContain("did not say your email address is verified");
    expect(nova.text).toContain("sso.trust_missing_email_verified");
    expect(nova.session).toBeNull();
    expect((await members()).some((m) => m.email === "nova@acme.test")).toBe(false);

    await gw.close();
    await serve("trust_missing_email_verified = true\n");
    const trusted = await signIn("nova");
    expect(trusted.status, trusted.text).toBe(200);
    expect((await members()).find((m) => m.email === "nova@acme.test")?.role).toBe("developer");
    const erin = await signIn("erin");
    expect(erin.status, erin.text).toBe(403);
    expect(erin.text).toContain("not verified");
  }, 20_000);
});
