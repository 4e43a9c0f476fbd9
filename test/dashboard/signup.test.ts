// Open sign-up (docs/security.md): every sign-up counts per client address; a new account is signed
// in and sent to its overview (Post/Redirect/Get), a taken email to the sign-in page with nothing
// changed; `[dashboard] signup_credits` sets what a new account receives. The sign-in page says how
// accounts are made on the gateway.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { SIGN_IN_LIMITS } from "../../src/dashboard/guessing";
import { shown, submit } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { type RawResponse, requestFrom } from "../helpers/raw-http";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ configText: "[dashboard]\nsignup = true\n" });
});
afterAll(() => gw.close());

/**
 * A sign-up from `from`, as its sender sees the outcome: the answer (a 303: signed in, or the taken
 * email's redirect), or, refused (a 303 too, back to the form: Post/Redirect/Get), the page it leads
 * to, whose status is the refusal's.
 */
async function signUp(from: string, email: string, password: string, g = gw) {
  const s = await submit(g.url, "/dashboard/signup", { email, password }, { from });
  expect(s.posted.status, shown(s)).toBe(303);
  return s.location === "/dashboard/signup" ? s.page : s.posted;
}
const show = (r: RawResponse | null) => `${r?.status} ${r?.body.slice(0, 300)}`;

async function balanceOf(g: TestGateway, email: string, password: string): Promise<number> {
  const res = await requestFrom(g.url, "127.0.0.1", "POST", "/dashboard/login", { form: { email, password } });
  expect(res?.status, show(res)).toBe(303);
  const cookie = (res?.headers["set-cookie"] ?? "").split(";")[0];
  return (await g.get("/dashboard/api/overview", { cookie })).json.data.result.usage.balance;
}

test("every sign-up from an address counts, the successful ones included: the sixth in a day is refused", async () => {
  const from = "127.0.8.1";
  for (let i = 0; i < SIGN_IN_LIMITS.signUpsPerClient; i++) {
    const r = await signUp(from, `farm${i}@example.com`, "a long enough password");
    expect(r?.status, show(r)).toBe(303);
  }
  const refused = await signUp(from, "farm-extra@example.com", "a long enough password");
  expect(refused?.status, show(refused)).toBe(429);
  expect(Number(refused?.headers["retry-after"])).toBeGreaterThan(3600);
  expect(refused?.body).toContain("Too many sign-ups from this address");
  // nothing was made by the refused one; the five were, each with no credits (signup_credits defaults to 0)
  expect((await gw.deps.dashboard.loginByEmail("farm-extra@example.com")) === null).toBe(true);
  expect(await balanceOf(gw, "farm0@example.com", "a long enough password")).toBe(0);
  // another address is not affected
  expect((await signUp("127.0.8.2", "other@example.com", "a long enough password"))?.status).toBe(303);
}, 30_000);

test("a new account is signed in and redirected to its overview; a reload of that address repeats no sign-up", async () => {
  const r = await signUp("127.0.8.3", "Fresh@Example.com", "fresh's long password");
  expect(r?.status, show(r)).toBe(303);
  expect(r?.headers.location).toBe("/dashboard");
  expect(r?.body).toBe("");
  const setCookie = r?.headers["set-cookie"] ?? "";
  expect(setCookie).toMatch(/^textai_session=[^;]+; Path=\/dashboard; HttpOnly; SameSite=Strict/);
  const cookie = setCookie.split(";")[0];
  // the redirect's target, as the browser follows it (a GET: what a reload repeats)
  for (let i = 0; i < 2; i++) {
    const overview = await fetch(`${gw.url}/dashboard`, { headers: { cookie }, redirect: "manual" });
    expect(overview.status).toBe(200);
    const text = await overview.text();
    expect(text).toContain("<h1>Overview</h1>");
    expect(text).toContain("fresh@example.com");
  }
  // signup_credits defaults to 0 (open sign-up is no credit faucet)
  expect((await gw.get("/dashboard/api/overview", { cookie })).json.data.result.usage.balance).toBe(0);
  expect((await gw.deps.dashboard.searchAccounts("fresh@example.com", 10)).length).toBe(1);
}, 30_000);

test("a taken email: redirected to sign in, not signed in, the account unchanged", async () => {
  expect((await signUp("127.0.8.4", "taken@example.com", "the owner's password"))?.status).toBe(303);
  const taken = await signUp("127.0.8.5", "taken@example.com", "a stranger's password");
  expect(taken?.status, show(taken)).toBe(303);
  expect(taken?.headers.location).toBe("/dashboard/login?signup=taken");
  expect(taken?.headers["set-cookie"]).toBeUndefined();
  const page = await fetch(`${gw.url}/dashboard/login?signup=taken`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("This email address already has an account, and nothing about it has changed");
  // the owner's password still signs in; the stranger's opened nothing; still one account
  expect(await balanceOf(gw, "taken@example.com", "the owner's password")).toBe(0);
  const stranger = await submit(
    gw.url,
    "/dashboard/login",
    { email: "taken@example.com", password: "a stranger's password" },
    { from: "127.0.8.6" },
  );
  expect(stranger.page?.status, shown(stranger)).toBe(401);
  expect((await gw.deps.dashboard.searchAccounts("taken@example.com", 10)).length).toBe(1);
}, 30_000);

/** The sign-in page's text of `selector`, tags dropped and spaces folded; null when it is not there. */
async function loginText(g: TestGateway, selector: "links" | "how-accounts"): Promise<string | null> {
  const page = await (await fetch(`${g.url}/dashboard/login`)).text();
  const m =
    selector === "links" ? /<p class="links">(.*?)<\/p>/s.exec(page) : /<p class="hint" id="how-accounts">(.*?)<\/p>/s.exec(page);
  return m
    ? m[1]
        .replace(/<[^>]+>/g, "")
        .replace(/\s+/g, " ")
        .trim()
    : null;
}

test("the sign-in page says how accounts are made, and its links have a separator only between two", async () => {
  // open sign-up, no admin token: one link, no stray separator
  expect(await loginText(gw, "links")).toBe("Create an account");
  expect(await loginText(gw, "how-accounts")).toContain("Anyone may create one");
  const admin = "operator-token-for-signup-page-tests-0123";
  const both = await startGateway({ configText: "[dashboard]\nsignup = true\n", env: { TEXTAI_ADMIN_TOKEN: admin } });
  const operatorOnly = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: admin } });
  const neither = await startGateway();
  try {
    expect(await loginText(both, "links")).toBe("Create an account · Operator sign-in");
    expect(await loginText(operatorOnly, "links")).toBe("Operator sign-in");
    expect(await loginText(neither, "links")).toBeNull();
    for (const [i, g] of [operatorOnly, neither].entries()) {
      const how = (await loginText(g, "how-accounts")) ?? "";
      expect(how).toContain("made by its operator");
      // the command it names makes an account that signs in, as written (npx -y bun@1.4.5 is the bun running this test)
      const command = /npx -y bun@1\.4\.5 (\S+) (.*) with the password/.exec(how);
      expect(command, how).not.toBeNull();
      const [, script, args] = command as RegExpExecArray;
      const email = `made-by-cli-${i}@example.com`;
      const run = Bun.spawnSync([process.execPath, script, ...args.replace("EMAIL", email).split(" ")], {
        cwd: join(import.meta.dir, "../.."),
        env: { ...process.env, TEXTAI_DB: g.dbPath },
        stdin: new TextEncoder().encode("the cli's long password\n"),
      });
      expect(run.exitCode, run.stderr.toString()).toBe(0);
      expect(await balanceOf(g, email, "the cli's long password")).toBe(100);
    }
    // ?signup=taken says nothing where sign-up is closed
    expect(await (await fetch(`${neither.url}/dashboard/login?signup=taken`)).text()).not.toContain("already has an account");
  } finally {
    await both.close();
    await operatorOnly.close();
    await neither.close();
  }
}, 60_000);

test("a malformed sign-up is refused with the reason and counts nothing", async () => {
  const from = "127.0.8.7";
  for (let i = 0; i < SIGN_IN_LIMITS.signUpsPerClient + 2; i++) {
    const r = await signUp(from, "short@example.com", "short");
    expect(r?.status).toBe(400);
    expect(r?.body).toContain("at least 10 characters");
    // the form again, the email filled in, the password to type again
    expect(r?.body).toContain('value="short@example.com"');
    expect(r?.body).toMatch(/id="password"[^>]* autofocus/);
  }
  expect((await signUp(from, "short@example.com", "long enough now"))?.status).toBe(303);
});

test("open sign-up is no credit faucet: without signup_credits a signed-up account gets 0, operator-made accounts keep the welcome credits; signup_credits = 25 gives 25", async () => {
  const admin = "operator-token-for-signup-tests-0123456789";
  const g = await startGateway({
    configText: "welcome_credits = 100\n[dashboard]\nsignup = true\n",
    env: { TEXTAI_ADMIN_TOKEN: admin },
  });
  const given = await startGateway({ configText: "[dashboard]\nsignup = true\nsignup_credits = 25\n" });
  try {
    expect((await signUp("127.0.8.8", "zero@example.com", "zero's long password", g))?.status).toBe(303);
    expect(await balanceOf(g, "zero@example.com", "zero's long password")).toBe(0);
    const made = await g.post(
      "/admin/v1/accounts",
      { email: "made@example.com", password: "made's long password" },
      { authorization: `Bearer ${admin}` },
    );
    expect(made.json.data.result.balance).toBe(100);
    expect((await signUp("127.0.8.9", "some@example.com", "some long password", given))?.status).toBe(303);
    expect(await balanceOf(given, "some@example.com", "some long password")).toBe(25);
  } finally {
    await g.close();
    await given.close();
  }
}, 30_000);
