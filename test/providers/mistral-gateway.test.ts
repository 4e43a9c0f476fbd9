/**
 * A `mistral` provider through the real gateway (a real port, a real SQLite file), the Mistral
 * simulator behind it (proven by Mistral's SDK in mistral-sim.test.ts) and the openai SDK as the
 * client: a function call with structured output, /v1/chat/completions plain, streamed and with a
 * tool round, /v1/embeddings, a 429 that falls back to another provider (answered once, charged
 * once), and the configuration errors of a bad entry at start.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { loadConfig } from "../../src/config";
import { buildProviders } from "../../src/providers/index";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { type MistralSim, startMistral } from "../helpers/mistral-sim";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

let mistral: MistralSim;
let backup: Upstream;
let gw: TestGateway;

beforeAll(async () => {
  mistral = await startMistral();
  backup = await startUpstream();
  gw = await startGateway({
    configText: `
[[providers]]
name = "mistral"
type = "mistral"
base_url = "${mistral.baseUrl}"
api_key = "${mistral.apiKey}"

${simProvider({ url: `${backup.url}/v1`, name: "backup", model: "backup-model", extra: 'features = ["tools", "structured_output", "embeddings"]\nembedding_model = "backup-embed"\nmodels = { "same" = "mistral-small-latest" }' })}
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mistral.close();
  await backup.close();
});

const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

/** the account's charge rows, read from the gateway's SQLite file */
function charges(accountId: string): { amount: number }[] {
  const db = new Database(gw.dbPath, { readonly: true });
  try {
    return db
      .query<{ amount: number }, [string]>("SELECT amount FROM ledger WHERE account_id = ? AND kind = 'charge'")
      .all(accountId);
  } finally {
    db.close();
  }
}

async function settled<T>(what: () => T, ok: (v: T) => boolean): Promise<T> {
  let v = what();
  for (let i = 0; i < 100 && !ok(v); i++) {
    await Bun.sleep(20);
    v = what();
  }
  return v;
}

const weather = {
  type: "function" as const,
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};

describe("a mistral provider through the gateway", () => {
  test("email-analyze: Mistral answers by json_schema structured output", async () => {
    mistral.reset();
    const { key } = gw.newKey({ credits: 100 });
    const res = await gw.post(
      "/api/v1/ai/email-analyze",
      { email_content: "I was charged twice for invoice INV-2291, please refund.", allowed_categories: ["billing", "other"] },
      { "x-api-key": key },
    );
    expect(res.status).toBe(200);
    expect(res.json.meta.provider).toBe("mistral");
    expect(["billing", "other"]).toContain(res.json.data.result.category);
    const sent = mistral.calls.requests[0];
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.body.model).toBe("mistral-small-latest");
    expect(sent?.body.response_format).toMatchObject({ type: "json_schema", json_schema: { strict: expect.any(Boolean) } });
  });

  test("/v1/chat/completions plain and streamed: seed goes as random_seed, safe_prompt passes", async () => {
    mistral.reset();
    const openai = client(gw.newKey({ credits: 100 }).key);
    const plain = await openai.chat.completions.create({
      model: "mistral-small-latest",
      messages: [{ role: "user", content: "hello through the gateway" }],
      seed: 5,
      // @ts-expect-error Mistral's own field, passed as sent
      safe_prompt: true,
    });
    expect(plain.choices[0]?.message.content).toBeString();
    expect(plain.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(mistral.calls.requests[0]?.body).toMatchObject({ random_seed: 5, safe_prompt: true });
    expect(mistral.calls.requests[0]?.body).not.toHaveProperty("seed");
    const stream = await openai.chat.completions.create({
      model: "mistral-small-latest",
      messages: [{ role: "user", content: "stream through the gateway" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage).toMatchObject({ completion_tokens: expect.any(Number) });
    expect(mistral.calls.requests[1]?.body).not.toHaveProperty("stream_options");
  });

  test("/v1/chat/completions with tools: tool_choice required as any, a round with OpenAI-style ids in the history", async () => {
    mistral.reset();
    const openai = client(gw.newKey({ credits: 100 }).key);
    const first = await openai.chat.completions.create({
      model: "mistral-small-latest",
      messages: [{ role: "user", content: "weather in Nice?" }],
      tools: [weather],
      tool_choice: "required",
    });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(call?.type).toBe("function");
    expect(mistral.calls.requests[0]?.body.tool_choice).toBe("any");
    const second = await openai.chat.completions.create({
      model: "mistral-small-latest",
      messages: [
        { role: "user", content: "weather in Nice?" },
        // the history from another provider: OpenAI's ids are not of Mistral's form
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_9fX2LqP0sWm3", type: "function", function: { name: "get_weather", arguments: '{"city":"Nice"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_9fX2LqP0sWm3", content: "sunny" },
      ],
      tools: [weather],
    });
    expect(second.choices[0]?.message.content).toBe("Tool said: sunny");
  });

  test("a field Mistral has not: a 400 naming it when no other provider serves the model, nothing sent or charged; else the other provider", async () => {
    mistral.reset();
    backup.reset();
    const { key, accountId } = gw.newKey({ credits: 100 });
    const ask = (model: string) =>
      client(key)
        .chat.completions.create({ model, messages: [{ role: "user", content: "x" }], logit_bias: { "42": 10 } })
        .withResponse();
    const err = await ask("mistral-large-latest").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((err as InstanceType<typeof OpenAI.APIError>).param).toBe("logit_bias");
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe("unsupported_parameter");
    expect(mistral.calls.count + backup.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(100);
    // the backup lists mistral-small-latest too: it serves the request, logit_bias and all
    const skipped = await ask("mistral-small-latest");
    expect(skipped.response.headers.get("x-textai-provider")).toBe("backup");
    expect(backup.calls.requests[0]?.body.logit_bias).toEqual({ "42": 10 });
    expect(mistral.calls.count).toBe(0);
  });

  test("/v1/embeddings through mistral-embed", async () => {
    mistral.reset();
    const res = await client(gw.newKey({ credits: 100 }).key).embeddings.create({
      model: "mistral-embed",
      input: ["one", "two"],
      encoding_format: "float",
    });
    expect(res.data).toHaveLength(2);
    expect(res.data[0]?.embedding).toHaveLength(1024);
    expect(mistral.calls.requests[0]?.path).toBe("/v1/embeddings");
  });

  test("a 429 from Mistral falls back to the backup: the client answered once, charged once", async () => {
    mistral.reset();
    backup.reset();
    const { key, accountId } = gw.newKey({ credits: 100 });
    mistral.program([{ status: 429, retryAfter: 1 }]);
    const res = await client(key)
      .chat.completions.create({ model: "mistral-small-latest", messages: [{ role: "user", content: "fall back please" }] })
      .withResponse();
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get("x-textai-provider")).toBe("backup");
    expect(res.data.choices[0]?.message.content).toBeString();
    expect(mistral.calls.count).toBe(1);
    expect(backup.calls.count).toBe(1);
    const rows = await settled(
      () => charges(accountId),
      (r) => r.length > 0,
    );
    expect(rows).toHaveLength(1);
    // (a charge row's amount is negative)
    expect(rows[0]?.amount).toBeLessThan(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(100 + (rows[0]?.amount ?? 0));
  });
});

describe("a bad mistral entry is refused at start", () => {
  const build = (entry: string) => () =>
    buildProviders(loadConfig({ TEXTAI_CONFIG: "c.toml" }, `[[providers]]\nname = "m"\n${entry}\n`));
  test("an unknown key, a misspelt type", () => {
    expect(build('type = "mistral"\napi_key = "k"\nrandom_seed = 3')).toThrow(/random_seed/);
    expect(build('type = "mistrall"\napi_key = "k"')).toThrow(/unknown provider type "mistrall"/);
  });
  test("MISTRAL_API_KEY alone enables a provider named mistral at Mistral's own address", () => {
    const providers = buildProviders(loadConfig({ MISTRAL_API_KEY: "k" }));
    expect(providers.get("mistral")?.type).toBe("mistral");
    expect(providers.get("mistral")?.modelFor("embeddings")).toBe("mistral-embed");
  });
});
