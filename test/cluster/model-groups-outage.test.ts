/**
 * Issue 39 with CONTRACT section 11: when every deployment of a group refuses a call, the client is
 * told 429 only when the deployments' limits refused it. While the shared deployment state (Redis)
 * cannot be reached, the refusal may be the outage's, and the answer is 503 service_unavailable
 * with Retry-After, never a 429 that blames the client.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { freshRedis, sharedServersUp } from "../helpers/shared-servers";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";
import { TcpProxy } from "./tcp-proxy";

const shared = await sharedServersUp("model groups while Redis is down");

describe.skipIf(!shared)("a model group while its deployment state is unreachable", () => {
  let sim: Upstream;
  let gw: TestGateway;
  let proxy: TcpProxy;
  let flush: () => Promise<void>;

  beforeAll(async () => {
    sim = await startUpstream();
    const r = await freshRedis();
    flush = r.flush;
    proxy = new TcpProxy(Number(new URL(r.url).port || 6379)).up();
    gw = await startGateway({
      env: { TEXTAI_REDIS_URL: `redis://127.0.0.1:${proxy.port}`, TEXTAI_REDIS_PREFIX: r.prefix },
      configText: `${simProvider({ url: `${sim.url}/v1`, model: "m" })}
[cache]
enabled = false

# the account's own limit is far off, so its outage share (refilled at limit/N) never refuses here
[plans.free.rate_limits]
"chat-completions" = 100000000
account = 100000000

[[models]]
name = "capped"
[[models.deployments]]
provider = "sim"
model = "capped-a"
rpm = 2
`,
    });
  });
  afterAll(async () => {
    await gw?.close();
    proxy?.down();
    await flush?.();
    await sim?.close();
  });

  const call = async (key: string) => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "capped", max_tokens: 20, messages: [{ role: "user", content: "hello" }] }),
    });
    return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() };
  };

  test("limits full with Redis up: 429; Redis unreachable: 503 with Retry-After, no call upstream", async () => {
    const { key } = gw.newKey({ credits: 10_000 });
    expect((await call(key)).status).toBe(200);
    expect((await call(key)).status).toBe(200);
    const full = await call(key);
    expect(full.status).toBe(429);
    proxy.down();
    for (let i = 0; i < 100 && gw.deps.services.redis?.up; i++) await Bun.sleep(20);
    const before = sim.calls.count;
    const down = await call(key);
    expect(down.status).toBe(503);
    expect(down.retryAfter).toBe("1");
    expect(down.body).toContain("service_unavailable");
    expect(sim.calls.count).toBe(before);
  });
});
