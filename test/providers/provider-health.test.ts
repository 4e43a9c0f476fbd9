/**
 * The provider-wide alarm (`textai_provider_circuit_open{provider}`) and /ready's provider state
 * tell the provider's health, not one model's (issue 35, finding 9): a tenant naming a junk model
 * that the upstream answers with 5xx opens that model's breaker only (still visible per model:
 * `textai_provider_models_circuit_open` and /ready's `models`), while the provider failing on a
 * model it is configured with raises the alarm.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "admin-token-provider-health-0123456789abcdef";
let sim: Upstream;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  sim = await startUpstream();
});
afterAll(async () => {
  await sim?.close();
});
// a gateway of its own per test: each starts with every breaker closed
beforeEach(async () => {
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `${simProvider({ url: `${sim.url}/v1`, model: "good-model", extra: 'model_patterns = ["*"]' })}
[routes]
"chat-completions" = ["sim"]

[breaker]
failure_threshold = 3
cooldown_ms = 60000
`,
  });
  key = gw.newKey({ credits: 10_000, plan: "pro" }).key;
});
afterEach(async () => {
  await gw?.close();
});

const chat = (model: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "cache-control": "no-store" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: `Say hi ${crypto.randomUUID()}` }] }),
  }).then((r) => r.status);

async function gauge(name: string, provider: string): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{provider="${provider}"}`));
  expect(line, `${name} for ${provider}`).toBeDefined();
  return Number(line?.split(" ").at(-1));
}

async function readyProviders(): Promise<Record<string, { state: string; models?: Record<string, { state: string }> }>> {
  const r = await fetch(`${gw.url}/ready`, { headers: { authorization: `Bearer ${ADMIN}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { data: { result: { providers: never } } }).data.result.providers;
}

test("six calls naming a junk model answered 5xx: that model's breaker opens, the provider stays healthy while its models serve", async () => {
  expect(await chat("good-model")).toBe(200);
  sim.program([{ status: 500, times: 100 }], { model: "junk-model" });
  for (let i = 0; i < 6; i++) expect(await chat("junk-model")).toBe(502);
  expect(await chat("good-model")).toBe(200);

  expect(await gauge("textai_provider_circuit_open", "sim")).toBe(0);
  expect(await gauge("textai_provider_models_circuit_open", "sim")).toBe(1);
  const ready = await readyProviders();
  expect(ready.sim?.state).toBe("closed");
  expect(ready.sim?.models?.["junk-model"]?.state).toBe("open");
}, 30_000);

test("the provider failing on the model it is configured with raises the alarm and shows open on /ready", async () => {
  sim.program([{ status: 503, times: 3 }], { model: "good-model" });
  for (let i = 0; i < 3; i++) expect(await chat("good-model")).toBe(502);
  expect(await gauge("textai_provider_circuit_open", "sim")).toBe(1);
  expect((await readyProviders()).sim?.state).toBe("open");
}, 30_000);

test("before any model it vouches for was tried, the provider is open only when every model tried is", async () => {
  sim.program([{ status: 500, times: 3 }], { model: "junk-one" });
  for (let i = 0; i < 3; i++) expect(await chat("junk-one")).toBe(502);
  expect(await gauge("textai_provider_circuit_open", "sim")).toBe(1);
  expect(await chat("another-model")).toBe(200);
  expect(await gauge("textai_provider_circuit_open", "sim")).toBe(0);
  expect(await gauge("textai_provider_models_circuit_open", "sim")).toBe(1);
}, 30_000);

test("a model that answered before and now fails is the provider failing: the alarm rises", async () => {
  expect(await chat("served-model")).toBe(200);
  sim.program([{ status: 500, times: 3 }], { model: "served-model" });
  for (let i = 0; i < 3; i++) expect(await chat("served-model")).toBe(502);
  expect(await gauge("textai_provider_circuit_open", "sim")).toBe(1);
  expect(await gauge("textai_provider_models_circuit_open", "sim")).toBe(1);
}, 30_000);
