/**
 * A rate limit takes a provider out for its Retry-After, not for the breaker's cool-down
 * (docs/fairness.md, CONTRACT section 16), through a real server and the upstream simulators:
 *
 * - 429s in a row with `Retry-After: 1` on a model group's only deployment (Anthropic, as in the
 *   walkthrough of 2026-12-06): each is told to the client as 429 with its Retry-After, calls during
 *   the pause (plain, streamed, /v1/messages) are 429 with the time left and reach no upstream, and
 *   once it is over the next call is served; the breaker never opens (more 429s than its threshold);
 * - a 429 without Retry-After pauses for 10 s, and says so;
 * - a function whose only provider answers 429 is 429 rate_limited too;
 * - a provider whose circuit is open (failures) is still 502 provider_error, now with a Retry-After:
 *   the cool-down left.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type AnthropicUpstream, startAnthropicUpstream } from "../helpers/anthropic-upstream";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "admin-token-rate-limit-pause-0123456789abcdef";

let claude: AnthropicUpstream;
let sim: Upstream;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  claude = await startAnthropicUpstream();
  sim = await startUpstream();
  // a port nobody listens on: connection refused
  const probe = Bun.serve({ port: 0, fetch: () => new Response("") });
  const closedPort = probe.port as number;
  probe.stop(true);
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `
[[providers]]
name = "claude"
type = "anthropic"
base_url = "${claude.url}"
api_key = "sk-ant-test"
default_model = "claude-sim-1"

${simProvider({ url: `${sim.url}/v1`, model: "sim-model", extra: 'model_patterns = ["*"]' })}
${simProvider({ url: `http://127.0.0.1:${closedPort}/v1`, name: "down", model: "down-model", extra: "timeout_ms = 800" })}

[routes]
"chat-completions" = ["sim"]
"sentiment-analysis" = ["sim"]
"text-summarize" = ["down"]

[cache]
enabled = false

[breaker]
failure_threshold = 2
cooldown_ms = 60000

[[models]]
name = "chat-large"
[[models.deployments]]
provider = "claude"
model = "claude-sim-1"
`,
  });
  key = gw.newKey({ credits: 100_000, plan: "pro" }).key;
});
afterAll(async () => {
  await gw?.close();
  await claude?.close();
  await sim?.close();
});

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { error?: { code?: string | null; type?: string; message: string } };
}

async function post(path: string, body: Record<string, unknown>): Promise<Answer> {
  const r = await fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "cache-control": "no-store" },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, retryAfter: r.headers.get("retry-after"), body: r.status === 200 ? {} : JSON.parse(text) };
}

const ask = () => [{ role: "user", content: `p ${crypto.randomUUID()}` }];
const chat = (model: string, extra: Record<string, unknown> = {}) =>
  post("/v1/chat/completions", { model, messages: ask(), ...extra });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readyProviders(): Promise<
  Record<string, { state: string; consecutiveFailures: number; models?: Record<string, { state: string; pausedMs?: number }> }>
> {
  const r = await fetch(`${gw.url}/ready`, { headers: { authorization: `Bearer ${ADMIN}` } });
  return ((await r.json()) as { data: { result: { providers: never } } }).data.result.providers;
}

describe("a rate limit pauses a provider for its Retry-After, never for the breaker's cool-down", () => {
  test("429s with Retry-After: 1 in a row on a group's only deployment: 429 each, paused meanwhile, served after", async () => {
    claude.reset();
    // three in a row: more than the breaker's threshold (2), which a rate limit must not reach
    claude.program([
      { status: 429, retryAfter: 1 },
      { status: 429, retryAfter: 1 },
      { status: 429, retryAfter: 1 },
    ]);
    for (let i = 1; i <= 3; i++) {
      const limited = await chat("chat-large");
      expect({ status: limited.status, code: limited.body.error?.code, retryAfter: limited.retryAfter }).toEqual({
        status: 429,
        code: "rate_limited",
        retryAfter: "1",
      });
      expect(claude.calls.count).toBe(i);
      // during the pause: nothing reaches the upstream, on any path, and the client is told the time left
      const during = await chat("chat-large");
      expect({ status: during.status, retryAfter: during.retryAfter }).toEqual({ status: 429, retryAfter: "1" });
      expect(during.body.error?.message).toContain("claude: paused");
      expect(claude.calls.count).toBe(i);
      await sleep(1100);
    }
    const ready = await readyProviders();
    expect({ state: ready.claude?.state, failures: ready.claude?.consecutiveFailures }).toEqual({ state: "closed", failures: 0 });

    const served = await chat("chat-large");
    expect({ status: served.status, error: served.body.error }).toEqual({ status: 200, error: undefined });
    const again = await chat("chat-large");
    expect(again.status).toBe(200);
    expect(claude.calls.requests.map((c) => c.status)).toEqual([429, 429, 429, 200, 200]);
  });

  test("during a pause a stream and /v1/messages are 429 with the Retry-After left, unsent", async () => {
    claude.reset();
    claude.program([{ status: 429, retryAfter: 3 }]);
    expect((await chat("chat-large")).retryAfter).toBe("3");
    const stream = await chat("chat-large", { stream: true });
    expect(stream.status).toBe(429);
    expect(Number(stream.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(stream.retryAfter)).toBeLessThanOrEqual(3);
    const messages = await post("/v1/messages", { model: "chat-large", max_tokens: 50, messages: ask() });
    expect({ status: messages.status, type: messages.body.error?.type }).toEqual({ status: 429, type: "rate_limit_error" });
    expect(Number(messages.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(messages.retryAfter)).toBeLessThanOrEqual(3);
    expect(claude.calls.count).toBe(1);
    const ready = await readyProviders();
    expect(ready.claude?.state).toBe("closed");
    expect(ready.claude?.models?.["claude-sim-1"]?.pausedMs ?? 0).toBeGreaterThan(0);
  });

  test("a 429 without Retry-After pauses for 10 s, and the client is told so", async () => {
    sim.program([{ status: 429 }], { model: "no-retry-after" });
    const first = await chat("no-retry-after");
    expect({ status: first.status, retryAfter: first.retryAfter }).toEqual({ status: 429, retryAfter: "10" });
    const during = await chat("no-retry-after");
    expect(during.status).toBe(429);
    expect(Number(during.retryAfter)).toBeGreaterThanOrEqual(9);
    expect(sim.calls.requests.filter((c) => c.model === "no-retry-after").length).toBe(1);
  });

  test("a function whose only provider answers 429 is 429 rate_limited with its Retry-After, and paused", async () => {
    sim.program([{ status: 429, retryAfter: 4 }], { model: "fn-limited" });
    const call = () =>
      gw.post(
        "/api/v1/ai/sentiment-analysis",
        { text: "I love it", model: "fn-limited" },
        { "x-api-key": key, "cache-control": "no-store" },
      );
    const first = await call();
    expect({ status: first.status, code: first.json.error?.code, retryAfter: first.headers.get("retry-after") }).toEqual({
      status: 429,
      code: "rate_limited",
      retryAfter: "4",
    });
    const during = await call();
    expect({ status: during.status, code: during.json.error?.code }).toEqual({ status: 429, code: "rate_limited" });
    expect(Number(during.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(sim.calls.requests.filter((c) => c.model === "fn-limited").length).toBe(1);
  });

  test("a circuit opened by failures: 502 provider_error with the cool-down left as Retry-After", async () => {
    const summarize = async () => {
      const r = await gw.post(
        "/api/v1/ai/text-summarize",
        { text: "A long text to summarize. ".repeat(20) },
        { "x-api-key": key, "cache-control": "no-store" },
      );
      return {
        status: r.status,
        code: r.json.error?.code,
        message: r.json.error?.message as string,
        retryAfter: r.headers.get("retry-after"),
      };
    };
    const first = await summarize();
    // one failure, the breaker still closed: it may answer the next call, no time to tell
    expect({ status: first.status, retryAfter: first.retryAfter }).toEqual({ status: 502, retryAfter: null });
    const opening = await summarize();
    expect({ status: opening.status, retryAfter: opening.retryAfter }).toEqual({ status: 502, retryAfter: "60" });
    const open = await summarize();
    expect({ status: open.status, code: open.code }).toEqual({ status: 502, code: "provider_error" });
    expect(open.message).toContain("down: circuit_open");
    expect(Number(open.retryAfter)).toBeGreaterThanOrEqual(59);
    expect(Number(open.retryAfter)).toBeLessThanOrEqual(60);
  });
});
