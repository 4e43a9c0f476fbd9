import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { violations } from "./openapi-schemas";
import { openaiClient, rawPost, useGateway } from "./setup";

const ctx = useGateway();

const chat = (extra: Record<string, unknown>) => ({ model: "model-a", messages: [{ role: "user", content: "hi" }], ...extra });
const responses = (extra: Record<string, unknown>) => ({ model: "model-a", input: "hi", ...extra });
const embeddings = (extra: Record<string, unknown>) => ({ model: "embed-a", input: "hi", ...extra });

/** [path, body, the parameter the 400 must name] */
const OUT_OF_RANGE: [string, Record<string, unknown>, string][] = [
  ["/v1/chat/completions", chat({ temperature: 7 }), "temperature"],
  ["/v1/chat/completions", chat({ temperature: -0.1 }), "temperature"],
  ["/v1/chat/completions", chat({ temperature: "hot" }), "temperature"],
  ["/v1/chat/completions", chat({ top_p: 1.5 }), "top_p"],
  ["/v1/chat/completions", chat({ n: 0 }), "n"],
  ["/v1/chat/completions", chat({ n: 1.5 }), "n"],
  ["/v1/chat/completions", chat({ presence_penalty: -3 }), "presence_penalty"],
  ["/v1/chat/completions", chat({ frequency_penalty: 2.5 }), "frequency_penalty"],
  ["/v1/chat/completions", chat({ logprobs: true, top_logprobs: 21 }), "top_logprobs"],
  ["/v1/chat/completions", chat({ logprobs: "yes" }), "logprobs"],
  ["/v1/chat/completions", chat({ max_tokens: 0 }), "max_tokens"],
  ["/v1/chat/completions", chat({ max_completion_tokens: -5 }), "max_completion_tokens"],
  ["/v1/chat/completions", chat({ seed: 1.5 }), "seed"],
  ["/v1/chat/completions", chat({ stop: ["a", "b", "c", "d", "e"] }), "stop"],
  ["/v1/chat/completions", chat({ logit_bias: { "50256": 101 } }), "logit_bias.50256"],
  ["/v1/chat/completions", chat({ stream: true, temperature: 9 }), "temperature"],
  ["/v1/responses", responses({ temperature: 3 }), "temperature"],
  ["/v1/responses", responses({ top_p: -1 }), "top_p"],
  ["/v1/responses", responses({ max_output_tokens: 5 }), "max_output_tokens"],
  ["/v1/responses", responses({ top_logprobs: 30 }), "top_logprobs"],
  ["/v1/embeddings", embeddings({ dimensions: 0 }), "dimensions"],
  ["/v1/embeddings", embeddings({ encoding_format: "hex" }), "encoding_format"],
];

describe("/v1 parameters outside OpenAI's documented ranges", () => {
  test("each is 400 invalid_request naming the parameter, reaching no provider and costing nothing", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    for (const [path, body, param] of OUT_OF_RANGE) {
      const res = await rawPost(gw, path, key, body);
      const got = (await res.json()) as { error: Record<string, unknown> };
      expect({ path, param, status: res.status, error: got.error }).toEqual({
        path,
        param,
        status: 400,
        error: { message: expect.stringContaining(`'${param}'`), type: "invalid_request_error", param, code: "invalid_request" },
      });
      expect(violations("ErrorResponse", got)).toEqual([]);
    }
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
  });

  test("the official SDK raises BadRequestError with the parameter", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const err = await openaiClient(gw, key)
      .chat.completions.create({ model: "model-a", messages: [{ role: "user", content: "hi" }], temperature: 7 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe("temperature");
    expect(err.message).toContain("Expected a value <= 2, but got 7");
    expect(sim.calls.count).toBe(0);
  });

  test("the bounds themselves, and null, are forwarded", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const edges = chat({
      temperature: 2,
      top_p: 0,
      n: 1,
      presence_penalty: -2,
      frequency_penalty: 2,
      logprobs: true,
      top_logprobs: 20,
      max_tokens: 1,
      seed: null,
      stop: ["a", "b", "c", "d"],
      logit_bias: { "1": -100 },
    });
    const a = await rawPost(gw, "/v1/chat/completions", key, edges);
    const b = await rawPost(gw, "/v1/responses", key, responses({ temperature: 0, top_p: 1, max_output_tokens: 16 }));
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(sim.calls.count).toBe(2);
  });
});
