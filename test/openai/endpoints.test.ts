import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openaiClient, rawPost, sentBody, useGateway } from "./setup";

const ctx = useGateway();

describe("POST /v1/embeddings", () => {
  test("forwarded as sent, answered as the provider did; cached, charged per token like a fresh one", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 20 });
    sim.reset();
    const body = { model: "embed-a", input: ["first text", "second text"], dimensions: 64, encoding_format: "float", user: "u1" };
    const res = await rawPost(gw, "/v1/embeddings", key, body);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-cache")).toBe("MISS");
    const got = (await res.json()) as OpenAI.CreateEmbeddingResponse;
    expect(got.data.map((d) => d.index)).toEqual([0, 1]);
    expect(got.data[0]?.embedding.length).toBe(64);
    expect(got.model).toBe("embed-a");
    expect(sim.calls.requests[0]?.path).toBe("/v1/embeddings");
    expect(sim.calls.requests[0]?.body).toEqual(body);
    const again = await rawPost(gw, "/v1/embeddings", key, body);
    expect(again.headers.get("x-cache")).toBe("HIT");
    expect(await again.json()).toEqual(got);
    expect(sim.calls.count).toBe(1);
    // a few tokens at the default price (1 credit per 1,000, rounded up): 1 credit each, the cached one too
    expect(gw.deps.ledger.balance(accountId)).toBe(20 - 1 - 1);
  });

  test("through the official SDK (base64 on the wire, floats for the caller), with fallback", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    sim.program([{ status: 503 }], { model: "embed-a" });
    // no model named: each provider's own embedding model (a named one stays on that model:
    // vectors of two models are not comparable; test/providers/named-model.test.ts)
    const { data, response } = await openaiClient(gw, key)
      .embeddings.create({ model: "", input: "fallback text" })
      .withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("backup");
    expect(data.data[0]?.embedding.length).toBe(64);
    expect(typeof data.data[0]?.embedding[0]).toBe("number");
    expect(sim.calls.requests.map((r) => [r.model, r.status, r.body.encoding_format])).toEqual([
      ["embed-a", 503, "base64"],
      ["embed-b", 200, "base64"],
    ]);
    sim.reset();
    sim.program([{ status: 503 }], { model: "embed-a" });
    const named = await openaiClient(gw, key)
      .embeddings.create({ model: "embed-a", input: "fallback text" })
      .catch((e) => e);
    expect(named.status).toBe(502);
    expect(sim.calls.requests.map((r) => [r.model, r.status])).toEqual([["embed-a", 503]]);
  });

  test("shape errors are 400 before any provider; rate limits and credits apply", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 0 });
    sim.reset();
    const missing = await rawPost(gw, "/v1/embeddings", key, { model: "embed-a" });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { param: string } }).error.param).toBe("input");
    const poor = await openaiClient(gw, key)
      .embeddings.create({ model: "embed-a", input: "too expensive" })
      .catch((e) => e);
    expect(poor.status).toBe(402);
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(0);
  });
});

describe("GET /v1/models", () => {
  test("every model of every provider, as provider/model and plain id; one model by id; unknown is NotFoundError", async () => {
    const { gw } = ctx;
    const { key } = gw.newKey({ credits: 1 });
    const c = openaiClient(gw, key);
    const ids = (await c.models.list()).data.map((m) => m.id);
    for (const id of ["primary/model-a", "model-a", "primary/embed-a", "embed-a", "backup/model-b", "model-b", "backup/embed-b"])
      expect(ids).toContain(id);
    expect(ids.filter((id) => id === "model-a").length).toBe(1);
    expect(ids.some((id) => id.startsWith("local"))).toBe(false);
    const one = await c.models.retrieve("primary/model-a");
    expect(one).toMatchObject({ id: "primary/model-a", object: "model", owned_by: "primary" });
    const plain = await c.models.retrieve("model-b");
    expect(plain).toMatchObject({ id: "model-b", owned_by: "backup" });
    const raw = await fetch(`${gw.url}/v1/models/backup/model-b`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await raw.json()) as { id: string }).id).toBe("backup/model-b");
    const missing = await c.models.retrieve("nope").catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    const anonymous = await fetch(`${gw.url}/v1/models`);
    expect(anonymous.status).toBe(401);
  });
});

describe("POST /v1/responses (passed through to providers with the responses feature)", () => {
  test("text in, text out; the provider gets the body as sent; charged per token", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    const out = await openaiClient(gw, key).responses.create({
      model: "model-a",
      input: "Tell me about gateways",
      instructions: "be brief",
      max_output_tokens: 50,
      metadata: { a: "b" },
    });
    expect(out.output_text).toContain("Tell me about gateways");
    expect(out.id).toMatch(/^resp_sim_/);
    expect(out.usage?.total_tokens).toBeGreaterThan(0);
    expect(sim.calls.requests[0]?.path).toBe("/v1/responses");
    expect(sim.calls.requests[0]?.body).toEqual({
      model: "model-a",
      input: "Tell me about gateways",
      instructions: "be brief",
      max_output_tokens: 50,
      metadata: { a: "b" },
    });
    expect(gw.deps.ledger.balance(accountId)).toBe(9);
  });

  test("function tools round trip and streaming events (named, ending with response.completed, no [DONE])", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 30 });
    sim.reset();
    const c = openaiClient(gw, key);
    const tools: OpenAI.Responses.Tool[] = [
      {
        type: "function",
        name: "lookup",
        strict: true,
        parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false },
      },
    ];
    const first = await c.responses.create({ model: "model-a", input: "find it", tools });
    const call = first.output.find((o) => o.type === "function_call");
    expect(call?.type === "function_call" && call.name).toBe("lookup");
    if (call?.type !== "function_call") throw new Error("no function call");
    const second = await c.responses.create({
      model: "model-a",
      tools,
      input: [
        { role: "user", content: "find it" },
        call,
        { type: "function_call_output", call_id: call.call_id, output: "found: 42" },
      ],
    });
    expect(second.output_text).toBe("Tool said: found: 42");
    expect((sentBody(sim, 1).input as unknown[]).length).toBe(3);

    const res = await rawPost(gw, "/v1/responses", key, { model: "model-a", input: "stream this please", stream: true });
    const text = await res.text();
    expect(text).not.toContain("[DONE]");
    expect(text).toContain("event: response.output_text.delta\ndata: ");
    const stream = await c.responses.create({ model: "model-a", input: "stream this please", stream: true });
    let deltas = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const e of stream) {
      if (e.type === "response.output_text.delta") deltas += e.delta;
      if (e.type === "response.completed") completed = e.response;
    }
    expect(deltas).toContain("stream this please");
    expect(completed?.status).toBe("completed");
    expect(sim.calls.requests.at(-1)?.stream).toBe(true);
  });
});
