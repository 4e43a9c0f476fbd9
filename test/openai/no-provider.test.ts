import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { startUpstream, type Upstream } from "../helpers/upstream";
import { openaiClient } from "./setup";

// The README's snippet, word for word: what a newcomer sends first.
const README_CALL = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }] };

/** Every /v1 call that names a model (and one that names none): each must say the same thing. */
async function everyV1Call(c: OpenAI, model: string) {
  return [
    await c.chat.completions.create({ ...README_CALL, model }).catch((e) => e),
    await c.chat.completions.create({ ...README_CALL, model, stream: true }).catch((e) => e),
    await c.responses.create({ model, input: "Hi" }).catch((e) => e),
    await c.embeddings.create({ model, input: "Hi" }).catch((e) => e),
    await c.models.retrieve(model).catch((e) => e),
  ];
}

describe("/v1 on a gateway with no provider: 503 no_provider saying what to configure, whatever the model", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ functions: [] });
  });
  afterAll(() => gw.close());

  test("the README's snippet, and every /v1 API, any model or none: 503 no_provider naming the variables, the config file and the docs", async () => {
    const { key, accountId } = gw.newKey({ credits: 10 });
    const c = openaiClient(gw, key);
    const errors = [
      ...(await everyV1Call(c, "gpt-4o-mini")),
      ...(await everyV1Call(c, "some-model-nobody-serves")),
      ...(await everyV1Call(c, "openai/gpt-4o")),
      await c.chat.completions.create({ messages: README_CALL.messages } as never).catch((e) => e),
    ];
    for (const err of errors) {
      expect(err).toBeInstanceOf(OpenAI.InternalServerError);
      expect(err.status).toBe(503);
      expect(err.code).toBe("no_provider");
      expect(err.message).toContain("none is configured");
      for (const what of [
        "OPENAI_API_KEY",
        "GROQ_API_KEY",
        "[[providers]]",
        "openai-compatible",
        "TEXTAI_CONFIG",
        "docs/providers.md",
      ])
        expect(err.message).toContain(what);
    }
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
    // listing the models is no error: there are none
    expect((await c.models.list()).data).toEqual([]);
  });

  test("a [routes] entry for a /v1 API with only the offline engine: 503 naming that route", async () => {
    const routed = await startGateway({ functions: [], configText: '[routes]\n"chat-completions" = ["local"]\n' });
    try {
      const { key } = routed.newKey({ credits: 10 });
      const err = await openaiClient(routed, key)
        .chat.completions.create(README_CALL)
        .catch((e) => e);
      expect(err.status).toBe(503);
      expect(err.code).toBe("no_provider");
      expect(err.message).toContain('routes."chat-completions"');
      expect(err.message).toContain("OPENAI_API_KEY");
    } finally {
      await routed.close();
    }
  });
});

/** docs/providers.md's Ollama example as written, its base_url pointed at the simulator. */
async function ollamaExample(baseUrl: string, extra = ""): Promise<string> {
  const doc = await Bun.file(join(import.meta.dir, "../../docs/providers.md")).text();
  const section = doc.slice(doc.indexOf("### Pointing the gateway at Ollama or vLLM"));
  const block = /```toml\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("docs/providers.md: no toml block under 'Pointing the gateway at Ollama or vLLM'");
  expect(block).toContain('default_model = "llama3.1:8b"');
  return `${block.replace(/^base_url = "[^"]*"/m, `base_url = "${baseUrl}"`)}${extra}`;
}

describe("/v1 with docs/providers.md's Ollama example: a model it does not serve is a 404 that says what to do", () => {
  let sim: Upstream;
  let gw: TestGateway;
  beforeAll(async () => {
    sim = await startUpstream();
    gw = await startGateway({ functions: [], configText: await ollamaExample(`${sim.url}/v1`) });
  });
  afterAll(async () => {
    await gw.close();
    await sim.close();
  });

  test("the README's gpt-4o-mini: NotFoundError naming the provider, its models, GET /v1/models and model_patterns", async () => {
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    const c = openaiClient(gw, key);
    for (const err of await everyV1Call(c, "gpt-4o-mini")) {
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect(err.error).toMatchObject({ type: "invalid_request_error", code: "model_not_found", param: "model" });
      for (const what of ["`gpt-4o-mini`", "(ollama)", "GET /v1/models", "`llama3.1:8b`", "model_patterns", "ollama"])
        expect(err.message).toContain(what);
      expect(err.message).toContain("docs/openai-compatible.md#which-models-are-served");
    }
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
  });

  test("the fixes the message names work: the model GET /v1/models lists, or model_patterns", async () => {
    const { key } = gw.newKey({ credits: 10 });
    const c = openaiClient(gw, key);
    const ids = (await c.models.list()).data.map((m) => m.id);
    expect(ids).toContain("llama3.1:8b");
    const r = await c.chat.completions.create({ ...README_CALL, model: "llama3.1:8b" });
    expect(r.choices[0]?.message.content).toBeString();

    const open = await startGateway({
      functions: [],
      configText: await ollamaExample(`${sim.url}/v1`, 'model_patterns = ["*"]\n'),
    });
    try {
      const k = open.newKey({ credits: 10 }).key;
      sim.reset();
      const answer = await openaiClient(open, k).chat.completions.create(README_CALL);
      expect(answer.choices[0]?.message.content).toBeString();
      expect(sim.calls.requests[0]?.model).toBe("gpt-4o-mini");
    } finally {
      await open.close();
    }
  });
});
