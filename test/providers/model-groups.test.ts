/**
 * Model groups (issue 39, CONTRACT section 16, docs/routing.md) through a real server: three
 * upstream simulators are three providers, each group's deployments spread over them, and every
 * call a simulator receives is recorded. The strategies (weighted, least-busy, latency, headroom,
 * cost), residency by a key's tags, context windows, and a deployment's 429.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "model-groups-admin-token-0123456789abcdef01";

const deployment = (provider: string, model: string, extra = "") =>
  `[[models.deployments]]\nprovider = "${provider}"\nmodel = "${model}"\n${extra}\n`;

/** A group over the three simulators: models `${prefix}-a`, `-b`, `-c`. */
const overThree = (name: string, strategy: string, prefix: string, extras = ["", "", ""]) =>
  `[[models]]\nname = "${name}"\nstrategy = "${strategy}"\n${["a", "b", "c"].map((p, i) => deployment(p, `${prefix}-${p}`, extras[i])).join("\n")}`;

const CONFIG = (a: Upstream, b: Upstream, c: Upstream) => `
${simProvider({ url: `${a.url}/v1`, name: "a", model: "a-default" })}
${simProvider({ url: `${b.url}/v1`, name: "b", model: "b-default" })}
${simProvider({ url: `${c.url}/v1`, name: "c", model: "c-default", extra: 'features = ["structured_output"]' })}
[cache]
enabled = false

[plans.bulk.rate_limits]
chat-completions = 10000000
translation = 10000000

[pricing.models]
"dear-*" = { input = 5, output = 5 }
"cheap-*" = { input = 1, output = 1 }
"pricey-*" = { input = 1000, output = 1000 }

${overThree("weighted", "weighted", "w", ["weight = 1", "weight = 2", "weight = 7"])}
${overThree("busy", "least-busy", "lb")}
${overThree("fast", "latency", "lat")}

[[models]]
name = "room"
strategy = "headroom"
${deployment("a", "hr-a", "rpm = 3")}
${deployment("b", "hr-b", "rpm = 10")}

[[models]]
name = "thrifty"
strategy = "cost"
${deployment("a", "dear-a")}
${deployment("b", "cheap-b")}

[[models]]
name = "resident"
strategy = "ordered"
fallbacks = ["elsewhere"]
${deployment("a", "eu-a", 'tags = { region = "eu" }')}
${deployment("b", "eu-b", 'tags = { region = "eu" }')}

[[models]]
name = "elsewhere"
${deployment("c", "us-c", 'tags = { region = "us" }')}

[[models]]
name = "windows"
${deployment("a", "ctx-small", "max_context_tokens = 4000")}
${deployment("b", "ctx-large", "max_context_tokens = 200000")}

[[models]]
name = "split"
${deployment("a", "cheap-split")}
${deployment("a", "pricey-split")}

[[models]]
name = "streamy"
${deployment("a", "st-a")}

[[models]]
name = "metered"
${deployment("b", "tpm-b", "tpm = 100000")}

[[models]]
name = "narrow"
${deployment("a", "tpm-tiny", "tpm = 1000")}
${deployment("b", "tpm-wide", "tpm = 100000")}

[[models]]
name = "tiny"
${deployment("a", "tpm-only", "tpm = 1000")}

[[models]]
name = "limited"
${deployment("a", "rl-a")}
${deployment("b", "rl-b")}
`;

let a: Upstream;
let b: Upstream;
let c: Upstream;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  [a, b, c] = await Promise.all([startUpstream(), startUpstream(), startUpstream()]);
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN }, configText: CONFIG(a, b, c) });
  key = gw.newKey({ credits: 100_000_000, plan: "bulk" }).key;
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

const countOf = (sim: Upstream, model: string) => sim.calls.requests.filter((r) => r.model === model).length;

async function chat(
  model: string,
  text = "Hello there",
  k = key,
  extra: Record<string, unknown> = {},
): Promise<{ status: number; deployment: string | null; body: Record<string, any> }> {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${k}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: text }], ...extra }),
  });
  return { status: r.status, deployment: r.headers.get("x-textai-deployment"), body: (await r.json()) as Record<string, any> };
}

/** `total` calls, `concurrency` at a time. */
async function load(total: number, concurrency: number, one: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await one(next++);
    }),
  );
}

describe("model groups", () => {
  test("/v1/models lists the group names", async () => {
    const r = await gw.get("/v1/models", { authorization: `Bearer ${key}` });
    const ids = (r.json.data as { id: string }[]).map((m) => m.id);
    for (const g of ["weighted", "busy", "fast", "room", "thrifty", "resident", "windows", "narrow", "tiny", "limited"])
      expect(ids).toContain(g);
  });

  test("weighted 1, 2, 7: over 10,000 calls each deployment's share is within 2 points of its weight", async () => {
    let failed = 0;
    await load(10_000, 64, async () => {
      const r = await chat("weighted");
      if (r.status !== 200) failed++;
    });
    expect(failed).toBe(0);
    const counts = [countOf(a, "w-a"), countOf(b, "w-b"), countOf(c, "w-c")];
    expect(counts.reduce((x, y) => x + y, 0)).toBe(10_000);
    const shares = counts.map((n) => (100 * n) / 10_000);
    expect(Math.abs((shares[0] as number) - 10)).toBeLessThanOrEqual(2);
    expect(Math.abs((shares[1] as number) - 20)).toBeLessThanOrEqual(2);
    expect(Math.abs((shares[2] as number) - 70)).toBeLessThanOrEqual(2);
  }, 120_000);

  test("least-busy: 64 concurrent calls, one deployment slow, in-flight counts within 1 of each other", async () => {
    a.configure({ latencyMs: 150 });
    b.configure({ latencyMs: 10 });
    c.configure({ latencyMs: 10 });
    const ids = ["busy/a/lb-a", "busy/b/lb-b", "busy/c/lb-c"];
    let running = true;
    /** the widest spread seen with one call between answer and next request, and with all 64 in flight */
    let worst = 0;
    let worstFull = 0;
    let samples = 0;
    let full = 0;
    const sampler = (async () => {
      await Bun.sleep(300);
      while (running) {
        const u = await gw.deps.deploymentState.usage(ids);
        const inFlight = ids.map((id) => u.get(id)?.inFlight ?? 0);
        // a call between its answer and the client's next one is in flight nowhere: counted at 63 or 64
        const total = inFlight.reduce((x, y) => x + y, 0);
        const spread = Math.max(...inFlight) - Math.min(...inFlight);
        if (total >= 63) {
          worst = Math.max(worst, spread);
          samples++;
        }
        if (total === 64) {
          worstFull = Math.max(worstFull, spread);
          full++;
        }
        await Bun.sleep(3);
      }
    })();
    try {
      await load(4_000, 64, async () => {
        expect((await chat("busy")).status).toBe(200);
      });
    } finally {
      running = false;
      await sampler;
      a.configure({ latencyMs: 0 });
      b.configure({ latencyMs: 0 });
      c.configure({ latencyMs: 0 });
    }
    expect(samples).toBeGreaterThan(10);
    expect(full).toBeGreaterThan(0);
    expect(worstFull).toBeLessThanOrEqual(1);
    expect(worst).toBeLessThanOrEqual(2);
    // the slow deployment took fewer calls than the fast ones
    expect(countOf(a, "lb-a")).toBeLessThan(countOf(b, "lb-b"));
  }, 60_000);

  test("latency: once warm, at least 90 % of calls go to the fastest of three", async () => {
    a.configure({ latencyMs: 150 });
    b.configure({ latencyMs: 5 });
    c.configure({ latencyMs: 75 });
    try {
      // warm: each deployment is tried once at least (untried ones go first)
      for (let i = 0; i < 6; i++) expect((await chat("fast")).status).toBe(200);
      const before = countOf(b, "lat-b");
      await load(200, 4, async () => {
        expect((await chat("fast")).status).toBe(200);
      });
      expect(countOf(b, "lat-b") - before).toBeGreaterThanOrEqual(180);
      expect(countOf(a, "lat-a")).toBeGreaterThanOrEqual(1);
      expect(countOf(c, "lat-c")).toBeGreaterThanOrEqual(1);
    } finally {
      a.configure({ latencyMs: 0 });
      b.configure({ latencyMs: 0 });
      c.configure({ latencyMs: 0 });
    }
  }, 60_000);

  test("headroom: the deployment with more calls left this minute first, the other when it has as few left", async () => {
    const served: (string | null)[] = [];
    for (let i = 0; i < 9; i++) {
      const r = await chat("room");
      expect(r.status).toBe(200);
      served.push(r.deployment);
    }
    // b (rpm 10) has more left than a (rpm 3) until its 7th call; a tie goes in config order
    expect(served.slice(0, 7)).toEqual(Array(7).fill("b/hr-b"));
    expect(served[7]).toBe("a/hr-a");
    expect(served[8]).toBe("b/hr-b");
  });

  test("cost: the cheapest deployment by [pricing] that serves what the request needs", async () => {
    for (let i = 0; i < 5; i++) expect((await chat("thrifty")).deployment).toBe("b/cheap-b");
    expect(countOf(a, "dear-a")).toBe(0);
  });

  test("two models of one provider in a group: each answer is charged at its own model's price", async () => {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "split", messages: [{ role: "user", content: "Hello" }] }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-textai-deployment")).toBe("a/cheap-split");
    // a few tokens at 1 credit per 1,000: 1 credit (at the other model's price it would be thousands)
    expect(Number(r.headers.get("x-textai-credits-deducted"))).toBe(1);
  });

  test("a stream holds its deployment in flight until it has ended, read whole or left by its client", async () => {
    const id = "streamy/a/st-a";
    const inFlight = async () => (await gw.deps.deploymentState.usage([id])).get(id)?.inFlight;
    const open = () =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "streamy", stream: true, messages: [{ role: "user", content: "Hello" }] }),
      });
    a.program([{ content: "word ".repeat(20), chunkChars: 5 }], { model: "st-a" });
    const whole = await open();
    expect(whole.headers.get("x-textai-deployment")).toBe("a/st-a");
    await whole.text();
    for (let i = 0; i < 50 && (await inFlight()) !== 0; i++) await Bun.sleep(10);
    expect(await inFlight()).toBe(0);
    a.program([{ content: "word ".repeat(20_000), chunkChars: 5 }], { model: "st-a" });
    const left = await open();
    const reader = (left.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    // its first events are out, its last not yet: still in flight (released at the first byte, it would be 0)
    expect(await inFlight()).toBe(1);
    await reader.cancel();
    for (let i = 0; i < 100 && (await inFlight()) !== 0; i++) await Bun.sleep(10);
    expect(await inFlight()).toBe(0);
  });

  test("a deployment's tpm window counts the tokens an answer reports, not the hold's upper bound", async () => {
    const id = "metered/b/tpm-b";
    expect((await chat("metered")).status).toBe(200);
    const u = (await gw.deps.deploymentState.usage([id])).get(id);
    const reported = b.calls.requests.filter((r) => r.model === "tpm-b").length;
    expect(reported).toBe(1);
    expect(u?.rpmUsed).toBe(1);
    // the bound held is over 1,000 tokens (the default output cap alone is 1,000); "Hello there" uses a few
    expect(u?.tpmUsed ?? 0).toBeGreaterThan(0);
    expect(u?.tpmUsed ?? 0).toBeLessThan(100);
  });

  test("residency: a key tagged eu never reaches a non-eu deployment, even when every eu deployment fails", async () => {
    const eu = gw.newKey({ credits: 1000, plan: "bulk" });
    const r = await fetch(`${gw.url}/admin/v1/keys/${eu.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ policy: { tags: { region: "eu" } } }),
    });
    expect(r.status).toBe(200);
    const patched: unknown = await r.json();
    expect(JSON.stringify(patched)).toContain(`"tags":{"region":"eu"}`);
    const ok = await chat("resident", "Hello", eu.key);
    expect(ok.deployment).toBe("a/eu-a");
    a.program([{ status: 500 }], { model: "eu-a" });
    b.program([{ status: 503 }], { model: "eu-b" });
    const failed = await chat("resident", "Hello again", eu.key);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(countOf(c, "us-c")).toBe(0);
    // an untagged key goes on to the fallback group
    a.program([{ status: 500 }], { model: "eu-a" });
    b.program([{ status: 503 }], { model: "eu-b" });
    expect((await chat("resident", "Hello", key)).deployment).toBe("c/us-c");
    // a tag no deployment has the value of: 400 naming it, nothing sent, nothing charged
    const apac = gw.newKey({ credits: 1000, plan: "bulk" });
    await fetch(`${gw.url}/admin/v1/keys/${apac.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ policy: { tags: { region: "apac" } } }),
    });
    const sent = a.calls.count + b.calls.count + c.calls.count;
    const refused = await chat("resident", "Hello", apac.key);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("invalid_request");
    expect(refused.body.error.message).toContain('region="apac"');
    expect(a.calls.count + b.calls.count + c.calls.count).toBe(sent);
    expect(Number(await gw.deps.ledger.balance(apac.accountId))).toBe(1000);
  });

  test("context window: a prompt over one deployment's max_context_tokens goes to the larger one without a failed attempt", async () => {
    expect((await chat("windows", "short")).deployment).toBe("a/ctx-small");
    const small = countOf(a, "ctx-small");
    const big = await chat("windows", "word ".repeat(2_000));
    expect(big.status).toBe(200);
    expect(big.deployment).toBe("b/ctx-large");
    expect(countOf(a, "ctx-small")).toBe(small);
  });

  test("context window: a prompt over every deployment's window is a 400 naming the largest, nothing sent, nothing charged", async () => {
    const k = gw.newKey({ credits: 10_000_000, plan: "bulk" });
    const sent = a.calls.count + b.calls.count;
    const r = await chat("windows", "word ".repeat(50_000), k.key);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_request");
    expect(r.body.error.message).toContain("(the largest: 200000)");
    expect(a.calls.count + b.calls.count).toBe(sent);
    expect(Number(await gw.deps.ledger.balance(k.accountId))).toBe(10_000_000);
  });

  test("tpm: a call estimated above a deployment's tpm skips it (it could never fit), and above every one is a 400, not a 429 forever", async () => {
    // the estimate holds max_tokens (2,000) and the prompt: above tpm-tiny's 1,000 a minute, whatever the wait
    const tiny = countOf(a, "tpm-tiny");
    const r = await chat("narrow", "Hello there", key, { max_tokens: 2000 });
    expect(r.status).toBe(200);
    expect(r.deployment).toBe("b/tpm-wide");
    expect(countOf(a, "tpm-tiny")).toBe(tiny);
    // a small call still goes to the first deployment
    expect((await chat("narrow", "Hi", key, { max_tokens: 10 })).deployment).toBe("a/tpm-tiny");

    const k = gw.newKey({ credits: 10_000_000, plan: "bulk" });
    const sent = countOf(a, "tpm-only");
    const refused = await chat("tiny", "Hello there", k.key, { max_tokens: 2000 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("invalid_request");
    expect(refused.body.error.message).toContain("tpm (the largest: 1000)");
    expect(refused.body.error.message).not.toContain("context window");
    expect(countOf(a, "tpm-only")).toBe(sent);
    expect(Number(await gw.deps.ledger.balance(k.accountId))).toBe(10_000_000);
    expect((await chat("tiny", "Hi", k.key, { max_tokens: 10 })).status).toBe(200);
  });

  test("context window: a context-length error from a deployment moves to the next that is larger", async () => {
    a.program([{ status: 400, contextLength: true }], { model: "ctx-small" });
    const r = await chat("windows", "short but too long for it");
    expect(r.status).toBe(200);
    expect(r.deployment).toBe("b/ctx-large");
  });

  test("a deployment's 429: the client sees 200 from another, and the deployment is cooled down", async () => {
    a.program([{ status: 429, retryAfter: 7 }], { model: "rl-a" });
    const r = await chat("limited");
    expect(r.status).toBe(200);
    expect(r.deployment).toBe("b/rl-b");
    const u = (await gw.deps.deploymentState.usage(["limited/a/rl-a"])).get("limited/a/rl-a");
    expect(u?.coolingUntil ?? 0).toBeGreaterThan(Date.now() + 5_000);
    const before = countOf(a, "rl-a");
    expect((await chat("limited")).deployment).toBe("b/rl-b");
    expect(countOf(a, "rl-a")).toBe(before);
  });
});
