/**
 * The `azure-openai` provider type against the Azure OpenAI simulator (test/helpers/azure-sim.ts,
 * proven by the openai SDK's AzureOpenAI client in azure-sim.test.ts), through both transports:
 * deployment URLs with api-version, the `deployments` map, the v1 API, api-key and Entra auth,
 * function calls with structured output, embeddings, the content filter mapped to its own kind,
 * and the failure modes of the provider contract (transport-contract.test.ts).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { loadConfig, type ProviderConfig } from "../../src/config";
import { attemptFunction } from "../../src/providers/attempt";
import { buildOpenAILikeProvider, buildProviders } from "../../src/providers/index";
import type { OpenAILikeProvider } from "../../src/providers/openai-like";
import { ProviderError, type ProxyApi } from "../../src/providers/types";
import { type AzureSim, startAzure } from "../helpers/azure-sim";
import { tiny } from "./fixtures";

let sim: AzureSim;
beforeAll(async () => {
  sim = await startAzure();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const TRANSPORTS = ["http", "sdk"] as const;
type Transport = (typeof TRANSPORTS)[number];

function provider(transport: Transport = "http", over: Partial<ProviderConfig> = {}): OpenAILikeProvider {
  return buildOpenAILikeProvider(
    {
      name: "azure",
      type: "azure-openai",
      endpoint: sim.endpoint,
      api_key: sim.apiKey,
      api_version: "2024-10-21",
      deployments: { "gpt-4o": "prod-4o", "text-embedding-3-small": "embed-small" },
      embedding_model: "text-embedding-3-small",
      ...over,
    },
    { transport },
  );
}

async function settle(p: Promise<unknown>): Promise<{ ok: unknown } | { error: Record<string, unknown> }> {
  try {
    return { ok: await p };
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    return { error: { kind: e.kind, message: e.message, status: e.status, retryAfterMs: e.retryAfterMs, upstream: e.upstream } };
  }
}
const signal = () => new AbortController().signal;
const plain = (p: OpenAILikeProvider, body: Record<string, unknown>, api: ProxyApi = "chat/completions") =>
  settle(p.proxy({ api, body, signal: signal() }));
async function drain(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of events) out.push(e);
  return out;
}
const streamed = (p: OpenAILikeProvider, body: Record<string, unknown>) =>
  settle(drain(p.proxyStream({ api: "chat/completions", body: { ...body, stream: true }, signal: signal() })));
const chat = (extra: Record<string, unknown> = {}) => ({
  model: "gpt-4o",
  messages: [{ role: "user", content: "hello azure" }],
  ...extra,
});

describe.each(TRANSPORTS)("%s transport", (transport) => {
  test("a model goes to its deployment's URL with the api-version and the api-key; a model not in the map is its own deployment", async () => {
    const out = await plain(provider(transport), chat());
    expect(out).toMatchObject({ ok: { model: "gpt-4o-2024-08-06" } });
    await plain(provider(transport), chat({ model: "gpt-4o-mini" }));
    expect(sim.calls.requests.map((r) => `${r.path}${r.query}`)).toEqual([
      "/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21",
      "/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21",
    ]);
    expect(sim.calls.requests[0]?.headers["api-key"]).toBe(sim.apiKey);
    expect(sim.calls.requests[0]?.headers.authorization).toBeUndefined();
  });

  test("an Entra token as Authorization: Bearer; the v1 API with the deployment as the body's model", async () => {
    await plain(provider(transport, { api_key: undefined, azure_ad_token: sim.token }), chat());
    expect(sim.calls.requests[0]?.headers.authorization).toBe(`Bearer ${sim.token}`);
    expect(sim.calls.requests[0]?.headers["api-key"]).toBeUndefined();
    const out = await plain(provider(transport, { api_version: "v1" }), chat());
    expect(out).toMatchObject({ ok: { model: "gpt-4o-2024-08-06" } });
    expect(sim.calls.requests[1]?.path).toBe("/openai/v1/chat/completions");
    expect(sim.calls.requests[1]?.body.model).toBe("prod-4o");
  });

  test("a stream, with Azure's first chunk that has no choices; tools", async () => {
    const out = await streamed(provider(transport), chat({ stream_options: { include_usage: true } }));
    if (!("ok" in out)) throw new Error(JSON.stringify(out));
    const chunks = out.ok as { choices: { delta: { content?: string }; finish_reason: string | null }[]; usage?: unknown }[];
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("").length).toBeGreaterThan(0);
    expect(chunks.at(-1)?.usage).toBeDefined();
    const tools = await plain(
      provider(transport),
      chat({
        tools: [
          { type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "string" } } } } },
        ],
        tool_choice: "required",
      }),
    );
    expect(tools).toMatchObject({ ok: { choices: [{ finish_reason: "tool_calls" }] } });
  });

  test("a function call with structured output goes to the default model's deployment; embeddings to theirs", async () => {
    const out = await settle(
      attemptFunction({
        def: tiny,
        request: { text: "a fine day" },
        accountId: "acct_az",
        provider: provider(transport),
        signal: signal(),
      }),
    );
    expect(out).toMatchObject({ ok: { result: { label: expect.any(String) } } });
    expect(sim.calls.requests[0]?.path).toBe("/openai/deployments/gpt-4o-mini/chat/completions");
    expect(sim.calls.requests[0]?.body.response_format).toMatchObject({ type: "json_schema" });
    expect(await provider(transport).embed?.(["x", "y"])).toHaveLength(2);
    expect(sim.calls.requests[1]?.path).toBe("/openai/deployments/embed-small/embeddings");
    const emb = await plain(provider(transport), { model: "text-embedding-3-small", input: "z" }, "embeddings");
    expect(emb).toMatchObject({ ok: { data: [{ index: 0 }] } });
    expect(sim.calls.requests[2]?.path).toBe("/openai/deployments/embed-small/embeddings");
  });

  test("Azure's content filter: a refused prompt is kind content_filter (its results kept); a cut answer's finish_reason passes", async () => {
    sim.program([{ contentFilter: "prompt" }, { contentFilter: "completion" }]);
    expect(await plain(provider(transport), chat())).toMatchObject({
      error: { kind: "content_filter", status: 400, upstream: { code: "content_filter", param: "prompt" } },
    });
    expect(await plain(provider(transport), chat())).toMatchObject({ ok: { choices: [{ finish_reason: "content_filter" }] } });
  });

  test("errors: 429 with retry-after-ms, 5xx, context length, a wrong key, an unknown deployment, a drop, a cut stream, the timeout", async () => {
    const p = provider(transport, { timeout_ms: 300 });
    sim.program([
      { status: 429, retryAfter: 1.5 },
      { status: 503 },
      { status: 400, contextLength: true },
      { drop: true },
      { streamCut: true },
      { delayMs: 1000 },
    ]);
    // retry-after-ms (1500) rather than retry-after's whole seconds (2)
    expect(await plain(p, chat())).toMatchObject({ error: { kind: "status", status: 429, retryAfterMs: 1500 } });
    expect(await plain(p, chat())).toMatchObject({ error: { kind: "status", status: 503 } });
    expect(await plain(p, chat())).toMatchObject({ error: { kind: "context_length" } });
    expect(await plain(p, chat())).toMatchObject({ error: { kind: "connection" } });
    expect(await streamed(p, chat())).toMatchObject({ error: { kind: "connection" } });
    expect(await plain(p, chat())).toMatchObject({ error: { kind: "timeout" } });
    expect(await plain(provider(transport, { api_key: "wrong" }), chat())).toMatchObject({
      error: { kind: "status", status: 401 },
    });
    expect(await plain(p, chat({ model: "nope" }))).toMatchObject({
      error: { kind: "status", status: 404, upstream: { code: "DeploymentNotFound" } },
    });
  });
});

test("the two transports end each failure mode alike", async () => {
  for (const fault of [
    { status: 429, retryAfter: 1 },
    { status: 500 },
    { contentFilter: "prompt" as const },
    { status: 400, contextLength: true },
  ]) {
    const outcomes: unknown[] = [];
    for (const transport of TRANSPORTS) {
      sim.program([fault]);
      outcomes.push(await plain(provider(transport), chat()));
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
  }
});

describe("a bad azure-openai entry is refused at start", () => {
  const build = (entry: string) => () =>
    buildProviders(loadConfig({ TEXTAI_CONFIG: "c.toml" }, `[[providers]]\nname = "az"\n${entry}\n`));
  test.each([
    ['type = "azure-openai"\napi_key = "k"', /providers\[0\]\.endpoint: required for type azure-openai/],
    ['type = "azure-openai"\nendpoint = "https://r.openai.azure.com"', /providers\[0\]\.api_key: required/],
    [
      'type = "azure-openai"\nendpoint = "https://r.openai.azure.com"\napi_key = "k"\napi_version = "latest"',
      /api_version: a date/,
    ],
    [
      'type = "azure-openai"\nendpoint = "https://r.openai.azure.com"\napi_key = "k"\nazure_ad_token = "t"',
      /azure_ad_token: an api_key or an azure_ad_token/,
    ],
    ['type = "azure-openai"\nendpoint = "https://r.openai.azure.com"\napi_key = "k"\ndeployment = "x"', /deployment/],
    [
      'type = "openai"\napi_key = "k"\ndeployments = { "a" = "b" }',
      /providers\[0\]\.deployments: only for type azure-openai, not openai/,
    ],
  ])("%s", (entry, error) => {
    expect(build(entry)).toThrow(error);
  });
  test("AZURE_OPENAI_API_KEY and AZURE_OPENAI_ENDPOINT enable a provider named azure-openai", () => {
    const providers = buildProviders(
      loadConfig({ AZURE_OPENAI_API_KEY: "k", AZURE_OPENAI_ENDPOINT: "https://r.openai.azure.com" }),
    );
    expect(providers.get("azure-openai")?.type).toBe("azure-openai");
  });
});
