/**
 * A model group's gate refusals across two nodes sharing the deployment state through Redis
 * (docs/routing.md, "Limits, cool-downs and fallback"): the Retry-After is the time until the first
 * deployment can take the call, read by the same ACQUIRE script (no extra round trip), not 1 s:
 *
 * - a deployment whose rpm window another node filled: 429 with the time until its oldest entry
 *   ages out (about 60 s), named `rpm_limit`;
 * - a deployment another node cooled down after a 429 with `Retry-After: 20` (this node's breaker
 *   never saw it): 429 with the cool-down left (about 20 s), named `cooling_down`, nothing sent.
 *
 * Two gateways on one Redis, a key prefix of this test's own (freshRedis; only its keys deleted
 * after). Needs 127.0.0.1:6379 and PostgreSQL's probe (sharedServersUp): skips loudly without.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { groupToml } from "../helpers/groups-toml";
import { freshRedis, sharedServersUp } from "../helpers/shared-servers";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const shared = await sharedServersUp("gate refusals' Retry-After across nodes (Redis)");

describe.skipIf(!shared)("gate refusals across nodes: Retry-After from the shared state", () => {
  let sim: Upstream;
  let nodes: TestGateway[] = [];
  let keys: string[] = [];
  let flush: () => Promise<void>;

  beforeAll(async () => {
    sim = await startUpstream();
    const r = await freshRedis();
    flush = r.flush;
    const configText = `${simProvider({ url: `${sim.url}/v1`, model: "m" })}
[cache]
enabled = false
${groupToml("capped", [{ provider: "sim", model: "capped-a", rpm: 2 }])}
${groupToml("cooled", [{ provider: "sim", model: "cooled-a" }])}
`;
    nodes = [await startGateway({ env: r.env, configText }), await startGateway({ env: r.env, configText })];
    keys = nodes.map((n) => n.newKey({ credits: 1_000_000, plan: "pro" }).key);
  });
  afterAll(async () => {
    for (const n of nodes) await n.close();
    await flush?.();
    await sim?.close();
  });

  const chat = async (i: number, model: string) => {
    const r = await fetch(`${nodes[i]?.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${keys[i]}` },
      body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: `hi ${crypto.randomUUID()}` }] }),
    });
    const body = (await r.json()) as { error?: { message: string } };
    return { status: r.status, retryAfter: Number(r.headers.get("retry-after")), message: body.error?.message ?? "" };
  };
  const calls = (model: string) => sim.calls.requests.filter((c) => c.model === model).length;

  test("an rpm window filled on one node: the other answers 429 with the time until its oldest call ages out", async () => {
    expect((await chat(0, "capped")).status).toBe(200);
    expect((await chat(0, "capped")).status).toBe(200);
    const full = await chat(1, "capped");
    expect(full.status).toBe(429);
    expect(full.retryAfter).toBeGreaterThanOrEqual(55);
    expect(full.retryAfter).toBeLessThanOrEqual(60);
    expect(full.message).toContain("sim: rpm_limit");
    expect(calls("capped-a")).toBe(2);
  });

  test("a cool-down learned from another node: 429 with the cool-down left, nothing sent", async () => {
    sim.program([{ status: 429, retryAfter: 20 }], { model: "cooled-a" });
    const limited = await chat(0, "cooled");
    expect({ status: limited.status, retryAfter: limited.retryAfter }).toEqual({ status: 429, retryAfter: 20 });
    const other = await chat(1, "cooled");
    expect(other.status).toBe(429);
    expect(other.retryAfter).toBeGreaterThanOrEqual(18);
    expect(other.retryAfter).toBeLessThanOrEqual(20);
    expect(other.message).toContain("sim: cooling_down");
    expect(calls("cooled-a")).toBe(1);
  });
});
