/**
 * A /v1 call naming a model group goes upstream as the client's own bytes with only the model's
 * value replaced by the deployment's, when "model" is the body's first key and written plainly
 * (providers/chat.ts `sentWith`); any other body is serialised again. Either way the upstream gets
 * exactly what the client asked for, with the deployment's model, and nothing else changed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

let up: Upstream;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  up = await startUpstream();
  gw = await startGateway({
    configText: `${simProvider({ url: `${up.url}/v1`, name: "sim", model: "sim-default" })}
[cache]
enabled = false

[[models]]
name = "grp"
[[models.deployments]]
provider = "sim"
model = "up-model"
`,
  });
  key = gw.newKey({ credits: 1000 }).key;
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

/** Sends `text` as the body of a chat completion; answers what the upstream received, as text and parsed. */
async function sent(text: string): Promise<{ raw: string; body: Record<string, unknown> }> {
  const before = up.calls.count;
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: text,
  });
  expect(r.status).toBe(200);
  expect(r.headers.get("x-textai-deployment")).toBe("sim/up-model");
  expect(up.calls.count).toBe(before + 1);
  const call = up.calls.requests[up.calls.requests.length - 1] as { raw: string; body: Record<string, unknown> };
  return { raw: call.raw, body: call.body };
}

const MESSAGES = '[{"role":"user","content":"caf\\u00e9 \\"model\\": \\"grp\\""}]';

describe("a model group call's body upstream", () => {
  test("model first, written plainly: the client's bytes, only the model's value replaced (escapes and spacing kept)", async () => {
    const text = `{ "model" : "grp" ,\n "messages":${MESSAGES}, "max_tokens": 5, "metadata": {"model": "grp"} }`;
    const { raw, body } = await sent(text);
    expect(raw).toBe(`{ "model" : "up-model" ,\n "messages":${MESSAGES}, "max_tokens": 5, "metadata": {"model": "grp"} }`);
    expect(body.model).toBe("up-model");
  });

  test("a nested key named model (a tool's schema) is left alone", async () => {
    const tools =
      '[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"model":{"type":"string"}}}}}]';
    const text = `{"model":"grp","messages":${MESSAGES},"tools":${tools}}`;
    const { raw } = await sent(text);
    expect(raw).toBe(`{"model":"up-model","messages":${MESSAGES},"tools":${tools}}`);
  });

  test("model not first, or written with an escape: serialised again, with the deployment's model", async () => {
    for (const text of [
      `{"messages":${MESSAGES},"model":"grp","max_tokens":5}`,
      `{"model":"\\u0067rp","messages":${MESSAGES},"max_tokens":5}`,
    ]) {
      const { raw, body } = await sent(text);
      expect(body).toEqual({ ...JSON.parse(text), model: "up-model" });
      expect(raw).not.toContain('"grp"');
      expect(raw).not.toContain("u0067");
    }
  });

  test("a key given twice (JSON.parse keeps the last): serialised again, the first one gone", async () => {
    const text = `{"model":"other","messages":${MESSAGES},"model":"grp"}`;
    const { raw, body } = await sent(text);
    expect(body.model).toBe("up-model");
    expect(raw).not.toContain("other");
    expect(raw.match(/"model":/g)?.length).toBe(1);
  });
});
