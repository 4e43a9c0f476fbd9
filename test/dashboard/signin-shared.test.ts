// Guesses as a service (CONTRACT 12, docs/security.md): one contract run against the memory limiter
// and the Redis one, and two gateway nodes on one PostgreSQL and one Redis counting the same guesses
// whichever node they went to, from real loopback source addresses.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SIGN_IN_LIMITS, SignInLimiter } from "../../src/dashboard/guessing";
import type { GuessVerdict, SignInAttempts } from "../../src/dashboard/interface";
import { RedisSignInLimiter } from "../../src/dashboard/signin-redis";
import { RedisLink } from "../../src/redis/link";
import { withSetCookies } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { requestFrom } from "../helpers/raw-http";
import { freshDatabase, freshRedis, freshRedisCluster, sharedServersUp } from "../helpers/shared-servers";

const TOKEN = "operator-token-for-shared-sign-in-tests";
const LIMITS = {
  ...SIGN_IN_LIMITS,
  perClient: 6,
  perClientTarget: 3,
  targetFree: 3,
  backoffBaseMs: 300,
  backoffMaxMs: 300,
  windowMs: 1500,
  signUpsPerClient: 2,
  signUpWindowMs: 1500,
};
const ok = (v: GuessVerdict) => v.allowed;

function contract(name: string, make: () => Promise<{ a: SignInAttempts; b: SignInAttempts; close(): Promise<void> }>) {
  describe(`SignInAttempts contract: ${name}`, () => {
    test("per address at a target and over all targets; a success is given back; the window ends", async () => {
      const { a, b, close } = await make();
      try {
        // a and b are two nodes (the same limiter for memory)
        for (let i = 0; i < 3; i++) expect(ok(await (i % 2 ? a : b).attempt("ann@example.com", "10.0.0.1"))).toBe(true);
        const refused = await a.attempt("ann@example.com", "10.0.0.1");
        expect(refused.allowed).toBe(false);
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(LIMITS.windowMs);
        expect(ok(await b.check("ann@example.com", "10.0.0.1"))).toBe(false);
        // a success is given back
        expect(ok(await a.attempt("bob@example.com", "10.0.0.2"))).toBe(true);
        await b.succeeded("bob@example.com", "10.0.0.2");
        for (let i = 0; i < 3; i++) expect(ok(await b.attempt(`bob${i}@example.com`, "10.0.0.2"))).toBe(true);
        // per client over all targets: 6
        for (let i = 0; i < 3; i++) expect(ok(await a.attempt(`x${i}@example.com`, "10.0.0.2"))).toBe(true);
        expect(ok(await a.attempt("new@example.com", "10.0.0.2"))).toBe(false);
        expect(ok(await b.check("new@example.com", "10.0.0.2"))).toBe(false);
        // check counts nothing
        for (let i = 0; i < 10; i++) expect(ok(await a.check("dee@example.com", "10.0.0.3"))).toBe(true);
        expect(ok(await a.attempt("dee@example.com", "10.0.0.3"))).toBe(true);
        // concurrent attempts from one address never pass more than the limit
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).attempt("cy@example.com", "10.1.0.1")),
        );
        expect(results.filter(ok).length).toBe(3);
        await Bun.sleep(LIMITS.windowMs + 150);
        expect(ok(await b.attempt("ann@example.com", "10.0.0.1"))).toBe(true);
      } finally {
        await close();
      }
    });

    test("a target is never locked: fresh addresses pass, an address that failed there backs off", async () => {
      const { a, b, close } = await make();
      try {
        for (let i = 0; i < 5; i++) expect(ok(await (i % 2 ? a : b).attempt("eve@example.com", `10.2.0.${i}`))).toBe(true);
        // a fresh address at once, on either node
        expect(ok(await a.check("eve@example.com", "10.2.1.1"))).toBe(true);
        expect(ok(await b.attempt("eve@example.com", "10.2.1.2"))).toBe(true);
        // one that failed there waits the backoff after its own last failure
        const slowed = await b.attempt("eve@example.com", "10.2.0.4");
        expect(slowed.allowed).toBe(false);
        expect(slowed.retryAfterMs).toBeLessThanOrEqual(LIMITS.backoffMaxMs + 1000);
        await Bun.sleep(LIMITS.backoffMaxMs + 50);
        expect(ok(await a.attempt("eve@example.com", "10.2.0.4"))).toBe(true);
      } finally {
        await close();
      }
    });

    test("sign-ups: every one counts per address, none given back", async () => {
      const { a, b, close } = await make();
      try {
        expect(ok(await a.signUp("10.3.0.1"))).toBe(true);
        expect(ok(await b.signUp("10.3.0.1"))).toBe(true);
        expect(ok(await a.signUp("10.3.0.1"))).toBe(false);
        expect(ok(await b.signUp("10.3.0.2"))).toBe(true);
      } finally {
        await close();
      }
    });
  });
}

contract("memory", async () => {
  const l = new SignInLimiter(LIMITS);
  return { a: l, b: l, close: async () => {} };
});

const shared = await sharedServersUp("the shared sign-in limits on Redis");
if (shared) {
  contract("redis", async () => {
    const redis = await freshRedis();
    const links = [0, 1].map(() => new RedisLink(redis.url, undefined, { prefix: redis.prefix }));
    for (const l of links) expect(await l.ready()).toBe(true);
    return {
      a: new RedisSignInLimiter(links[0], LIMITS),
      b: new RedisSignInLimiter(links[1], LIMITS),
      async close() {
        for (const l of links) await l.close();
        await redis.flush();
      },
    };
  });
}

// the same script on a Redis Cluster: its three keys share the `{signin}` hash tag
const redisCluster = await freshRedisCluster("the shared sign-in limits on a Redis Cluster");
if (redisCluster) {
  contract("redis cluster", async () => {
    const links = [0, 1].map(() => new RedisLink(redisCluster.url, undefined, { cluster: true, prefix: redisCluster.prefix }));
    for (const l of links) expect(await l.ready()).toBe(true);
    return {
      a: new RedisSignInLimiter(links[0], LIMITS),
      b: new RedisSignInLimiter(links[1], LIMITS),
      async close() {
        for (const l of links) await l.close();
        await redisCluster.flush();
      },
    };
  });
}

describe.skipIf(!shared)("two nodes on PostgreSQL and Redis", () => {
  let nodes: TestGateway[] = [];
  let drop: () => Promise<void> = async () => {};
  let flush: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const db = await freshDatabase();
    const redis = await freshRedis();
    drop = db.drop;
    flush = redis.flush;
    const env = { TEXTAI_ADMIN_TOKEN: TOKEN, TEXTAI_DATABASE_URL: db.url, ...redis.env };
    nodes = [await startGateway({ env }), await startGateway({ env })];
  });
  afterAll(async () => {
    for (const n of nodes) await n.close();
    await drop();
    await flush();
  });

  /**
   * A sign-in posted to `gw`, as its sender sees the outcome: 303 when it opened a session; refused (a
   * 303 too, Post/Redirect/Get), the status of the page it leads to, asked on the other node: any node
   * opens the flash cookie (its key is drawn from a secret in the shared database)
   */
  const signIn = async (gw: TestGateway, email: string, password: string, from = "127.0.0.1") => {
    const posted = await requestFrom(gw.url, from, "POST", "/dashboard/login", { form: { email, password } });
    expect(posted?.status, posted?.body).toBe(303);
    if (posted?.headers["set-cookie"]?.startsWith("textai_session=")) return posted.status;
    const other = nodes[(nodes.indexOf(gw) + 1) % nodes.length] as TestGateway;
    const cookie = withSetCookies("", posted?.headers["set-cookie"]);
    const page = await requestFrom(other.url, from, "GET", posted?.headers.location ?? "", { headers: { cookie } });
    expect(page?.body).toMatch(/role="alert">(Wrong email or password\.|Too many sign-in attempts)/);
    return page?.status;
  };
  const adminCall = async (gw: TestGateway, token: string, from: string) =>
    (await requestFrom(gw.url, from, "GET", "/admin/v1/accounts", { headers: { authorization: `Bearer ${token}` } }))?.status;

  test("five failures from one address spread over two nodes refuse its sixth try on either, even with the right password", async () => {
    const made = await nodes[0].post(
      "/admin/v1/accounts",
      { email: "shared@example.com", password: "the shared long password" },
      { authorization: `Bearer ${TOKEN}` },
    );
    expect(made.status).toBe(201);
    // a success on either node is given back: it does not count towards the five
    expect(await signIn(nodes[1], "shared@example.com", "the shared long password")).toBe(303);
    for (let i = 0; i < 5; i++) expect(await signIn(nodes[i % 2], "shared@example.com", `wrong guess ${i}`)).toBe(401);
    expect(await signIn(nodes[0], "shared@example.com", "the shared long password")).toBe(429);
    expect(await signIn(nodes[1], "shared@example.com", "the shared long password")).toBe(429);
    // the holder, from another address, is not locked out
    expect(await signIn(nodes[1], "shared@example.com", "the shared long password", "127.0.3.1")).toBe(303);
  }, 30_000);

  test("guesses from many addresses over two nodes: a fresh address gets in on either, one that failed backs off on both", async () => {
    const made = await nodes[1].post(
      "/admin/v1/accounts",
      { email: "many@example.com", password: "the many long password" },
      { authorization: `Bearer ${TOKEN}` },
    );
    expect(made.status).toBe(201);
    for (let i = 0; i < 6; i++)
      expect(await signIn(nodes[i % 2], "many@example.com", `guess ${i}`, `127.0.4.${i + 1}`)).toBe(401);
    expect(await signIn(nodes[0], "many@example.com", "yet another guess", "127.0.4.99")).toBe(401);
    // seven failures at the email: 127.0.4.99 waits 4 s after its failure, on the other node too
    expect(await signIn(nodes[1], "many@example.com", "the many long password", "127.0.4.99")).toBe(429);
    expect(await signIn(nodes[0], "many@example.com", "the many long password", "127.0.5.1")).toBe(303);
    expect(await signIn(nodes[1], "many@example.com", "the many long password", "127.0.5.2")).toBe(303);
  }, 30_000);

  test("wrong admin tokens from one address over two nodes: counted once for the cluster", async () => {
    const from = "127.0.6.1";
    for (let i = 0; i < 5; i++) expect(await adminCall(nodes[i % 2], `wrong-token-${i}`, from)).toBe(403);
    expect(await adminCall(nodes[0], "wrong-token-again", from)).toBe(429);
    expect(await adminCall(nodes[1], "wrong-token-once-more", from)).toBe(429);
    // the right token is never refused, from the guessing address either
    expect(await adminCall(nodes[1], TOKEN, from)).toBe(200);
    expect(await adminCall(nodes[1], TOKEN, "127.0.6.2")).toBe(200);
  });
});
