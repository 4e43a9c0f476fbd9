import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

/**
 * Issue 25.4: the breaker judges a provider and model, not one caller's requests. Tenant A's
 * calls that time out by their own doing (a huge max_tokens, a slow model of its choice, a model
 * that answers others meanwhile, its own short deadline) never switch the provider off for tenant
 * B; failures that say the provider is unwell (5xx, connection refused, silence for everyone)
 * still do, for that provider and model. Each test uses its own model names, so its breakers are
 * its own. The provider times out after 800 ms; two counted failures open a breaker for a minute.
 */
interface OpenAiAnswer {
  error?: { message: string; code: string | null };
}

describe("the breaker judges the provider, not one caller", () => {
  let sim: Upstream;
  let gw: TestGateway;
  let a: string;
  let b: string;
  let closedPort: number;
  beforeAll(async () => {
    sim = await startUpstream();
    // a port nobody listens on: connection refused
    const probe = Bun.serve({ port: 0, fetch: () => new Response("") });
    closedPort = probe.port as number;
    probe.stop(true);
    gw = await startGateway({
      configText: `${simProvider({ url: `${sim.url}/v1`, model: "sim-model", extra: 'timeout_ms = 800\nmodel_patterns = ["*"]' })}
${simProvider({ url: `http://127.0.0.1:${closedPort}/v1`, name: "down", model: "down-model", extra: 'timeout_ms = 800\nmodel_patterns = ["*"]' })}
[routes]
"chat-completions" = ["sim"]
"sentiment-analysis" = ["sim"]
"text-summarize" = ["down"]

[breaker]
failure_threshold = 2
cooldown_ms = 60000
`,
    });
    a = gw.newKey({ credits: 1000, plan: "pro", label: "tenant A" }).key;
    b = gw.newKey({ credits: 1000, plan: "pro", label: "tenant B" }).key;
  });
  afterAll(async () => {
    await gw.close();
    await sim.close();
  });

  const chat = (key: string, body: Record<string, unknown>, init: RequestInit = {}) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      // never a cached answer: every call here must reach the router
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "cache-control": "no-store" },
      body: JSON.stringify({ messages: [{ role: "user", content: "Say hi" }], ...body }),
      ...init,
    }).then(async (r) => ({ status: r.status, json: (await r.json()) as OpenAiAnswer }));
  const slow = (model: string, times: number) => sim.program([{ delayMs: 5000, times }], { model });

  test("timeouts of calls that asked for a huge max_tokens stay with the caller", async () => {
    slow("long-model", 3);
    for (let i = 0; i < 3; i++) {
      const res = await chat(a, { model: "long-model", max_tokens: 100_000 });
      expect({ status: res.status, code: res.json.error?.code }).toEqual({ status: 502, code: "provider_error" });
    }
    const other = await chat(b, { model: "long-model", max_tokens: 200 });
    expect({ status: other.status, error: other.json.error }).toEqual({ status: 200, error: undefined });
  });

  test("a slow model one tenant picks is skipped alone: the provider's other models keep answering", async () => {
    slow("slow-model", 2);
    for (let i = 0; i < 2; i++) expect((await chat(a, { model: "slow-model" })).status).toBe(502);
    // that model is silent for everyone: its breaker opened, A's next call is refused at once
    const again = await chat(a, { model: "slow-model" });
    expect({ status: again.status, message: again.json.error?.message }).toEqual({
      status: 502,
      message: "chat-completions: every provider failed (sim: circuit_open)",
    });
    const other = await chat(b, { model: "fast-model" });
    expect({ status: other.status, error: other.json.error }).toEqual({ status: 200, error: undefined });
    expect(gw.deps.router.status().sim?.models).toEqual({ "slow-model": { state: "open", consecutiveFailures: 2 } });
  });

  test("a model that answers other calls while one caller's calls time out stays open for everyone", async () => {
    slow("busy-model", 3);
    // three different calls (identical ones would share one upstream call)
    const pending = [0, 1, 2].map((i) => chat(a, { model: "busy-model", messages: [{ role: "user", content: `Story ${i}` }] }));
    // A's three calls hold the three slow answers; B's call is answered while they wait
    while (sim.calls.requests.filter((r) => r.model === "busy-model").length < 3) await Bun.sleep(10);
    expect((await chat(b, { model: "busy-model" })).status).toBe(200);
    for (const res of await Promise.all(pending)) expect(res.status).toBe(502);
    const after = await chat(b, { model: "busy-model" });
    expect({ status: after.status, error: after.json.error }).toEqual({ status: 200, error: undefined });
  });

  test("a caller's own short deadline does not count against the provider", async () => {
    slow("deadline-model", 3);
    for (let i = 0; i < 3; i++)
      await chat(a, { model: "deadline-model" }, { signal: AbortSignal.timeout(100) }).catch((err: Error) => err);
    // the three slow answers were for A's abandoned calls; the provider was never judged
    expect(gw.deps.router.status().sim?.models?.["deadline-model"]).toBeUndefined();
  });

  test("a model silent for everyone still opens its breaker", async () => {
    slow("hung-model", 2);
    for (let i = 0; i < 2; i++) expect((await chat(a, { model: "hung-model", max_tokens: 200 })).status).toBe(502);
    const other = await chat(b, { model: "hung-model" });
    expect({ status: other.status, message: other.json.error?.message }).toEqual({
      status: 502,
      message: "chat-completions: every provider failed (sim: circuit_open)",
    });
  });

  test("5xx answers open the breaker of that provider and model only", async () => {
    sim.program([{ status: 500, times: 2 }], { model: "broken-model" });
    for (let i = 0; i < 2; i++) expect((await chat(a, { model: "broken-model" })).status).toBe(502);
    const same = await chat(b, { model: "broken-model" });
    expect({ status: same.status, message: same.json.error?.message }).toEqual({
      status: 502,
      message: "chat-completions: every provider failed (sim: circuit_open)",
    });
    const other = await chat(b, { model: "sound-model" });
    expect({ status: other.status, error: other.json.error }).toEqual({ status: 200, error: undefined });
  });

  test("5xx answers to a function open that model's breaker, not the provider's", async () => {
    sim.program([{ status: 503, times: 2 }], { model: "fn-broken" });
    const call = (key: string, model: string) =>
      gw.post("/api/v1/ai/sentiment-analysis", { text: "I love it", model }, { "x-api-key": key, "cache-control": "no-store" });
    for (let i = 0; i < 2; i++) expect((await call(a, "fn-broken")).status).toBe(502);
    const same = await call(b, "fn-broken");
    expect({ status: same.status, message: same.json.message }).toEqual({
      status: 502,
      message: "sentiment-analysis: every provider failed (sim: circuit_open)",
    });
    const other = await call(b, "fn-sound");
    expect({ status: other.status, provider: other.json.meta?.provider }).toEqual({ status: 200, provider: "sim" });
  });

  test("connection refused opens the breaker", async () => {
    const summarize = (key: string) =>
      gw.post(
        "/api/v1/ai/text-summarize",
        { text: "The meeting moved to Friday." },
        { "x-api-key": key, "cache-control": "no-store" },
      );
    for (let i = 0; i < 2; i++)
      expect((await summarize(a)).json.message).toBe("text-summarize: every provider failed (down: connection)");
    const other = await summarize(b);
    expect({ status: other.status, message: other.json.message }).toEqual({
      status: 502,
      message: "text-summarize: every provider failed (down: circuit_open)",
    });
    expect(gw.deps.router.status().down).toMatchObject({ state: "open", consecutiveFailures: 2 });
  });
});
