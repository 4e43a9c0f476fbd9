import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { simProvider } from "../helpers/upstream";
import { violations } from "./openapi-schemas";
import { ALL_FEATURES, openaiClient, rawPost, useGateway } from "./setup";

// Three providers on one simulator: a self-hosted one (messages withheld by default), a
// self-hosted one whose operator vouches for its messages, and one of type openai (passed by default).
const ctx = useGateway({
  configText: (url) => `
${simProvider({ url, name: "selfhosted", model: "model-s", extra: `features = ${ALL_FEATURES}` })}
${simProvider({ url, name: "vouched", model: "model-v", extra: `features = ${ALL_FEATURES}\npass_upstream_messages = true` })}
${simProvider({ url, name: "official", type: "openai", model: "model-o" })}
`,
});

const LEAKY = "connect ECONNREFUSED 10.0.0.7:5432 reading /srv/models/llama-70b.gguf on gpu-node-3.internal";
const ask = (model: string) => ({ model, messages: [{ role: "user", content: "hi" }] });

describe("upstream 4xx messages on /v1: passed per provider", () => {
  test("a self-hosted backend's message is withheld; status, type, code and a field-path param still pass", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 400, message: LEAKY, errorCode: "invalid_value", param: "messages", times: 2 }]);
    const err = await openaiClient(gw, key)
      .chat.completions.create({ model: "model-s", messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ type: "invalid_request_error", code: "invalid_value", param: "messages" });
    for (const secret of ["10.0.0.7", "/srv/", "gpu-node-3", "ECONNREFUSED"]) expect(err.message).not.toContain(secret);
    const stream = await rawPost(gw, "/v1/chat/completions", key, { ...ask("model-s"), stream: true });
    const body = await stream.text();
    expect(stream.status).toBe(400);
    expect(body).not.toContain("10.0.0.7");
    expect(JSON.parse(body).error.code).toBe("invalid_value");
  });

  test("a param that is not a field path is dropped with the message", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 422, message: LEAKY, param: "/srv/models/llama-70b.gguf" }]);
    const res = await rawPost(gw, "/v1/chat/completions", key, ask("model-s"));
    const got = (await res.json()) as { error: Record<string, unknown> };
    expect(res.status).toBe(422);
    expect(violations("ErrorResponse", got)).toEqual([]);
    expect(got.error.param).toBeNull();
    expect(JSON.stringify(got)).not.toContain("/srv/");
  });

  test("OpenAI-type providers and those configured with pass_upstream_messages pass the message word for word", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    for (const model of ["model-v", "model-o"]) {
      sim.reset();
      sim.program([
        { status: 400, message: "Invalid 'messages[0].content': string too long.", errorCode: "string_above_max_length" },
      ]);
      const err = await openaiClient(gw, key)
        .chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] })
        .catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.error.message).toBe("Invalid 'messages[0].content': string too long.");
    }
  });
});
