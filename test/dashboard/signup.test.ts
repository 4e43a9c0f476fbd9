// Open sign-up (docs/security.md): every sign-up counts per client address, a taken email gets the
// same answer as a free one, and `[dashboard] signup_credits` sets what a new account receives.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SIGN_IN_LIMITS } from "../../src/dashboard/guessing";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { type RawResponse, requestFrom } from "../helpers/raw-http";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ configText: "[dashboard]\nsignup = true\n" });
});
afterAll(() => gw.close());

const signUp = (from: string, email: string, password: string, g = gw) =>
  requestFrom(g.url, from, "POST", "/dashboard/signup", { form: { email, password } });
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
    expect(r?.status, show(r)).toBe(200);
  }
  const refused = await signUp(from, "farm-extra@example.com", "a long enough password");
  expect(refused?.status, show(refused)).toBe(429);
  expect(Number(refused?.headers["retry-after"])).toBeGreaterThan(3600);
  expect(refused?.body).toContain("Too many sign-ups from this address");
  // nothing was made by the refused one; the five were, each with no credits (signup_credits defaults to 0)
  expect((await gw.deps.dashboard.loginByEmail("farm-extra@example.com")) === null).toBe(true);
  expect(await balanceOf(gw, "farm0@example.com", "a long enough password")).toBe(0);
  // another address is not affected
  expect((await signUp("127.0.8.2", "other@example.com", "a long enough password"))?.status).toBe(200);
}, 30_000);

test("a taken email and a free one get the same answer: nobody learns who has an account", async () => {
  expect((await signUp("127.0.8.3", "taken@example.com", "the owner's password"))?.status).toBe(200);
  const taken = await signUp("127.0.8.4", "taken@example.com", "a stranger's password");
  const free = await signUp("127.0.8.5", "free@example.com", "a stranger's password");
  expect(taken?.status, show(taken)).toBe(200);
  expect(free?.status).toBe(200);
  const strip = (r: RawResponse | null) => (r?.body ?? "").replace(/value="[^"]*"/g, "");
  expect(strip(taken)).toBe(strip(free));
  expect(strip(taken)).not.toContain("Choose another email");
  expect(taken?.headers["set-cookie"]).toBeUndefined();
  expect(free?.headers["set-cookie"]).toBeUndefined();
  // the owner's password still signs in; the stranger's opened nothing
  expect(await balanceOf(gw, "taken@example.com", "the owner's password")).toBe(0);
  const stranger = await requestFrom(gw.url, "127.0.8.6", "POST", "/dashboard/login", {
    form: { email: "taken@example.com", password: "a stranger's password" },
  });
  expect(stranger?.status).toBe(401);
}, 30_000);

test("a malformed sign-up is refused with the reason and counts nothing", async () => {
  const from = "127.0.8.7";
  for (let i = 0; i < SIGN_IN_LIMITS.signUpsPerClient + 2; i++) {
    const r = await signUp(from, "short@example.com", "short");
    expect(r?.status).toBe(400);
    expect(r?.body).toContain("at least 10 characters");
  }
  expect((await signUp(from, "short@example.com", "long enough now"))?.status).toBe(200);
});

test("open sign-up is no credit faucet: without signup_credits a signed-up account gets 0, operator-made accounts keep the welcome credits; signup_credits = 25 gives 25", async () => {
  const admin = "operator-token-for-signup-tests-0123456789";
  const g = await startGateway({
    configText: "welcome_credits = 100\n[dashboard]\nsignup = true\n",
    env: { TEXTAI_ADMIN_TOKEN: admin },
  });
  const given = await startGateway({ configText: "[dashboard]\nsignup = true\nsignup_credits = 25\n" });
  try {
    expect((await signUp("127.0.8.8", "zero@example.com", "zero's long password", g))?.status).toBe(200);
    expect(await balanceOf(g, "zero@example.com", "zero's long password")).toBe(0);
    const made = await g.post(
      "/admin/v1/accounts",
      { email: "made@example.com", password: "made's long password" },
      { authorization: `Bearer ${admin}` },
    );
    expect(made.json.data.result.balance).toBe(100);
    expect((await signUp("127.0.8.9", "some@example.com", "some long password", given))?.status).toBe(200);
    expect(await balanceOf(given, "some@example.com", "some long password")).toBe(25);
  } finally {
    await g.close();
    await given.close();
  }
}, 30_000);
