/**
 * An `azure-openai` provider through the real gateway (a real port, a real SQLite file), the Azure
 * OpenAI simulator behind it (proven by AzureOpenAI in azure-sim.test.ts) and the openai SDK as the
 * client: a function call with structured output, /v1/chat/completions plain, streamed and with
 * tools, /v1/embeddings, a 429 that falls back to another provider (answered once, charged once),
 * and Azure's content filter as 422 content_filtered.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { type AzureSim, startAzure } from "../helpers/azure-sim";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

let azure: AzureSim;
let backup: Upstream;
let gw: TestGateway;

beforeAll(async () => {
  azure = await startAzure();
  backup = await startUpstream();
  gw = await startGateway({
    configText: `
[[providers]]
name = "azure"
type = "azure-openai"
endpoint = "${azure.endpoint}"
api_key = "${azure.apiKey}"
api_version = "2024-10-21"
deployments = { "gpt-4o" = "prod-4o", "text-embedding-3-small" = "embed-small" }
embedding_model = "text-embedding-3-small"

${simProvider({ url: `${backup.url}/v1`, name: "backup", model: "backup-model", extra: 'features = ["tools", "structured_output"]\nmodels = { "same" = "gpt-4o" }' })}

[routes]
"text-summarize" = ["azure"]
`,
  });
});
afterAll(async () => {
  await gw.close();
  await azure.close();
  await backup.close();
});

const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
const reset = () => {
  azure.reset();
  backup.reset();
};

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

describe("an azure-openai provider through the gateway", () => {
  test("email-analyze: the default model's deployment answers by json_schema", async () => {
    reset();
    const { key } = gw.newKey({ credits: 100 });
    const res = await gw.post(
      "/api/v1/ai/email-analyze",
      { email_content: "The app crashes when I upload a file.", allowed_categories: ["technical", "other"] },
      { "x-api-key": key },
    );
    expect(res.status).toBe(200);
    expect(res.json.meta.provider).toBe("azure");
    expect(azure.calls.requests[0]?.path).toBe("/openai/deployments/gpt-4o-mini/chat/completions");
    expect(azure.calls.requests[0]?.body.response_format).toMatchObject({ type: "json_schema" });
  });

  test("/v1/chat/completions plain, streamed and with tools, through the gpt-4o deployment", async () => {
    reset();
    const openai = client(gw.newKey({ credits: 100 }).key);
    const plain = await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi azure" }] });
    expect(plain.model).toBe("gpt-4o-2024-08-06");
    const stream = await openai.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "stream it" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text.length).toBeGreaterThan(0);
    const tools = await openai.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "call it" }],
      tools: [
        { type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } },
      ],
      tool_choice: "required",
    });
    expect(tools.choices[0]?.message.tool_calls?.[0]?.type).toBe("function");
    expect(azure.calls.requests.map((r) => r.path)).toEqual(Array(3).fill("/openai/deployments/prod-4o/chat/completions"));
    expect(backup.calls.count).toBe(0);
  });

  test("/v1/embeddings through the embedding deployment", async () => {
    reset();
    const res = await client(gw.newKey({ credits: 100 }).key).embeddings.create({
      model: "text-embedding-3-small",
      input: ["a", "b"],
      encoding_format: "float",
    });
    expect(res.data).toHaveLength(2);
    expect(azure.calls.requests[0]?.path).toBe("/openai/deployments/embed-small/embeddings");
  });

  test("a 429 from Azure falls back to the backup: the client answered once, charged once", async () => {
    reset();
    const { key, accountId } = gw.newKey({ credits: 100 });
    azure.program([{ status: 429, retryAfter: 1 }]);
    const res = await client(key)
      .chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "fall back" }] })
      .withResponse();
    expect(res.response.headers.get("x-textai-provider")).toBe("backup");
    expect([azure.calls.count, backup.calls.count]).toEqual([1, 1]);
    const rows = await settled(
      () => charges(accountId),
      (r) => r.length > 0,
    );
    expect(rows).toHaveLength(1);
    expect(gw.deps.ledger.balance(accountId)).toBe(100 + (rows[0]?.amount ?? 0));
  });

  test("Azure's content filter on the prompt: 422 content_filtered when no other provider serves the model, uncharged; a function too", async () => {
    reset();
    const { key, accountId } = gw.newKey({ credits: 100 });
    azure.program([{ contentFilter: "prompt" }, { contentFilter: "prompt" }]);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "something flagged" }] }),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("content_filtered");
    // a function routed to azure alone (the [routes] entry): the same code in the envelope
    const fn = await gw.post("/api/v1/ai/text-summarize", { text: "something flagged ".repeat(20) }, { "x-api-key": key });
    expect(fn.status).toBe(422);
    expect(fn.json.error.code).toBe("content_filtered");
    expect(gw.deps.ledger.balance(accountId)).toBe(100);
    // an answer's finish_reason passes as Azure sent it, content_filter included
    const cut = await client(key).chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] });
    expect(cut.choices[0]?.finish_reason).toBe("stop");
    azure.program([{ contentFilter: "completion" }]);
    const filtered = await client(key).chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "y" }],
    });
    expect(filtered.choices[0]?.finish_reason).toBe("content_filter");
  });
});
