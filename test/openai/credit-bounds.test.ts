import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { startUpstream, type Upstream } from "../helpers/upstream";
import { ALL_FEATURES, rawPost } from "./setup";

/**
 * Issue 35, findings 2 and 10, through a real gateway and the upstream simulator:
 *  - a /v1 call can never hold a non-finite amount: `max_tokens: 1e308` (× n) on a model whose
 *    output is free used to hold NaN, which every comparison admits, so an account with balance 0,
 *    or a key with monthly_credit_limit 0, got the whole stream for nothing;
 *  - work a provider bills outside tokens (built-in tools, audio output) is priced per call from
 *    [pricing], or refused (400 naming the field, no provider called, nothing charged).
 */
const ADMIN = "credit-bounds-test-operator-token-0123456789abcdef";
const admin = { authorization: `Bearer ${ADMIN}` };

let sim: Upstream;
let gw: TestGateway;
beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    functions: [],
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `
[pricing.models]
"model-free-out" = { input = 1, output = 0 }
"model-tools" = { input = 1000, output = 1000, per_call = { web_search = 7, code_interpreter = 30, audio_output = 3 } }

[[providers]]
name = "primary"
type = "openai-compatible"
base_url = "${sim.url}/v1"
api_key = "sk-sim"
default_model = "model-free-out"
model_patterns = ["model-*"]
features = ${ALL_FEATURES}
`,
  });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

async function keyWith(credits: number, policy?: Record<string, unknown>) {
  const acc = await gw.post("/admin/v1/accounts", { credits }, admin);
  expect(acc.status, JSON.stringify(acc.json)).toBe(201);
  const accountId = acc.json.data.result.id as string;
  const made = await gw.post("/admin/v1/keys", { label: "bounds", account_id: accountId, ...(policy ? { policy } : {}) }, admin);
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  return { key: made.json.data.result.key as string, accountId };
}

/** The huge caps, in each API's own field. */
const HUGE: [path: string, body: Record<string, unknown>, param: string][] = [
  [
    "/v1/chat/completions",
    { stream: true, n: 128, max_tokens: 1e308, messages: [{ role: "user", content: "tell me everything" }] },
    "max_tokens",
  ],
  [
    "/v1/chat/completions",
    { stream: true, max_completion_tokens: 2 ** 53, messages: [{ role: "user", content: "tell me everything" }] },
    "max_completion_tokens",
  ],
  ["/v1/responses", { stream: true, max_output_tokens: 1e308, input: "tell me everything" }, "max_output_tokens"],
];

describe("a non-finite hold admits nothing (issue 35.2)", () => {
  test("an account with balance 0: a stream with a huge cap on a model whose output is free is refused, nothing delivered, nothing charged", async () => {
    const { key, accountId } = await keyWith(0);
    sim.reset();
    for (const [path, body, param] of HUGE) {
      const res = await rawPost(gw, path, key, { model: "model-free-out", ...body });
      const text = await res.text();
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(JSON.parse(text).error.param).toBe(param);
      expect(text).not.toContain("data:");
    }
    // at the ceiling, the hold is finite, and balance 0 does not cover it
    const atCeiling = await rawPost(gw, "/v1/chat/completions", key, {
      model: "model-free-out",
      stream: true,
      n: 128,
      max_tokens: 1_000_000,
      messages: [{ role: "user", content: "tell me everything" }],
    });
    expect(atCeiling.status).toBe(402);
    expect(((await atCeiling.json()) as { error: { code: string } }).error.code).toBe("insufficient_credits");
    expect(sim.calls.count).toBe(0);
    expect(await gw.deps.ledger.balance(accountId)).toBe(0);
    expect(gw.deps.ledger.held(accountId)).toBe(0);
  });

  test("a key with monthly_credit_limit 0: the same streams are refused, nothing delivered, nothing charged; the SDK sees the 400", async () => {
    const { key, accountId } = await keyWith(1000, { monthly_credit_limit: 0 });
    sim.reset();
    for (const [path, body, param] of HUGE) {
      const res = await rawPost(gw, path, key, { model: "model-free-out", ...body });
      const text = await res.text();
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(JSON.parse(text).error.param).toBe(param);
    }
    const bounded = await rawPost(gw, "/v1/chat/completions", key, {
      model: "model-free-out",
      stream: true,
      max_tokens: 1000,
      messages: [{ role: "user", content: "tell me everything" }],
    });
    expect(bounded.status).toBe(402);
    expect(((await bounded.json()) as { error: { code: string } }).error.code).toBe("key_budget_exceeded");
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = await client.chat.completions
      .create({ model: "model-free-out", stream: true, max_tokens: 1e308, messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(sim.calls.count).toBe(0);
    expect(await gw.deps.ledger.balance(accountId)).toBe(1000);
    expect(gw.deps.ledger.held(accountId)).toBe(0);
  });
});

describe("work billed outside tokens is priced per call or refused (issue 35.10)", () => {
  const REFUSED: [path: string, body: Record<string, unknown>, param: string][] = [
    ["/v1/responses", { input: "news?", tools: [{ type: "web_search" }] }, "tools[0].type"],
    ["/v1/responses", { input: "draw", tools: [{ type: "function", name: "f" }, { type: "image_generation" }] }, "tools[1].type"],
    ["/v1/responses", { input: "run", tools: [{ type: "code_interpreter", container: { type: "auto" } }] }, "tools[0].type"],
    ["/v1/chat/completions", { messages: [{ role: "user", content: "news?" }], web_search_options: {} }, "web_search_options"],
    [
      "/v1/chat/completions",
      {
        messages: [{ role: "user", content: "say hi" }],
        modalities: ["text", "audio"],
        audio: { voice: "alloy", format: "wav" },
      },
      "modalities",
    ],
    [
      "/v1/chat/completions",
      { messages: [{ role: "user", content: "say hi" }], audio: { voice: "alloy", format: "wav" } },
      "audio",
    ],
  ];

  test("unpriced: 400 naming the field, no provider called, nothing charged", async () => {
    const { key, accountId } = await keyWith(1_000_000);
    sim.reset();
    for (const [path, body, param] of REFUSED) {
      const res = await rawPost(gw, path, key, { model: "model-free-out", ...body });
      const got = (await res.json()) as { error: { param: string; message: string; type: string } };
      expect({ path, param, status: res.status, got: got.error.param }).toEqual({ path, param, status: 400, got: param });
      expect(got.error.type).toBe("invalid_request_error");
      expect(got.error.message).toContain("per_call");
    }
    expect(sim.calls.count).toBe(0);
    expect(await gw.deps.ledger.balance(accountId)).toBe(1_000_000);
  });

  test("priced: charged the tokens plus the call's fee, held beforehand", async () => {
    const { key, accountId } = await keyWith(1_000_000);
    sim.reset();
    const cases: [path: string, body: Record<string, unknown>, fee: number][] = [
      ["/v1/responses", { input: "news?", max_output_tokens: 100, tools: [{ type: "web_search" }] }, 7],
      [
        "/v1/responses",
        {
          input: "run",
          max_output_tokens: 100,
          tools: [{ type: "web_search" }, { type: "code_interpreter", container: { type: "auto" } }],
        },
        37,
      ],
      [
        "/v1/chat/completions",
        {
          messages: [{ role: "user", content: "say hi" }],
          max_tokens: 100,
          modalities: ["text", "audio"],
          audio: { voice: "alloy" },
        },
        3,
      ],
    ];
    let spent = 0;
    for (const [path, body, fee] of cases) {
      const res = await rawPost(gw, path, key, { model: "model-tools", ...body });
      const answer = (await res.json()) as { usage: Record<string, number> };
      expect(res.status).toBe(200);
      const tokens =
        (answer.usage.prompt_tokens ?? answer.usage.input_tokens ?? 0) +
        (answer.usage.completion_tokens ?? answer.usage.output_tokens ?? 0);
      expect({ path, charged: Number(res.headers.get("x-textai-credits-deducted")) }).toEqual({ path, charged: tokens + fee });
      spent += tokens + fee;
    }
    expect(await gw.deps.ledger.balance(accountId)).toBe(1_000_000 - spent);
    // a key without the fee's credits is refused before the provider: the fee is in the hold
    const poor = await keyWith(7);
    const before = sim.calls.count;
    const res = await rawPost(gw, "/v1/responses", poor.key, {
      model: "model-tools",
      input: "x",
      max_output_tokens: 16,
      tools: [{ type: "web_search" }],
    });
    expect(res.status).toBe(402);
    expect(sim.calls.count).toBe(before);
    expect(await gw.deps.ledger.balance(poor.accountId)).toBe(7);
  });
});
