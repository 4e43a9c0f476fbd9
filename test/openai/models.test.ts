import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { violations } from "./openapi-schemas";
import { openaiClient, providerToml, rawPost, useGateway } from "./setup";

// selfhosted: a closed catalog (its named models); catalog: an open one through a pattern;
// other: a provider outside every /v1 route. The simulator's own catalog (GET /v1/models/{id}) has vendor-77.
const ctx = useGateway({
  sim: { models: ["vendor-77"] },
  configText: (url) => `
[routes]
"chat-completions" = ["selfhosted", "catalog"]
embeddings = ["selfhosted"]
responses = ["selfhosted", "catalog"]
"chatbot-chat" = ["other"]

${providerToml("selfhosted", url, "model-a", 'embedding_model = "embed-a"\nmodels = { "translation" = "model-x" }')}
${providerToml("catalog", url, "model-c", 'model_patterns = ["vendor-*"]')}
${providerToml("other", url, "model-o")}
`,
});

const startedAt = Math.floor(Date.now() / 1000);
const ask = [{ role: "user" as const, content: "which model?" }];

async function retrieveStatus(gw: (typeof ctx)["gw"], key: string, id: string) {
  const res = await fetch(`${gw.url}/v1/models/${id}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("/v1 models: one rule for what is listed, retrieved and forwarded", () => {
  test("an unknown model is OpenAI's 404 model_not_found on every /v1 API, before any provider, costing nothing", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    const c = openaiClient(gw, key);
    const errors = [
      await c.chat.completions.create({ model: "gpt-9", messages: ask }).catch((e) => e),
      await c.chat.completions.create({ model: "gpt-9", messages: ask, stream: true }).catch((e) => e),
      await c.chat.completions.create({ model: "selfhosted/vendor-1", messages: ask }).catch((e) => e),
      await c.chat.completions.create({ model: "other/model-o", messages: ask }).catch((e) => e),
      await c.responses.create({ model: "gpt-9", input: "hi" }).catch((e) => e),
      await c.embeddings.create({ model: "vendor-1", input: "hi" }).catch((e) => e),
      await c.models.retrieve("gpt-9").catch((e) => e),
    ];
    for (const err of errors) {
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect(err.error).toMatchObject({ type: "invalid_request_error", code: "model_not_found", param: "model" });
      // what to do instead: the list of what is served, and (a self-hosted provider is in the route) model_patterns
      expect(err.message).toContain("GET /v1/models");
      expect(err.message).toContain("model_patterns");
    }
    const raw = await rawPost(gw, "/v1/chat/completions", key, { model: "gpt-9", messages: ask });
    expect(raw.status).toBe(404);
    expect(violations("ErrorResponse", await raw.json())).toEqual([]);
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
  });

  test("GET /v1/models/{id} answers 200 exactly when a chat asking for that model is forwarded (and, through a pattern, the provider has it)", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 50 });
    const ids = [
      "model-a",
      "selfhosted/model-a",
      "model-x",
      "embed-a",
      "vendor-77",
      "catalog/vendor-77",
      "catalog/model-c",
      "selfhosted/vendor-77",
      "catalog/model-a",
      "model-o",
      "other/model-o",
      "gpt-9",
    ];
    const seen: Record<string, { retrieve: number; forwarded: boolean }> = {};
    for (const id of ids) {
      sim.reset();
      const res = await rawPost(gw, "/v1/chat/completions", key, { model: id, messages: ask });
      await res.text();
      seen[id] = { retrieve: (await retrieveStatus(gw, key, id)).status, forwarded: sim.calls.count > 0 };
    }
    for (const id of ids)
      expect({ id, agree: seen[id]?.retrieve === (seen[id]?.forwarded ? 200 : 404) }).toEqual({ id, agree: true });
    expect(seen["vendor-77"]?.forwarded).toBe(true);
    expect(seen["gpt-9"]?.forwarded).toBe(false);
    expect(seen["other/model-o"]?.forwarded).toBe(false);
    const vendor = await retrieveStatus(gw, key, "vendor-77");
    expect(vendor.body).toMatchObject({ id: "vendor-77", object: "model", owned_by: "catalog" });
    // matched by the pattern but not in the provider's own catalog: forwarded (its 404 is passed on), retrieved as 404
    expect((await retrieveStatus(gw, key, "vendor-78")).status).toBe(404);
  });

  test("the list names the models of the /v1 routes' providers, each with a real created time", async () => {
    const { gw } = ctx;
    const { key } = gw.newKey({ credits: 1 });
    const list = await openaiClient(gw, key).models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(["selfhosted/model-a", "model-a", "model-x", "embed-a", "catalog/model-c"]));
    expect(ids.some((id) => id.startsWith("other/") || id === "model-o")).toBe(false);
    for (const m of list.data) {
      expect(violations("Model", m)).toEqual([]);
      expect(m.created).toBeGreaterThan(startedAt - 600);
      expect(m.created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    }
  });
});
