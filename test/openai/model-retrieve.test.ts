// GET /v1/models/{id} on an open catalog (a provider whose model_patterns match any id): the
// provider's own catalog decides, as OpenAI's does, asked once per id and kept a while.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";
import { violations } from "./openapi-schemas";
import { openaiClient } from "./setup";

let vendor: Upstream; // an OpenAI-style API with GET /v1/models/{id}
let vllm: Upstream; // a server with the list only (vLLM has no GET /v1/models/{id})
let gw: TestGateway;

beforeAll(async () => {
  vendor = await startUpstream({ models: ["gpt-real", "gpt-real-2"] });
  vllm = await startUpstream({ models: ["org/llama-local"], modelById: false });
  gw = await startGateway({
    functions: [],
    configText: `
${simProvider({ url: `${vendor.url}/v1`, name: "vendor", type: "openai", model: "gpt-real" })}
${simProvider({ url: `${vllm.url}/v1`, name: "vllm", model: "llama-default", extra: 'model_patterns = ["*"]' })}
[routes]
"chat-completions" = ["vendor", "vllm"]
`,
  });
});
afterAll(async () => {
  await gw?.close();
  await vendor?.close();
  await vllm?.close();
});

describe("GET /v1/models/{id} asks the provider", () => {
  test("an id no provider's catalog has is OpenAI's 404 model_not_found through the official SDK; one it has is 200", async () => {
    const { key } = gw.newKey({ credits: 1 });
    const c = openaiClient(gw, key);
    vendor.reset();
    vllm.reset();

    const missing = await c.models.retrieve("gpt-unknown-9").catch((e) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.error).toMatchObject({ type: "invalid_request_error", code: "model_not_found", param: "model" });
    expect(missing.message).toContain("gpt-unknown-9");

    // in the vendor's catalog, though the gateway's config never names it
    const real = await c.models.retrieve("gpt-real-2");
    expect(real).toMatchObject({ id: "gpt-real-2", object: "model", owned_by: "vendor" });
    expect(violations("Model", real)).toEqual([]);
    // named in the config: answered without asking
    expect((await c.models.retrieve("gpt-real")).owned_by).toBe("vendor");
    // on a server without GET /models/{id}, its list says so
    expect(await c.models.retrieve("org/llama-local")).toMatchObject({ id: "org/llama-local", owned_by: "vllm" });
    expect(await c.models.retrieve("vllm/org/llama-local")).toMatchObject({ owned_by: "vllm" });
    const notThere = await c.models.retrieve("vllm/gpt-real-2").catch((e) => e);
    expect(notThere).toBeInstanceOf(OpenAI.NotFoundError);

    // the raw answer is OpenAI's error shape
    const raw = await fetch(`${gw.url}/v1/models/gpt-unknown-9`, { headers: { authorization: `Bearer ${key}` } });
    expect(raw.status).toBe(404);
    expect(violations("ErrorResponse", await raw.json())).toEqual([]);
    // the providers were asked, never sent a completion
    expect(vendor.lookups).toContain("/v1/models/gpt-unknown-9");
    expect(vendor.lookups).toContain("/v1/models/gpt-real-2");
    expect(vendor.lookups).not.toContain("/v1/models/gpt-real");
    expect(vendor.calls.count + vllm.calls.count).toBe(0);
  });

  test("answers are kept: asking again does not ask the provider again", async () => {
    const { key } = gw.newKey({ credits: 1 });
    const c = openaiClient(gw, key);
    await c.models.retrieve("gpt-real-2");
    await c.models.retrieve("gpt-unknown-10").catch(() => null);
    vendor.reset();
    vllm.reset();
    for (let i = 0; i < 3; i++) {
      expect((await c.models.retrieve("gpt-real-2")).id).toBe("gpt-real-2");
      expect(await c.models.retrieve("gpt-unknown-10").catch((e) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    }
    expect({ vendor: vendor.lookups, vllm: vllm.lookups }).toEqual({ vendor: [], vllm: [] });
  });

  test("a provider that cannot be asked is a 502, not a 200", async () => {
    const { key } = gw.newKey({ credits: 1 });
    await vllm.close();
    try {
      const res = await fetch(`${gw.url}/v1/models/never-asked-before`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(502);
      const body = (await res.json()) as { error: { type: string; message: string } };
      expect(body.error.message).toContain("vllm");
      expect(body.error.message).not.toContain("127.0.0.1");
    } finally {
      vllm = await startUpstream({ port: vllm.port, models: ["org/llama-local"], modelById: false });
    }
  });
});
