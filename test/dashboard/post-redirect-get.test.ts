// Post/Redirect/Get (docs/dashboard.md): a dashboard form answers 303 whether it was done or refused,
// and the page it leads to shows the outcome once. Reloading that page asks for it again (a GET):
// nothing is sent again, so a wrong password is never counted twice toward the guessing limit
// (src/dashboard/guessing.ts). What the page shows rides in a sealed cookie: no password in it or in
// a URL, and no other browser can open it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SIGN_IN_LIMITS } from "../../src/dashboard/guessing";
import { cookieValue, type Submitted, shown, submit, withSetCookies } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { requestFrom } from "../helpers/raw-http";

const TOKEN = "operator-token-for-post-redirect-get-tests";
const admin = { authorization: `Bearer ${TOKEN}` };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
});
afterAll(() => gw.close());

// each test from client addresses of its own, with logins of its own: no test sees another's guesses
let nextHost = 2;
const freshAddress = () => `127.0.40.${nextHost++}`;

async function makeLogin(email: string, password: string): Promise<string> {
  const res = await gw.post("/admin/v1/accounts", { email, password }, admin);
  expect(res.status).toBe(201);
  return res.json.data.result.id;
}

async function signedIn(email: string, password: string, from: string): Promise<string> {
  const s = await submit(gw.url, "/dashboard/login", { email, password }, { from });
  expect(s.location, shown(s)).toBe("/dashboard");
  return s.cookie;
}

/** a reload of the page a form led to: the same GET, with the cookies the browser now holds */
const reload = (s: Submitted, from: string) =>
  requestFrom(gw.url, from, "GET", s.location as string, { headers: { cookie: s.cookie } });

describe("a refused form answers 303; its page shows why once; a reload counts nothing", () => {
  test("a wrong current password: 303 to the password page, which says so; reloading it never counts another guess", async () => {
    const from = freshAddress();
    await makeLogin("prg-pat@example.com", "pat's long password");
    let cookie = await signedIn("prg-pat@example.com", "pat's long password", from);
    // one failure short of the per-address limit at the form, each page reloaded three times: were a
    // reload counted, the right password would then be refused (429)
    for (let i = 0; i < SIGN_IN_LIMITS.perClientTarget - 1; i++) {
      const s = await submit(
        gw.url,
        "/dashboard/password",
        { current: `wrong ${i}`, next: "pat's newer password" },
        { cookie, from },
      );
      expect(s.posted.status, shown(s)).toBe(303);
      expect(s.posted.body).toBe("");
      expect(s.posted.headers["content-type"] ?? "").not.toContain("text/html");
      expect(s.location).toBe("/dashboard/password");
      expect(s.page?.status, shown(s)).toBe(400);
      expect(s.page?.body).toContain('role="alert">The current password is wrong.</p>');
      expect(s.page?.body).toMatch(/id="current"[^>]* autofocus/);
      for (const secret of [`wrong ${i}`, "pat's newer password", "newer"]) {
        expect(s.posted.headers.location).not.toContain(secret);
        expect(s.page?.body).not.toContain(secret);
      }
      for (let r = 0; r < 3; r++) {
        const again = await reload(s, from);
        expect(again?.status).toBe(200);
        expect(again?.body).not.toContain("The current password is wrong.");
      }
      cookie = s.cookie;
    }
    const done = await submit(
      gw.url,
      "/dashboard/password",
      { current: "pat's long password", next: "pat's newer password" },
      { cookie, from },
    );
    expect(done.posted.status, shown(done)).toBe(303);
    expect(done.page?.status, shown(done)).toBe(200);
    expect(done.page?.body).toContain("Password changed. Every other session has ended.");
    // the page was asked with the new session the answer opened; its reload is the plain form
    const again = await reload(done, from);
    expect(again?.status).toBe(200);
    expect(again?.body).toContain("<h1>Change password</h1>");
    expect(again?.body).not.toContain("Password changed");
  }, 30_000);

  test("a failed sign-in: 303 to the sign-in page, which says so with the email filled in and the password to type again", async () => {
    const from = freshAddress();
    await makeLogin("prg-sam@example.com", "sam's long password");
    for (let i = 0; i < SIGN_IN_LIMITS.perClientTarget - 1; i++) {
      const s = await submit(gw.url, "/dashboard/login", { email: "prg-sam@example.com", password: `sam guess ${i}` }, { from });
      expect(s.posted.status, shown(s)).toBe(303);
      expect(s.location).toBe("/dashboard/login");
      expect(s.posted.headers["set-cookie"]).toMatch(
        /^textai_flash=[A-Za-z0-9_-]+; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=60$/,
      );
      expect(s.page?.status, shown(s)).toBe(401);
      expect(s.page?.body).toContain('<p class="flash error" role="alert">Wrong email or password.</p>');
      expect(s.page?.body).toContain('value="prg-sam@example.com"');
      expect(s.page?.body).toMatch(/id="password"[^>]* autofocus/);
      expect(s.page?.body).not.toContain(`sam guess ${i}`);
      expect(s.posted.headers["set-cookie"]).not.toContain("guess");
      // the page cleared the flash; its reload is the plain sign-in page, and counts nothing
      expect(s.page?.headers["set-cookie"]).toStartWith("textai_flash=; ");
      for (let r = 0; r < 3; r++) {
        const again = await reload(s, from);
        expect(again?.status).toBe(200);
        expect(again?.body).not.toContain("Wrong email or password.");
        expect(again?.body).not.toContain("prg-sam@example.com");
      }
    }
    const right = await submit(
      gw.url,
      "/dashboard/login",
      { email: "prg-sam@example.com", password: "sam's long password" },
      { from },
    );
    expect(right.location, shown(right)).toBe("/dashboard");
    expect(right.page?.status).toBe(200);
  }, 30_000);

  test("too many guesses: 303 to the page, which answers 429 with Retry-After and the wait", async () => {
    const from = freshAddress();
    await makeLogin("prg-tia@example.com", "tia's long password");
    for (let i = 0; i < SIGN_IN_LIMITS.perClientTarget; i++)
      await submit(gw.url, "/dashboard/login", { email: "prg-tia@example.com", password: `tia guess ${i}` }, { from });
    const s = await submit(
      gw.url,
      "/dashboard/login",
      { email: "prg-tia@example.com", password: "tia's long password" },
      { from },
    );
    expect(s.posted.status, shown(s)).toBe(303);
    expect(s.posted.headers["set-cookie"]).not.toContain("textai_session=");
    expect(s.page?.status, shown(s)).toBe(429);
    expect(Number(s.page?.headers["retry-after"])).toBeGreaterThan(60);
    expect(s.page?.body).toContain("Too many sign-in attempts. Try again in");
  }, 30_000);
});

describe("the flash: shown once, to the browser it was made for, never holding a secret in the clear", () => {
  test("another session, an altered cookie or another page see nothing of it", async () => {
    const from = freshAddress();
    await makeLogin("prg-una@example.com", "una's long password");
    await makeLogin("prg-val@example.com", "val's long password");
    const una = await signedIn("prg-una@example.com", "una's long password", from);
    const val = await signedIn("prg-val@example.com", "val's long password", from);
    const refused = await requestFrom(gw.url, from, "POST", "/dashboard/password", {
      form: { current: "not una's", next: "whatever it is" },
      headers: { cookie: una },
    });
    expect(refused?.status).toBe(303);
    const flash = withSetCookies("", refused?.headers["set-cookie"]);
    expect(cookieValue(flash, "textai_flash")).not.toBe("");
    const page = async (cookie: string, path = "/dashboard/password") =>
      (await requestFrom(gw.url, from, "GET", path, { headers: { cookie } }))?.body ?? "";
    const altered = flash.replace(/.(?=.{20}$)/, (ch) => (ch === "A" ? "B" : "A"));
    expect(await page(`${val}; ${flash}`)).not.toContain("The current password is wrong.");
    expect(await page(`${una}; ${altered}`)).not.toContain("The current password is wrong.");
    expect(await page(`${una}; ${flash}`, "/dashboard/keys")).not.toContain("The current password is wrong.");
    // the browser it was made for, on the page it names, sees it
    expect(await page(`${una}; ${flash}`)).toContain("The current password is wrong.");
  });

  test("a key made without JavaScript: 303 to the keys page, which shows it once; a reload shows it no more and makes no other", async () => {
    const from = freshAddress();
    const accountId = await makeLogin("prg-wes@example.com", "wes's long password");
    const cookie = await signedIn("prg-wes@example.com", "wes's long password", from);
    const s = await submit(gw.url, "/dashboard/keys", { label: "made without script" }, { cookie, from });
    expect(s.posted.status, shown(s)).toBe(303);
    expect(s.location).toBe("/dashboard/keys");
    const key = /<code id="new-key-value">(tai_live_[A-Za-z0-9]+)<\/code>/.exec(s.page?.body ?? "")?.[1] ?? "";
    expect(key, shown(s)).toStartWith("tai_live_");
    expect(s.posted.headers.location).not.toContain(key);
    expect(s.posted.headers["set-cookie"]).not.toContain(key);
    const again = await reload(s, from);
    expect(again?.status).toBe(200);
    expect(again?.body).not.toContain(key);
    expect(again?.body).toContain("made without script");
    expect((await gw.deps.keys.list(accountId)).length).toBe(1);
    // the key works
    const call = await gw.post("/api/v1/ai/sentiment-analysis", { text: "Fine." }, { "x-api-key": key });
    expect(call.status).toBe(200);
  });

  test("a refused key policy: 303 to the keys page, its form open with what was sent and the refusal above it", async () => {
    const from = freshAddress();
    const accountId = await makeLogin("prg-xia@example.com", "xia's long password");
    const cookie = await signedIn("prg-xia@example.com", "xia's long password", from);
    const k = gw.newKey({ accountId });
    const policy = (o: Record<string, string>) => ({
      allowed_functions: "",
      allowed_models: "",
      rate_limit_per_minute: "",
      monthly_credit_limit: "",
      expires_at: "",
      ...o,
    });
    const ok = await submit(gw.url, `/dashboard/keys/${k.id}/policy`, policy({ monthly_credit_limit: "10" }), { cookie, from });
    expect(ok.page?.status, shown(ok)).toBe(200);
    const s = await submit(gw.url, `/dashboard/keys/${k.id}/policy`, policy({ monthly_credit_limit: "12345" }), { cookie, from });
    expect(s.posted.status, shown(s)).toBe(303);
    expect(s.location).toBe("/dashboard/keys");
    expect(s.page?.status, shown(s)).toBe(403);
    expect(s.page?.body).toContain("you can only narrow a key");
    expect(s.page?.body).toContain(
      `<details class="policy" open><summary>Edit policy</summary><form method="post" action="/dashboard/keys/${k.id}/policy"`,
    );
    expect(s.page?.body).toMatch(
      new RegExp(`id="monthly_credit_limit-${k.id}" name="monthly_credit_limit" value="12345" autofocus`),
    );
    expect((await gw.get(`/admin/v1/keys/${k.id}`, admin)).json.data.result.policy.monthly_credit_limit).toBe(10);
  });

  test("an alert endpoint without JavaScript: refused, the form comes back filled in; added, its signing secret is shown once", async () => {
    const from = freshAddress();
    const account = await makeLogin("prg-yan@example.com", "yan's long password");
    // a balance above the threshold: a new endpoint under it would be told at once (docs/alerts.md#events)
    expect((await gw.post(`/admin/v1/accounts/${account}/credits`, { amount: 100 }, admin)).status).toBe(200);
    const cookie = await signedIn("prg-yan@example.com", "yan's long password", from);
    const sent = (url: string) =>
      new URLSearchParams([
        ["url", url],
        ["events", "balance.low"],
        ["events", "key.budget_80"],
        ["balance_below", "7"],
        ["format", "slack"],
      ]);
    const refused = await submit(gw.url, "/dashboard/alerts", sent("ftp://hooks.example/textai"), { cookie, from });
    expect([refused.posted.status, refused.location], shown(refused)).toEqual([303, "/dashboard/alerts"]);
    expect(refused.page?.status, shown(refused)).toBe(400);
    const page = refused.page?.body ?? "";
    expect(page).toContain('role="alert">url must be http(s)</p>');
    expect(page).toMatch(/id="url" name="url" [^>]*value="ftp:\/\/hooks.example\/textai" autofocus>/);
    expect(page).toContain('value="balance.low" checked>');
    expect(page).toContain('value="key.budget_80" checked>');
    expect(page).not.toContain('value="key.budget_100" checked>');
    expect(page).toMatch(/id="balance_below" [^>]*value="7"/);
    expect(page).toContain('<option value="slack" selected>');
    // a public address written as an IP: no name to resolve, and nothing is delivered until an event
    const added = await submit(gw.url, "/dashboard/alerts", sent("https://93.184.215.14/textai"), { cookie, from });
    expect(added.page?.status, shown(added)).toBe(200);
    const secret = /<code id="new-secret-value">(whsec_[0-9a-f]+)<\/code>/.exec(added.page?.body ?? "")?.[1] ?? "";
    expect(secret, shown(added)).toStartWith("whsec_");
    expect(added.posted.headers["set-cookie"]).not.toContain(secret);
    const again = await reload(added, from);
    expect(again?.status).toBe(200);
    expect(again?.body).not.toContain(secret);
    expect(again?.body).toContain("93.184.215.14");
  });
});
