// IPv6 clients are counted by network (issue 35, finding 8): guesses and sign-ups from the
// addresses of one /64 are one client's, so a host holding a /64 gets no more first guesses or
// sign-ups than one IPv4 address; `[dashboard] ipv6_prefix` sets the width. The gateway sits
// behind a trusted proxy (127.0.0.1) that names each client in X-Forwarded-For.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SIGN_IN_LIMITS } from "../../src/dashboard/guessing";
import { addressGroup } from "../../src/dashboard/security";
import { withSetCookies } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { type RawResponse, requestFrom } from "../helpers/raw-http";

const TOKEN = "operator-token-for-ipv6-grouping-0123456789";
const show = (r: RawResponse | null) => `${r?.status} ${r?.body.slice(0, 200)}`;
const via = (
  g: TestGateway,
  client: string,
  method: string,
  path: string,
  opts: { form?: Record<string, string>; token?: string },
) =>
  requestFrom(g.url, "127.0.0.1", method, path, {
    form: opts.form,
    headers: { "x-forwarded-for": client, ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
  });
const signUp = (g: TestGateway, client: string, email: string) =>
  via(g, client, "POST", "/dashboard/signup", { form: { email, password: "a long enough password" } });
const adminGuess = (g: TestGateway, client: string, token: string) =>
  via(g, client, "GET", "/admin/v1/accounts?limit=1", { token });

function gateway(extra = ""): Promise<TestGateway> {
  return startGateway({
    env: { TEXTAI_ADMIN_TOKEN: TOKEN, TEXTAI_TRUSTED_PROXIES: "127.0.0.1" },
    configText: `[dashboard]\nsignup = true\n${extra}`,
  });
}

describe("the default: one /64 is one client", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await gateway();
  });
  afterAll(() => gw.close());

  test("sign-ups from six addresses of one /64: the sixth is refused; another /64 is not", async () => {
    for (let i = 1; i <= SIGN_IN_LIMITS.signUpsPerClient; i++) {
      const r = await signUp(gw, `2001:db8:10:1::${i.toString(16)}`, `v6-${i}@example.com`);
      expect([r?.status, r?.headers.location], show(r)).toEqual([303, "/dashboard"]);
    }
    // refused: back to the sign-up page (Post/Redirect/Get), which answers 429 and says so
    const sixth = await signUp(gw, "2001:db8:10:1:ffff:1:2:3", "v6-extra@example.com");
    expect([sixth?.status, sixth?.headers.location], show(sixth)).toEqual([303, "/dashboard/signup"]);
    const page = await requestFrom(gw.url, "127.0.0.1", "GET", "/dashboard/signup", {
      headers: { cookie: withSetCookies("", sixth?.headers["set-cookie"]) },
    });
    expect(page?.status, show(page)).toBe(429);
    expect(page?.body).toContain("Too many sign-ups from this address");
    const other = await signUp(gw, "2001:db8:10:2::1", "v6-other@example.com");
    expect([other?.status, other?.headers.location]).toEqual([303, "/dashboard"]);
  }, 30_000);

  test("wrong admin tokens from many addresses of one /64 are counted as one client's", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 7; i++) statuses.push((await adminGuess(gw, `2001:db8:20:1:${i}::${i}`, `wrong-${i}`))?.status ?? 0);
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429, 429]);
    // written in other forms, the same network is still one client
    expect((await adminGuess(gw, "2001:0db8:0020:0001:0000:0000:0000:00ff", "wrong-again"))?.status).toBe(429);
    // the next /64 guesses on its own count
    expect((await adminGuess(gw, "2001:db8:20:2::1", "wrong-next"))?.status).toBe(403);
  }, 30_000);
});

test("[dashboard] ipv6_prefix = 128 counts each IPv6 address on its own", async () => {
  const gw = await gateway("ipv6_prefix = 128\n");
  try {
    for (let i = 1; i <= SIGN_IN_LIMITS.signUpsPerClient + 2; i++) {
      const r = await signUp(gw, `2001:db8:30:1::${i}`, `own-${i}@example.com`);
      expect([r?.status, r?.headers.location], show(r)).toEqual([303, "/dashboard"]);
    }
  } finally {
    await gw.close();
  }
}, 30_000);

test("a bad ipv6_prefix is refused at start", async () => {
  const err = await gateway("ipv6_prefix = 129\n").then(
    (g) => g.close().then(() => null),
    (e: Error) => e,
  );
  expect(err?.message).toContain("ipv6_prefix");
});

test("addressGroup: IPv6 masked to its network in one spelling, IPv4 and mapped IPv4 as they are", () => {
  expect(addressGroup("2001:db8:1:2:3:4:5:6", 64)).toBe("2001:db8:1:2:0:0:0:0/64");
  expect(addressGroup("2001:DB8:1:2::", 64)).toBe("2001:db8:1:2:0:0:0:0/64");
  expect(addressGroup("2001:db8:1:2:3:4:5:6", 56)).toBe("2001:db8:1:0:0:0:0:0/56");
  expect(addressGroup("2001:db8:1:2ff::1", 56)).toBe("2001:db8:1:200:0:0:0:0/56");
  expect(addressGroup("fe80::1%eth0", 64)).toBe("fe80:0:0:0:0:0:0:0/64");
  expect(addressGroup("::ffff:192.0.2.7", 64)).toBe("192.0.2.7");
  expect(addressGroup("192.0.2.7", 64)).toBe("192.0.2.7");
  expect(addressGroup("::1", 128)).toBe("0:0:0:0:0:0:0:1/128");
  for (const bad of ["1:2:3", "1::2::3", "12345::", "unknown", "g::1"]) expect(addressGroup(bad, 64)).toBe(bad);
});
