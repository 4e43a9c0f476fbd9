/**
 * A vendor's default `model_patterns` (`*`: its own catalog answers any id) take no id of another
 * vendor's models (providers/vendors/*: `families`): an `anthropic` entry is not sent a
 * `gpt-4o-mini` request, and its texts, when the OpenAI-shaped providers that serve it fail; an
 * entry whose `model_patterns` are written out takes what they say. Through a real server with the
 * OpenAI and Anthropic simulators, the official openai SDK as the client.
 */
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { type AnthropicUpstream, startAnthropicUpstream } from "../helpers/anthropic-upstream";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { startUpstream, type Upstream } from "../helpers/upstream";

let claude: AnthropicUpstream;
let simA: Upstream;
let simB: Upstream;
let gw: TestGateway;
let open: TestGateway;
let key: string;
let openKey: string;

const config = (extra = "") => `
[routes]
"chat-completions" = ["simA", "simB", "claude"]

[[providers]]
name = "simA"
type = "openai"
base_url = "${simA.url}/v1"
api_key = "sk-a"
default_model = "gpt-4o-mini"

[[providers]]
name = "simB"
type = "openai"
base_url = "${simB.url}/v1"
api_key = "sk-b"
default_model = "gpt-4o-mini"

[[providers]]
name = "claude"
type = "anthropic"
base_url = "${claude.url}"
api_key = "sk-ant"
default_model = "claude-sim-1"
${extra}
`;

beforeAll(async () => {
  claude = await startAnthropicUpstream();
  [simA, simB] = await Promise.all([startUpstream(), startUpstream()]);
  gw = await startGateway({ configText: config() });
  // the operator says this Anthropic endpoint (a proxy, say) takes any id
  open = await startGateway({ configText: config('model_patterns = ["*"]') });
  key = gw.newKey({ credits: 100_000 }).key;
  openKey = open.newKey({ credits: 100_000 }).key;
});
afterAll(async () => {
  await gw?.close();
  await open?.close();
  await Promise.all([claude?.close(), simA?.close(), simB?.close()]);
});
beforeEach(() => {
  claude.reset();
});

async function chat(g: TestGateway, k: string, model: string, extra: Record<string, unknown> = {}) {
  const r = await fetch(`${g.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${k}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "secret data for one vendor" }], ...extra }),
  });
  return { status: r.status, provider: r.headers.get("x-textai-provider"), body: (await r.json()) as Record<string, any> };
}

test("the OpenAI-shaped providers of gpt-4o-mini failing: 502 naming them, nothing sent to Anthropic", async () => {
  simA.program([{ status: 500, times: 5 }]);
  simB.program([{ status: 500, times: 5 }]);
  const r = await chat(gw, key, "gpt-4o-mini");
  expect(r.status).toBe(502);
  expect(JSON.stringify(r.body)).toContain("simA");
  expect(JSON.stringify(r.body)).toContain("simB");
  expect(claude.calls.count).toBe(0);
  simA.program([]);
  simB.program([]);
  // and `provider/model` does not open it either
  const named = await chat(gw, key, "claude/gpt-4o-mini");
  expect(named.status).not.toBe(200);
  expect(claude.calls.count).toBe(0);
});

test("an id of no known vendor's family, or Anthropic's own, still goes to the Anthropic entry's default patterns", async () => {
  const own = await chat(gw, key, "claude-sim-9");
  expect(own.status).toBe(200);
  expect(own.provider).toBe("claude");
  expect(claude.calls.requests.at(-1)?.body.model).toBe("claude-sim-9");
});

test("another vendor's id that no provider serves is a 404 saying whose it is and how to send it anyway", async () => {
  const r = await chat(gw, key, "gemini-2.5-pro");
  expect(r.status).toBe(404);
  expect(r.body.error.code).toBe("model_not_found");
  expect(r.body.error.message).toContain("another vendor's model");
  expect(claude.calls.count).toBe(0);
});

test("/v1/messages: gpt-4o-mini with top_k is refused with 400 naming it, not sent to Anthropic", async () => {
  const r = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 50, top_k: 5, messages: [{ role: "user", content: "secret" }] }),
  });
  const body = (await r.json()) as Record<string, any>;
  expect(r.status).toBe(400);
  expect(JSON.stringify(body)).toContain("top_k");
  expect(claude.calls.count).toBe(0);
});

test("model_patterns written out take what they say: the operator's `*` sends gpt-4o-mini there when the others fail", async () => {
  simA.program([{ status: 500, times: 5 }]);
  simB.program([{ status: 500, times: 5 }]);
  const r = await chat(open, openKey, "gpt-4o-mini");
  simA.program([]);
  simB.program([]);
  expect(r.status).toBe(200);
  expect(r.provider).toBe("claude");
  expect(claude.calls.requests.at(-1)?.body.model).toBe("gpt-4o-mini");
});
