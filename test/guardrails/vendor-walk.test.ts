/**
 * Issue 41, generated, for the new vendors as providers: the OpenAI request walk (schema-walk.ts
 * over test/fixtures/openai-openapi/requests.json: chat completions, and Responses, served through
 * the chat translation) sent to one gateway whose routes go to `gemini`, `mistral`, `azure-openai`
 * and `anthropic` providers (their simulators in test/helpers/). With redaction on, none of the card
 * number, email and name in every string field and key reaches any vendor's simulator verbatim,
 * after the gateway's translation to that vendor's wire format; with cards blocked, a card at any
 * one of those places alone is refused, sent nowhere. What a vendor's translation refuses before
 * sending (nothing is sent) is left out of its walk (schema-walk.ts `carriedPart`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type AnthropicUpstream, anthropicProvider, startAnthropicUpstream } from "../helpers/anthropic-upstream";
import { type AzureSim, startAzure } from "../helpers/azure-sim";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { type GeminiUpstream, geminiProvider, startGeminiUpstream } from "../helpers/gemini-upstream";
import { groupToml } from "../helpers/groups-toml";
import { type MistralSim, startMistral } from "../helpers/mistral-sim";
import { rawPost } from "../openai/setup";
import { CARD_ALONE, carriedPart, FILLER, filled, leaked, type OpenaiTemplate, openaiTemplates, PAYLOAD } from "./schema-walk";
import { STRICT_PLAN } from "./setup";

const ctx = {} as {
  gw: TestGateway;
  gemini: GeminiUpstream;
  mistral: MistralSim;
  azure: AzureSim;
  claude: AnthropicUpstream;
  keys: Record<string, string>;
};

const VENDORS = ["gemini", "mistral", "azure", "claude"] as const;
type Vendor = (typeof VENDORS)[number];
/** the model each route's deployment asks its vendor for */
const MODEL: Record<Vendor, string> = {
  gemini: "gemini-2.5-flash",
  mistral: "mistral-small-latest",
  azure: "gpt-4o",
  claude: "claude-sim-1",
};
/** a URL field's slot is the path of a public address (the translations take it as an image URL; no DNS look-up) */
const URL_PREFIX = "https://93.184.216.34/";
const bodiesOf = (v: Vendor): unknown[] => ctx[v].calls.requests.map((r) => r.body);

beforeAll(async () => {
  [ctx.gemini, ctx.mistral, ctx.azure, ctx.claude] = await Promise.all([
    startGeminiUpstream(),
    startMistral(),
    startAzure(),
    startAnthropicUpstream(),
  ]);
  const groups = VENDORS.map((v) => groupToml(`via-${v}`, [{ provider: v, model: MODEL[v] }])).join("\n");
  ctx.gw = await startGateway({
    functions: [],
    configText: `
${geminiProvider({ url: ctx.gemini.url, name: "gemini", model: MODEL.gemini })}
[[providers]]
name = "mistral"
type = "mistral"
base_url = "${ctx.mistral.baseUrl}"
api_key = "${ctx.mistral.apiKey}"

[[providers]]
name = "azure"
type = "azure-openai"
endpoint = "${ctx.azure.endpoint}"
api_key = "${ctx.azure.apiKey}"
api_version = "2024-10-21"
deployments = { "gpt-4o" = "prod-4o" }

${anthropicProvider({ url: ctx.claude.url })}
${groups}
${STRICT_PLAN}
[plans.redacting.guardrails]
redact_pii = ["email", "credit_card", "name"]

[plans.redacting.rate_limits]
"chat-completions" = 100000
responses = 100000

[plans.strict.rate_limits]
"chat-completions" = 100000
responses = 100000
`,
  });
  ctx.keys = {};
  for (const plan of ["redacting", "strict"]) ctx.keys[plan] = ctx.gw.newKey({ plan, credits: 1_000_000 }).key;
});

afterAll(async () => {
  await ctx.gw.close();
  await Promise.all([ctx.gemini.close(), ctx.mistral.close(), ctx.azure.close(), ctx.claude.close()]);
});

async function send(t: OpenaiTemplate, key: string, body: Record<string, unknown>) {
  // two templates may redact to the same body: never the cache's answer
  const r = await rawPost(ctx.gw, `/v1/${t.api}`, key, body, { "cache-control": "no-store" });
  return { status: r.status, text: await r.text() };
}

const walks = {} as Record<Vendor, OpenaiTemplate[]>;
const dropped = {} as Record<Vendor, Set<string>>;
beforeAll(async () => {
  await Promise.all(
    VENDORS.map(async (v) => {
      dropped[v] = new Set();
      walks[v] = [];
      const model = `via-${v}`;
      for (const t of openaiTemplates(
        ["chat/completions", "responses"],
        { "chat/completions": model, responses: model },
        { url: URL_PREFIX, chunk: 1, json: ["arguments"] },
      )) {
        const part = await carriedPart(
          t,
          (body) => send(t, ctx.keys.redacting as string, body),
          () => bodiesOf(v).length,
          dropped[v],
        );
        // a template left with no slot, or the same as one before (a cache hit), proves nothing
        if (part.slots.length > 0 && !walks[v].some((w) => w.json === part.json)) walks[v].push({ ...part, api: t.api });
      }
    }),
  );
}, 60_000);

describe.each(VENDORS)("the OpenAI request walk through the gateway to a %s provider", (v) => {
  test("the walk keeps string fields and keys of both APIs to carry", () => {
    const n = (api: string) => new Set(walks[v].filter((t) => t.api === api).flatMap((t) => t.slots)).size;
    const counts = { chat: n("chat/completions"), responses: n("responses") };
    console.log(`${v}: ${JSON.stringify(counts)} slots; left out as refused: ${[...dropped[v]].join(" ")}`);
    expect(counts.chat).toBeGreaterThan(15);
    expect(counts.responses).toBeGreaterThan(10);
  });

  test("with a card, an email and a name in every one at once, none reaches the vendor's simulator verbatim", async () => {
    const out: unknown[] = [];
    for (const [i, t] of walks[v].entries()) {
      const from = bodiesOf(v).length;
      const r = await send(
        t,
        ctx.keys.redacting as string,
        filled(t, () => PAYLOAD),
      );
      const sent = JSON.stringify(bodiesOf(v).slice(from));
      const reached = bodiesOf(v).length > from;
      out.push({
        api: t.api,
        i,
        why: reached ? "" : r.text.slice(0, 200),
        placeholder: sent.includes("[EMAIL_"),
        leaked: leaked(sent),
      });
    }
    // a template whose slots all sit in fields the vendor's translation leaves out sends no placeholder;
    // most carry one (the redacted text reached the vendor)
    const carried = out.filter((o) => (o as { placeholder: boolean }).placeholder).length;
    expect(carried).toBeGreaterThan(out.length / 2);
    expect(out).toEqual(out.map((o) => ({ ...(o as object), why: "", leaked: [] })));
  });

  test("with cards blocked, a card at any one of them alone is refused, sent nowhere", async () => {
    const before = bodiesOf(v).length;
    const missed: string[] = [];
    await Promise.all(
      walks[v].flatMap((t) =>
        t.slots.map(async (s) => {
          const r = await send(
            t,
            ctx.keys.strict as string,
            filled(t, (x) => (x === s ? CARD_ALONE : FILLER)),
          );
          if (r.status !== 422) missed.push(`${t.api} ${s}: ${r.status} ${r.text.slice(0, 160)}`);
        }),
      ),
    );
    expect(bodiesOf(v).length - before).toBe(0);
    expect(missed).toEqual([]);
  });
});
