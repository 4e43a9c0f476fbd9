/**
 * A function call's `model` (CONTRACT section 9: it picks a model, `provider/model` picks both):
 * a model no provider of the function's route serves is `404 model_not_found` naming the route,
 * free and sent nowhere, instead of being answered by the offline engine as if no model had been
 * named (a walkthrough, 2026-12-06: `"model": "openai/gpt-4o"` on a gateway with no `openai`
 * provider came back from `local`, charged, saying nothing). A model the route serves, a provider
 * of the route, a model group and no model at all are answered as before.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

let sim: Upstream;
let gw: TestGateway;

beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    configText: `
[cache]
enabled = false
${simProvider({ url: `${sim.url}/v1`, name: "sim", model: "model-a" })}

[routes]
"sentiment-analysis" = ["sim", "local"]
"spam-detection" = ["local"]
`,
  });
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

async function call(fn: string, model?: string) {
  const { key, accountId } = gw.newKey({ credits: 100 });
  const r = await gw.post(
    `/api/v1/ai/${fn}`,
    { text: "The parcel came early and intact.", ...(model ? { model } : {}) },
    { "x-api-key": key },
  );
  return { ...r, balance: gw.deps.ledger.balance(accountId) };
}

test("a model no provider of the route serves is 404 model_not_found naming the route; free, sent nowhere", async () => {
  sim.reset();
  for (const model of ["openai/gpt-4o", "claude-3-opus", "gpt-4o"]) {
    const r = await call("sentiment-analysis", model);
    expect([r.status, r.json.error?.code, r.json.error?.param], JSON.stringify(r.json)).toEqual([
      404,
      "model_not_found",
      "model",
    ]);
    expect(r.json.message).toContain("sentiment-analysis's route (sim, local)");
    expect(r.balance).toBe(100);
  }
  // a provider prefix that names no provider says so
  expect((await call("sentiment-analysis", "openai/gpt-4o")).json.message).toContain("`openai` is no provider of this gateway");
  // the offline engine's own route: a named model is no model it has
  expect((await call("spam-detection", "gpt-4o")).status).toBe(404);
  expect(sim.calls.count).toBe(0);
});

test("a model the route serves, a provider of the route and no model are answered as before", async () => {
  for (const model of ["model-a", "sim/model-a", "sim/other-model", "local", undefined]) {
    const r = await call("sentiment-analysis", model);
    expect(r.status, `${model}: ${JSON.stringify(r.json)}`).toBe(200);
  }
});
