import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import OpenAI from "openai";
import { loadConfig } from "../../src/config";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { databaseEnv } from "../helpers/pgbouncer";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";
import { startLongChatStream } from "../helpers/streams";
import { startUpstream } from "../helpers/upstream";
import { openaiClient, providerToml, rawPost, sseData, useGateway } from "./setup";

// model-a costs 1 credit per input token and 2 per output token, so a charge names its tokens;
// o1-pro is dear; the backup's own model has no price, and unpriced models are refused.
const ctx = useGateway({
  configText: (url) => `
[pricing]
refuse_unpriced = true
default_max_output_tokens = 400

[pricing.models]
"model-a" = { input = 1000, output = 2000 }
"o1-pro" = { input = 150, output = 600 }
"embed-*" = { input = 1000 }
${providerToml("primary", url, "model-a", 'embedding_model = "embed-a"\nmodel_patterns = ["o1-*"]')}
${providerToml("backup", url, "model-unpriced")}
`,
  env: { TEXTAI_ADMIN_TOKEN: "pricing-test-operator-token-0123456789abcdef" },
});

interface Row {
  amount: number;
  function: string;
  request_id: string;
  input_tokens: number | null;
  output_tokens: number | null;
}

/** The account's charge rows, read from the gateway's SQLite file. */
function charges(gw: TestGateway, accountId: string): Row[] {
  const db = new Database(gw.dbPath, { readonly: true });
  try {
    return db
      .query<Row, [string]>(
        "SELECT amount, function, request_id, input_tokens, output_tokens FROM ledger WHERE account_id = ? AND kind = 'charge' ORDER BY id",
      )
      .all(accountId);
  } finally {
    db.close();
  }
}

async function until<T>(what: () => T, ok: (v: T) => boolean, tries = 100): Promise<T> {
  let v = what();
  for (let i = 0; i < tries && !ok(v); i++) {
    await Bun.sleep(20);
    v = what();
  }
  return v;
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(" ");

describe("/v1 is priced per model and token (issue 25.3)", () => {
  test("a chat call is charged its reported usage at its model's price; the ledger and usage show the tokens", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 5000 });
    sim.reset();
    const { data, response } = await openaiClient(gw, key)
      .chat.completions.create({ model: "model-a", max_tokens: 300, messages: [{ role: "user", content: words(30) }] })
      .withResponse();
    const usage = data.usage as OpenAI.CompletionUsage;
    const cost = usage.prompt_tokens * 1 + usage.completion_tokens * 2;
    expect(cost).toBeGreaterThan(1);
    expect(response.headers.get("x-textai-credits-deducted")).toBe(String(cost));
    expect(gw.deps.ledger.balance(accountId)).toBe(5000 - cost);
    expect(charges(gw, accountId)).toEqual([
      {
        amount: -cost,
        function: "chat-completions",
        request_id: response.headers.get("x-request-id") as string,
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.completion_tokens,
      },
    ]);
    const figures = (await gw.get("/api/v1/account/usage", { authorization: `Bearer ${key}` })).json.data.result;
    expect(figures).toMatchObject({
      credits_used: cost,
      input_tokens: usage.prompt_tokens,
      output_tokens: usage.completion_tokens,
    });
    expect(figures.by_function[0]).toMatchObject({
      function: "chat-completions",
      credits: cost,
      input_tokens: usage.prompt_tokens,
      output_tokens: usage.completion_tokens,
    });
  });

  test("n × max_completion_tokens is held before the call: o1-pro with n=128 is refused with 402, reaching no provider", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 1000 });
    sim.reset();
    const request = {
      model: "o1-pro",
      n: 128,
      max_completion_tokens: 100000,
      messages: [{ role: "user", content: "hello" }],
    };
    const res = await rawPost(gw, "/v1/chat/completions", key, request);
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("insufficient_credits");
    // 128 × 100,000 output tokens at 600 credits per 1,000, plus the prompt's bound (a token per
    // byte sent, plus 256 for the provider's template) at 150, rounded up
    expect(body.error.message).toContain("at most 12800000 output tokens");
    const input = JSON.stringify(request).length + 256;
    expect(body.error.message).toContain(`at most ${input} input`);
    expect(Number(/holds up to (\d+) credits/.exec(body.error.message)?.[1])).toBe(7_680_000 + Math.ceil((input * 150) / 1000));
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(1000);
    expect(charges(gw, accountId)).toEqual([]);
  });

  test("a model without a price is refused (refuse_unpriced): 400 naming it, no provider, nothing charged", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 1000 });
    sim.reset();
    const err = await openaiClient(gw, key)
      .chat.completions.create({ model: "backup/model-unpriced", messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe("model");
    expect(err.message).toContain('model "model-unpriced" has no price');
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(1000);
  });

  test("embeddings: input tokens only; a cached answer costs what the fresh one did", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 1000 });
    sim.reset();
    const body = { model: "embed-a", input: ["alpha beta gamma", "delta"] };
    const first = await rawPost(gw, "/v1/embeddings", key, body);
    const used = ((await first.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
    const again = await rawPost(gw, "/v1/embeddings", key, body);
    expect(again.headers.get("x-cache")).toBe("HIT");
    expect(charges(gw, accountId).map((r) => [r.amount, r.input_tokens, r.output_tokens])).toEqual([
      [-used, used, 0],
      [-used, used, 0],
    ]);
  });
});

describe("the dashboard's ledger shows a /v1 charge's tokens", () => {
  test("an account holder signs in and sees tokens in / out on the charge's row", async () => {
    const { gw } = ctx;
    const admin = { authorization: "Bearer pricing-test-operator-token-0123456789abcdef" };
    const acc = await gw.post(
      "/admin/v1/accounts",
      { email: "tokens@example.com", password: "a long password here", credits: 5000 },
      admin,
    );
    expect(acc.status).toBe(201);
    const accountId = acc.json.data.result.id as string;
    const key = (await gw.post("/admin/v1/keys", { label: "t", account_id: accountId }, admin)).json.data.result.key as string;
    const { usage } = await openaiClient(gw, key).chat.completions.create({
      model: "model-a",
      max_tokens: 100,
      messages: [{ role: "user", content: "count my tokens" }],
    });
    const origin = new URL(gw.url).origin;
    const login = await fetch(`${gw.url}/dashboard/login`, {
      method: "POST",
      redirect: "manual",
      headers: { origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: "tokens@example.com", password: "a long password here" }),
    });
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
    const page = await (await fetch(`${gw.url}/dashboard/ledger`, { headers: { cookie } })).text();
    expect(page).toContain("Tokens in / out");
    expect(page).toContain(`${usage?.prompt_tokens} / ${usage?.completion_tokens}`);
  });
});

describe("a streamed answer is charged for what it delivered, even when the client leaves (issue 25.2)", () => {
  test("a complete chat stream is charged its usage; the usage chunk the client did not ask for is not sent", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 5000 });
    sim.reset();
    const res = await rawPost(gw, "/v1/chat/completions", key, {
      model: "model-a",
      stream: true,
      max_tokens: 300,
      messages: [{ role: "user", content: words(20) }],
    });
    const text = await res.text();
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    const events = sseData(text);
    expect(events.some((e) => "usage" in e)).toBe(false);
    // the upstream was asked for its usage, and the charge is on it
    expect(sim.calls.requests[0]?.body.stream_options).toEqual({ include_usage: true });
    const [row] = await until(
      () => charges(gw, accountId),
      (r) => r.length > 0,
    );
    expect(row?.input_tokens).toBeGreaterThan(0);
    expect(row?.output_tokens).toBeGreaterThan(0);
    expect(row?.amount).toBe(-((row?.input_tokens ?? 0) + 2 * (row?.output_tokens ?? 0)));
  });

  test("chat through the official SDK: a client that reads some chunks and aborts pays for what it was sent, once", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 5000 });
    sim.reset();
    const ac = new AbortController();
    const stream = await openaiClient(gw, key).chat.completions.create(
      { model: "model-a", stream: true, max_tokens: 400, messages: [{ role: "user", content: words(150) }] },
      { signal: ac.signal },
    );
    let got = "";
    let chunks = 0;
    const read = (async () => {
      for await (const chunk of stream) {
        got += chunk.choices[0]?.delta?.content ?? "";
        if (++chunks === 5) ac.abort();
      }
    })().catch((e) => e);
    // the SDK ends the iteration (or throws its abort error) once aborted
    const ended = await read;
    expect(ended === undefined || ended instanceof OpenAI.APIUserAbortError).toBe(true);
    expect(chunks).toBe(5);
    expect(got.length).toBeGreaterThan(0);
    for (let i = 0; i < 100 && !sim.calls.requests[0]?.aborted; i++) await Bun.sleep(20);
    expect(sim.calls.requests[0]?.aborted).toBe(true);
    const rows = await until(
      () => charges(gw, accountId),
      (r) => r.length > 0,
    );
    expect(rows.length).toBe(1);
    const row = rows[0] as Row;
    // no usage arrived: the estimate, the prompt's size and the output sent (about 4 characters a token)
    expect(row.input_tokens).toBeGreaterThan(150);
    expect(row.output_tokens).toBeGreaterThanOrEqual(Math.ceil(got.length / 4));
    // ...but not the whole answer (the prompt echoed back is about 1,000 characters)
    expect(row.output_tokens).toBeLessThan(150);
    expect(row.amount).toBe(-((row.input_tokens ?? 0) + 2 * (row.output_tokens ?? 0)));
    expect(gw.deps.ledger.balance(accountId)).toBe(5000 + row.amount);
    expect(gw.deps.ledger.held(accountId)).toBe(0);
    const figures = (await gw.get("/api/v1/account/usage", { authorization: `Bearer ${key}` })).json.data.result;
    expect(figures).toMatchObject({ requests: 1, credits_used: -row.amount, output_tokens: row.output_tokens });
    // exactly once: nothing more arrives later
    await Bun.sleep(200);
    expect(charges(gw, accountId).length).toBe(1);
  });

  test("/v1/responses streamed: a client that leaves mid-stream pays for the deltas it was sent", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 5000 });
    sim.reset();
    const ac = new AbortController();
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: "POST",
      signal: ac.signal,
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "model-a", stream: true, max_output_tokens: 400, input: words(150) }),
    });
    expect(res.status).toBe(200);
    const reader = res.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    let seen = "";
    while (!seen.includes("response.output_text.delta")) {
      const r = await reader.read();
      if (r.done) break;
      seen += new TextDecoder().decode(r.value);
    }
    ac.abort();
    const rows = await until(
      () => charges(gw, accountId),
      (r) => r.length > 0,
    );
    expect(sim.calls.requests[0]?.aborted).toBe(true);
    expect(rows.length).toBe(1);
    expect(rows[0]?.function).toBe("responses");
    expect(rows[0]?.output_tokens).toBeGreaterThan(0);
    expect(rows[0]?.amount).toBe(-((rows[0]?.input_tokens ?? 0) + 2 * (rows[0]?.output_tokens ?? 0)));
    expect(gw.deps.ledger.held(accountId)).toBe(0);
  });
});

describe("the [pricing] table", () => {
  const load = (toml: string) => loadConfig({ TEXTAI_CONFIG: "x.toml" }, toml).pricing;

  test("defaults: 1 credit per 1,000 tokens either way, 1,000 output tokens held per choice, unpriced models charged the default", () => {
    expect(load("")).toEqual({
      default: { input: 1, output: 1 },
      models: [],
      refuseUnpriced: false,
      defaultMaxOutputTokens: 1000,
      imageTokens: 2000,
      audioTokens: 2000,
    });
    // output defaults to the input price; patterns keep their config order (the first match wins)
    expect(
      load('[pricing.models]\n"gpt-4o-mini*" = { input = 0.15 }\n"gpt-4o*" = { input = 2.5, output = 10 }\n').models,
    ).toEqual([
      { pattern: "gpt-4o-mini*", price: { input: 0.15, output: 0.15 } },
      { pattern: "gpt-4o*", price: { input: 2.5, output: 10 } },
    ]);
  });

  test("bad entries stop start-up naming the key; /v1 flat costs are refused", () => {
    expect(() => load('[pricing.models]\n"m" = { input = -1 }\n')).toThrow(/pricing\.models\.m\.input/);
    expect(() => load('[pricing.models]\n"m" = { output = 2 }\n')).toThrow(/pricing\.models\.m/);
    expect(() => load("[pricing]\nrefuse_unpriced = 1\n")).toThrow(/pricing\.refuse_unpriced/);
    expect(() => load("[pricing]\ndefault_max_output_tokens = 0\n")).toThrow(/pricing\.default_max_output_tokens/);
    expect(() => load("[pricing]\ndefualt = { input = 1 }\n")).toThrow(/pricing/);
    expect(() => load('[costs]\n"chat-completions" = 1\n')).toThrow(/costs\.chat-completions: \/v1 calls are priced per token/);
  });
});

const pgUp = await sharedServersUp("/v1 stream charges on PostgreSQL");
describe.skipIf(!pgUp)("on PostgreSQL (TEXTAI_DATABASE_URL)", () => {
  test("a client that leaves a stream is charged for what it was sent, once, with its tokens; no hold is left", async () => {
    const db = await freshDatabase();
    const dbEnv = await databaseEnv(db.url);
    const sim = await startUpstream();
    const gw = await startGateway({
      env: { ...dbEnv.env, TEXTAI_ADMIN_TOKEN: "pg-operator-token-for-pricing-0123456789abcdef" },
      configText: `[pricing.models]\n"model-a" = { input = 1000, output = 2000 }\n${providerToml("primary", `${sim.url}/v1`, "model-a")}`,
    });
    const pg = new SQL(db.url);
    try {
      const admin = { authorization: "Bearer pg-operator-token-for-pricing-0123456789abcdef" };
      const accountId = (await gw.post("/admin/v1/accounts", { credits: 5000 }, admin)).json.data.result.id as string;
      const key = (await gw.post("/admin/v1/keys", { label: "pg", account_id: accountId }, admin)).json.data.result.key as string;
      const ac = new AbortController();
      await startLongChatStream(gw.url, key, ac);
      ac.abort();
      const rowsOf = () =>
        pg`SELECT amount::int AS amount, input_tokens::int AS input, output_tokens::int AS output FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`;
      let rows = await rowsOf();
      for (let i = 0; i < 100 && rows.length === 0; i++) {
        await Bun.sleep(20);
        rows = await rowsOf();
      }
      expect(rows.length).toBe(1);
      const [row] = rows;
      expect(row.output).toBeGreaterThan(0);
      expect(row.amount).toBe(-(row.input + 2 * row.output));
      const [acc] = await pg`SELECT balance::int AS balance FROM accounts WHERE id = ${accountId}`;
      expect(acc.balance).toBe(5000 + row.amount);
      const [holds] = await pg`SELECT count(*)::int AS n FROM credit_holds WHERE account_id = ${accountId}`;
      expect(holds.n).toBe(0);
      const usage = (await gw.get("/api/v1/account/usage", { authorization: `Bearer ${key}` })).json.data.result;
      expect(usage).toMatchObject({ credits_used: -row.amount, input_tokens: row.input, output_tokens: row.output });
    } finally {
      await pg.close();
      await gw.close();
      await dbEnv.stop();
      await sim.close();
      await db.drop();
    }
  }, 30_000);
});
