/**
 * A model the client names is answered by that model or not at all (docs/openai-compatible.md,
 * "Which providers a model goes to"; CONTRACT sections 9, 15, 16): on `/v1/chat/completions` and
 * `/v1/messages`, a plain id goes only to the providers that serve it and `provider/model` to that
 * provider and then to those, never to another provider's own model, whatever the request's fields make
 * ineligible; and a key allowed a model group reaches the fallback groups its operator declared
 * for it. Real server, two OpenAI-shaped simulators and the Anthropic one (which serves only
 * `claude-*`), each failing on command, driven by the official SDKs.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { type AnthropicUpstream, anthropicProvider, startAnthropicUpstream } from "../helpers/anthropic-upstream";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { groupToml } from "../helpers/groups-toml";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "named-model-admin-token-0123456789abcdef012";
const MODEL = "gpt-4o-mini";

let simA: Upstream;
let simB: Upstream;
let claude: AnthropicUpstream;
let gw: TestGateway;

beforeAll(async () => {
  [simA, simB, claude] = await Promise.all([startUpstream(), startUpstream(), startAnthropicUpstream()]);
  gw = await startGateway({
    functions: [],
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `
[cache]
enabled = false
${simProvider({ url: `${simA.url}/v1`, name: "simA", model: MODEL })}
${simProvider({ url: `${simB.url}/v1`, name: "simB", model: MODEL })}
${anthropicProvider({ url: claude.url, extra: 'model_patterns = ["claude-*"]' })}
${groupToml("chat-fast", [
  { provider: "simA", model: MODEL },
  { provider: "simB", model: MODEL },
]).replace('name = "chat-fast"\n', 'name = "chat-fast"\nfallbacks = ["chat-large"]\n')}
${groupToml("chat-large", [{ provider: "claude", model: "claude-sim-1" }])}
`,
  });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([simA?.close(), simB?.close(), claude?.close()]);
});

beforeEach(() => {
  simA.reset();
  simB.reset();
  claude.reset();
});

/** A key of its own, with `policy` set through the admin API when given. */
async function keyWith(policy?: unknown): Promise<string> {
  const k = gw.newKey({ credits: 100_000 });
  if (policy !== undefined) {
    const r = await fetch(`${gw.url}/admin/v1/keys/${k.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ policy }),
    });
    expect(r.status).toBe(200);
  }
  return k.key;
}

const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

/** The error an SDK call threw (the test fails when it answered). */
async function failure<E>(call: Promise<unknown>): Promise<E> {
  try {
    await call;
  } catch (err) {
    return err as E;
  }
  throw new Error("the call answered; an error was expected");
}

type AnthropicError = InstanceType<typeof Anthropic.APIError>;
type OpenAIError = InstanceType<typeof OpenAI.APIError>;

describe("a named model is never answered by another provider's model", () => {
  const extras: [string, Record<string, unknown>][] = [
    ["top_k", { top_k: 5 }],
    ["thinking", { thinking: { type: "enabled", budget_tokens: 1024 } }],
    ["temperature", { temperature: 1.5 }],
  ];
  for (const [field, extra] of extras)
    for (const model of [MODEL, `simB/${MODEL}`])
      test(`/v1/messages: ${model} with ${field} is a 400 naming ${field}, and claude is never called`, async () => {
        const key = await keyWith();
        const err = await failure<AnthropicError>(
          anthropic(key).messages.create({
            model,
            max_tokens: 2000,
            messages: [{ role: "user", content: "hi" }],
            ...extra,
          } as Anthropic.MessageCreateParamsNonStreaming),
        );
        expect(err).toBeInstanceOf(Anthropic.BadRequestError);
        expect(err.status).toBe(400);
        expect(err.message).toContain(field);
        expect(claude.calls.count).toBe(0);
        expect(simA.calls.count + simB.calls.count).toBe(0);
      });

  test("/v1/chat/completions: both providers of gpt-4o-mini failing is a 502 naming them, not claude's answer", async () => {
    const key = await keyWith();
    simA.program([{ status: 503, times: 5 }]);
    simB.program([{ status: 503, times: 5 }]);
    const err = await failure<OpenAIError>(
      openai(key).chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] }),
    );
    expect(err.status).toBe(502);
    expect(err.message).toContain("simA");
    expect(err.message).toContain("simB");
    expect(claude.calls.count).toBe(0);
  });

  test("/v1/messages: both providers of gpt-4o-mini failing is an api_error naming them, not claude's answer", async () => {
    const key = await keyWith();
    simA.program([{ status: 503, times: 5 }]);
    simB.program([{ status: 503, times: 5 }]);
    const err = await failure<AnthropicError>(
      anthropic(key).messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }),
    );
    expect(err.status).toBe(502);
    expect(err.message).toContain("simA");
    expect(claude.calls.count).toBe(0);
  });

  test("provider/model puts that provider first; its fallback is a provider of the same model, never claude", async () => {
    const key = await keyWith();
    simB.program([{ status: 503 }]);
    const { data, response } = await openai(key)
      .chat.completions.create({ model: `simB/${MODEL}`, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("simA");
    expect([simB.calls.count, simA.calls.requests[0]?.model]).toEqual([1, MODEL]);
    expect(data.model).toBe(MODEL);
    simA.reset();
    simB.reset();
    simA.program([{ status: 503, times: 5 }]);
    simB.program([{ status: 503, times: 5 }]);
    const err = await failure<OpenAIError>(
      openai(key).chat.completions.create({ model: `simB/${MODEL}`, messages: [{ role: "user", content: "hi" }] }),
    );
    expect(err.status).toBe(502);
    expect(err.message).toContain("simB");
    expect(claude.calls.count).toBe(0);
  });

  test("a plain id falls back to another provider that serves the same model, sent the same model", async () => {
    const key = await keyWith();
    simA.program([{ status: 503 }]);
    const { data, response } = await openai(key)
      .chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("simB");
    expect(simB.calls.requests[0]?.model).toBe(MODEL);
    expect(data.model).toBe(MODEL);
    expect(claude.calls.count).toBe(0);
  });
});

describe("a key allowed a model group reaches the fallback groups declared for it", () => {
  test("--models chat-fast: chat-fast's deployments failing, chat-large (claude) answers both APIs", async () => {
    const key = await keyWith({ allowed_models: ["chat-fast"] });
    simA.program([{ status: 500, times: 10 }]);
    simB.program([{ status: 500, times: 10 }]);
    const chat = await openai(key)
      .chat.completions.create({ model: "chat-fast", messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(chat.response.headers.get("x-textai-deployment")).toBe("claude/claude-sim-1");
    const message = await anthropic(key)
      .messages.create({ model: "chat-fast", max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(message.response.headers.get("x-textai-deployment")).toBe("claude/claude-sim-1");
    expect(message.data.model).toBe("claude-sim-1");
    expect(claude.calls.count).toBe(2);
  });

  test("a key allowed only the fallback group may not ask for the group it is a fallback of", async () => {
    const key = await keyWith({ allowed_models: ["chat-large"] });
    const err = await failure<OpenAIError>(
      openai(key).chat.completions.create({ model: "chat-fast", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(err.status).toBe(403);
    expect(simA.calls.count + simB.calls.count + claude.calls.count).toBe(0);
  });
});
