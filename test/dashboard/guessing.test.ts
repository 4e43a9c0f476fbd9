// The guessing policy (docs/security.md) through a real server: guesses at a password or at the
// admin token are counted per client address and per target, from real loopback source addresses
// (127.0.0.x), so strangers cannot lock anyone out and the admin API is throttled like the console.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SIGN_IN_LIMITS, SignInLimiter, WRONG_ADMIN_TOKEN_DELAY_MS } from "../../src/dashboard/guessing";
import { shown, submit } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { type RawResponse, requestFrom } from "../helpers/raw-http";

const TOKEN = "operator-token-for-guessing-tests-0123456789";
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
});
afterAll(() => gw.close());

// each test guesses from addresses of its own, at targets of its own: none sees another's counts, so
// the tests of a describe run concurrently (describe.concurrent); most of their time is the wrong
// token's delay and the backoffs, waited for
let nextHost = 2;
const freshAddress = () => `127.0.${Math.floor(nextHost / 250) + 1}.${(nextHost++ % 250) + 2}`;

const show = (r: RawResponse | null) => `${r?.status} ${r?.headers["retry-after"] ?? ""} ${r?.body.slice(0, 300)}`;
/**
 * A form posted from `from`, as its sender sees the outcome: every form answers 303 (Post/Redirect/Get);
 * one that opened a session is that answer, a refused one the page it leads to (asked with its flash
 * cookie), whose status is the refusal's (401, 429 with Retry-After).
 */
async function outcome(g: TestGateway, from: string, path: string, form: Record<string, string>) {
  const s = await submit(g.url, path, form, { from });
  expect(s.posted.status, shown(s)).toBe(303);
  return s.posted.headers["set-cookie"]?.startsWith("textai_session=") ? s.posted : s.page;
}
const operatorSignIn = (from: string, token: string, g = gw) => outcome(g, from, "/dashboard/operator/login", { token });
const signIn = (from: string, email: string, password: string) => outcome(gw, from, "/dashboard/login", { email, password });
const adminCall = (from: string, token: string, g = gw) =>
  requestFrom(g.url, from, "GET", "/admin/v1/accounts?limit=1", { headers: { authorization: `Bearer ${token}` } });

async function makeLogin(email: string, password: string): Promise<string> {
  const res = await gw.post("/admin/v1/accounts", { email, password }, { authorization: `Bearer ${TOKEN}` });
  expect(res.status).toBe(201);
  return res.json.data.result.id;
}

describe.concurrent("strangers cannot lock anyone out", () => {
  test("five wrong admin tokens from five addresses: the right token from a fresh address signs the operator in", async () => {
    const guessers = Array.from({ length: 5 }, freshAddress);
    for (const [i, from] of guessers.entries()) {
      const r = await operatorSignIn(from, `wrong token number ${i}`);
      expect(r?.status, show(r)).toBe(401);
    }
    const operator = await operatorSignIn(freshAddress(), TOKEN);
    expect(operator?.status, show(operator)).toBe(303);
    expect(operator?.headers["set-cookie"]).toStartWith("textai_session=");
  });

  test("five wrong passwords for an email from five addresses: the holder signs in from a fresh address", async () => {
    await makeLogin("kim@example.com", "kim's long password");
    for (let i = 0; i < 5; i++) {
      const r = await signIn(freshAddress(), "kim@example.com", `guess number ${i}`);
      expect(r?.status, show(r)).toBe(401);
    }
    const holder = await signIn(freshAddress(), "kim@example.com", "kim's long password");
    expect(holder?.status, show(holder)).toBe(303);
  }, 30_000);

  test("past five failures at a target, an address that failed there waits (backoff), then gets through", async () => {
    await makeLogin("lou@example.com", "lou's long password");
    // six addresses fail once each; then one more fails, and tries again at once
    for (let i = 0; i < 6; i++) expect((await signIn(freshAddress(), "lou@example.com", `not it ${i}`))?.status).toBe(401);
    const guesser = freshAddress();
    expect((await signIn(guesser, "lou@example.com", "not it either"))?.status).toBe(401);
    // seven failures at the email: an address that failed there waits 4 s after its own last failure,
    // the right password included
    const slowed = await signIn(guesser, "lou@example.com", "lou's long password");
    expect(slowed?.status, show(slowed)).toBe(429);
    const wait = Number(slowed?.headers["retry-after"]);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(4);
    expect(slowed?.body).toContain("Too many sign-in attempts");
    await Bun.sleep(wait * 1000 + 100);
    const after = await signIn(guesser, "lou@example.com", "lou's long password");
    expect(after?.status, show(after)).toBe(303);
  }, 30_000);

  test("one address: its fifth failure at a target refuses it there, right secret included; others are not touched", async () => {
    await makeLogin("max@example.com", "max's long password");
    const guesser = freshAddress();
    for (let i = 0; i < 5; i++) expect((await signIn(guesser, "max@example.com", `wrong ${i}`))?.status).toBe(401);
    const refused = await signIn(guesser, "max@example.com", "max's long password");
    expect(refused?.status, show(refused)).toBe(429);
    expect(refused?.headers["set-cookie"] ?? "").not.toContain("textai_session=");
    expect(Number(refused?.headers["retry-after"])).toBeGreaterThan(60);
    // the same address may still sign in elsewhere (it has 20 failures in all), and max from elsewhere
    expect((await signIn(freshAddress(), "max@example.com", "max's long password"))?.status).toBe(303);
  }, 30_000);

  test("the password-change form has a count of its own: guesses at the email do not block the holder there", async () => {
    await makeLogin("ned@example.com", "ned's long password");
    const home = freshAddress();
    const session = await signIn(home, "ned@example.com", "ned's long password");
    expect(session?.status).toBe(303);
    const cookie = (session?.headers["set-cookie"] ?? "").split(";")[0];
    // strangers hammer the email, from the holder's own address too (a shared NAT)
    for (let i = 0; i < 5; i++) await signIn(i === 0 ? home : freshAddress(), "ned@example.com", `guess ${i}`);
    const change = await submit(
      gw.url,
      "/dashboard/password",
      { current: "ned's long password", next: "ned's newer password" },
      { from: home, cookie },
    );
    expect([change.posted.status, change.page?.status], shown(change)).toEqual([303, 200]);
    expect(change.page?.body).toContain("Password changed");
  }, 30_000);
});

describe.concurrent("the admin API counts wrong tokens per client address, like the operator sign-in", () => {
  // a gateway of its own per test: the admin token is one target, so other guesses at it would slow these down
  const owned: TestGateway[] = [];
  const ownGateway = async () => {
    const own = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
    owned.push(own);
    return own;
  };
  afterAll(async () => {
    await Promise.all(owned.map((g) => g.close()));
  });

  test("wrong bearer tokens: 403 five times, then 429 with Retry-After; other addresses unaffected", async () => {
    const own = await ownGateway();
    const guesser = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await adminCall(guesser, `wrong-admin-token-${i}`, own))?.status ?? 0);
    expect(statuses.slice(0, 5)).toEqual([403, 403, 403, 403, 403]);
    expect(new Set(statuses.slice(5))).toEqual(new Set([429]));
    const refused = await adminCall(guesser, "wrong-admin-token-again", own);
    expect(refused?.status, show(refused)).toBe(429);
    expect(JSON.parse(refused?.body ?? "{}").error.code).toBe("rate_limited");
    expect(Number(refused?.headers["retry-after"])).toBeGreaterThan(0);
    // the operator, elsewhere, goes on: at the API and at the console
    expect((await adminCall(freshAddress(), TOKEN, own))?.status).toBe(200);
    expect((await operatorSignIn(freshAddress(), TOKEN, own))?.status).toBe(303);
  }, 30_000);

  test("the right token is never refused: from an address that guessed wrong 11 times, the admin API, /metrics and the operator sign-in all let it in", async () => {
    const own = await ownGateway();
    // a scraper or operator behind the same NAT or proxy as a guesser
    const shared = freshAddress();
    for (let i = 0; i < 8; i++) await adminCall(shared, `wrong-admin-token-${i}`, own);
    for (let i = 0; i < 3; i++) await operatorSignIn(shared, `wrong-${i}`, own);
    expect((await adminCall(shared, "still-wrong", own))?.status).toBe(429);
    const api = await adminCall(shared, TOKEN, own);
    expect(api?.status, show(api)).toBe(200);
    const metrics = await requestFrom(own.url, shared, "GET", "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(metrics?.status, show(metrics)).toBe(200);
    expect(metrics?.body).toContain("textai_");
    const console = await operatorSignIn(shared, TOKEN, own);
    expect(console?.status, show(console)).toBe(303);
    expect(console?.headers["set-cookie"]).toStartWith("textai_session=");
  }, 30_000);

  test("the API and the console share one count per address: three wrong there and two here refuse the next wrong one anywhere", async () => {
    const own = await ownGateway();
    const guesser = freshAddress();
    for (let i = 0; i < 3; i++) expect((await adminCall(guesser, `wrong-${i}`, own))?.status).toBe(403);
    for (let i = 0; i < 2; i++) expect((await operatorSignIn(guesser, `wrong-${i}`, own))?.status).toBe(401);
    expect((await operatorSignIn(guesser, "wrong-5", own))?.status).toBe(429);
    expect((await adminCall(guesser, "wrong-6", own))?.status).toBe(429);
  });

  test("the right token is never counted: 60 concurrent calls from one address all answer 200", async () => {
    const own = await ownGateway();
    const from = freshAddress();
    const res = await Promise.all(Array.from({ length: 60 }, () => adminCall(from, TOKEN, own)));
    expect(res.map((r) => r?.status)).toEqual(Array(60).fill(200));
  });

  test("X-Forwarded-For is ignored from a peer that is not a trusted proxy", async () => {
    const own = await ownGateway();
    const guesser = freshAddress();
    for (let i = 0; i < 5; i++)
      await requestFrom(own.url, guesser, "GET", "/admin/v1/accounts", {
        headers: { authorization: `Bearer wrong-${i}`, "x-forwarded-for": `10.9.0.${i}` },
      });
    const spoofed = await requestFrom(own.url, guesser, "GET", "/admin/v1/accounts", {
      headers: { authorization: "Bearer wrong-again", "x-forwarded-for": "10.9.9.9" },
    });
    expect(spoofed?.status).toBe(429);
  });

  // timed (the delay, and its absence): after the others, alone (test.serial)
  test.serial("wrong tokens are slowed, the right one is not", async () => {
    const own = await ownGateway();
    const from = freshAddress();
    let t = performance.now();
    expect((await adminCall(from, "wrong-and-slow", own))?.status).toBe(403);
    const wrongMs = performance.now() - t;
    expect(wrongMs).toBeGreaterThanOrEqual(WRONG_ADMIN_TOKEN_DELAY_MS - 5);
    t = performance.now();
    expect((await operatorSignIn(from, "wrong-and-slow", own))?.status).toBe(401);
    expect(performance.now() - t).toBeGreaterThanOrEqual(WRONG_ADMIN_TOKEN_DELAY_MS - 5);
    // the right token answers without the delay (best of three, so a busy machine does not decide it)
    const right: number[] = [];
    for (let i = 0; i < 3; i++) {
      t = performance.now();
      expect((await adminCall(from, TOKEN, own))?.status).toBe(200);
      right.push(performance.now() - t);
    }
    expect(Math.min(...right)).toBeLessThan(WRONG_ADMIN_TOKEN_DELAY_MS);
  });
});

test("a short admin token is refused at start, and the error says how long it must be", async () => {
  const err = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: "too-short-a-token" } }).then(
    (g) => g.close().then(() => null),
    (e: Error) => e,
  );
  expect(err?.message).toContain("TEXTAI_ADMIN_TOKEN must have at least 32 characters");
});

describe("the in-memory limiter when full", () => {
  test("evicts the oldest counts, never all of them: a recently refused address stays refused", () => {
    let now = 1_800_000_000_000;
    const limits = { ...SIGN_IN_LIMITS, perClient: 3, perClientTarget: 3 };
    const l = new SignInLimiter(limits, () => now, 50);
    // old traffic fills the table
    for (let i = 0; i < 40; i++) l.attempt(`t${i}@example.com`, `10.0.0.${i}`);
    now += 1000;
    for (let i = 0; i < 3; i++) expect(l.attempt("victim@example.com", "10.6.6.6").allowed).toBe(true);
    expect(l.attempt("victim@example.com", "10.6.6.6").allowed).toBe(false);
    // a flood of new addresses overflows it many times over
    for (let i = 0; i < 500; i++) l.attempt(`flood${i}@example.com`, `10.1.${i >> 8}.${i & 255}`);
    expect(l.size()).toBeLessThanOrEqual(50);
    // the newest counts survive: the flood's last addresses still have theirs
    expect(l.attempt("flood499@example.com", "10.1.1.243").allowed).toBe(true);
    expect(l.attempt("flood499@example.com", "10.1.1.243").allowed).toBe(true);
    expect(l.attempt("flood499@example.com", "10.1.1.243").allowed).toBe(false);
  });

  test("overflowing the table pushes out older counts first: a refused address stays refused", () => {
    let now = 1_800_000_000_000;
    const l = new SignInLimiter({ ...SIGN_IN_LIMITS, perClientTarget: 3 }, () => now, 60);
    // older traffic: 30 counts
    for (let i = 0; i < 10; i++) l.attempt(`old${i}@example.com`, `10.3.0.${i}`);
    now += 1000;
    for (let i = 0; i < 3; i++) l.attempt("x@example.com", "10.6.6.6");
    expect(l.attempt("x@example.com", "10.6.6.6").allowed).toBe(false);
    now += 1000;
    // newer traffic overflows the table (the old limiter emptied itself here, forgetting every count)
    for (let i = 0; i < 12; i++) l.attempt(`y${i}@example.com`, `10.2.0.${i}`);
    expect(l.size()).toBeLessThanOrEqual(60);
    expect(l.attempt("x@example.com", "10.6.6.6").allowed).toBe(false);
  });
});
