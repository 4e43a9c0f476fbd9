// Sign-in attempts as a service (CONTRACT 12): one contract run against the memory limiter and the
// Redis one, and two gateway nodes on one PostgreSQL and one Redis refusing the sixth try whichever
// node the five failures went to.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { SignInAttempts } from "../../src/dashboard/interface";
import { SignInLimiter } from "../../src/dashboard/security";
import { RedisSignInLimiter } from "../../src/dashboard/signin-redis";
import { RedisLink } from "../../src/redis/link";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { freshDatabase, freshRedis, sharedServersUp } from "../helpers/shared-servers";

const TOKEN = "operator-token-for-shared-sign-in-tests";
const LIMITS = { perEmail: 3, perClient: 5, windowMs: 400 };

function contract(name: string, make: () => Promise<{ a: SignInAttempts; b: SignInAttempts; close(): Promise<void> }>) {
  describe(`SignInAttempts contract: ${name}`, () => {
    test("attempts up to the limit pass, the next is refused; a success is given back; the window ends", async () => {
      const { a, b, close } = await make();
      try {
        // a and b are two nodes (the same limiter for memory)
        expect(await a.attempt("ann@example.com", "10.0.0.1")).toBe(true);
        expect(await b.attempt("ann@example.com", "10.0.0.2")).toBe(true);
        expect(await a.attempt("ann@example.com", "10.0.0.3")).toBe(true);
        expect(await b.attempt("ann@example.com", "10.0.0.4")).toBe(false);
        expect(await a.attempt("bob@example.com", "10.0.0.1")).toBe(true);
        await a.succeeded("bob@example.com", "10.0.0.1");
        for (let i = 0; i < 3; i++) expect(await b.attempt("bob@example.com", "10.0.0.9")).toBe(true);
        expect(await a.attempt("bob@example.com", "10.0.0.9")).toBe(false);
        // per client: 5 attempts over many emails
        for (let i = 0; i < 5; i++) expect(await (i % 2 ? a : b).attempt(`guess${i}@example.com`, "10.9.9.9")).toBe(true);
        expect(await a.attempt("new@example.com", "10.9.9.9")).toBe(false);
        // concurrent attempts never pass more than the limit
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).attempt("cy@example.com", `10.1.0.${i}`)),
        );
        expect(results.filter(Boolean).length).toBe(3);
        await Bun.sleep(LIMITS.windowMs + 150);
        expect(await b.attempt("ann@example.com", "10.0.0.4")).toBe(true);
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
    const links = [new RedisLink(redis.url), new RedisLink(redis.url)];
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

describe.skipIf(!shared)("two nodes on PostgreSQL and Redis", () => {
  let nodes: TestGateway[] = [];
  let drop: () => Promise<void> = async () => {};
  let flush: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const db = await freshDatabase();
    const redis = await freshRedis();
    drop = db.drop;
    flush = redis.flush;
    const env = { TEXTAI_ADMIN_TOKEN: TOKEN, TEXTAI_DATABASE_URL: db.url, TEXTAI_REDIS_URL: redis.url };
    nodes = [await startGateway({ env }), await startGateway({ env })];
  });
  afterAll(async () => {
    for (const n of nodes) await n.close();
    await drop();
    await flush();
  });

  const signIn = async (gw: TestGateway, email: string, password: string) => {
    const res = await fetch(`${gw.url}/dashboard/login`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: new URL(gw.url).origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email, password }),
    });
    await res.text();
    return res.status;
  };

  test("five failures spread over two nodes refuse the sixth try on either, even with the right password", async () => {
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
  }, 30_000);
});
