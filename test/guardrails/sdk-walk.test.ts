/**
 * Issue 41, generated, for the Messages API the gateway serves: every string-bearing field of the
 * request types of Anthropic's official SDK (`MessageCreateParams` for `POST /v1/messages`,
 * `MessageCountTokensParams` for `/v1/messages/count_tokens`, as generated from the installed SDK's
 * TypeScript types into test/fixtures/sdk-types/anthropic-messages.json by
 * scripts/sdk-request-schemas.ts), and a key added to every object, gets a card number, an email
 * and a name (test/guardrails/schema-walk.ts, the generator openapi-walk.test.ts runs on OpenAI's
 * schemas). Sent by that SDK with redaction on, none reaches a simulator verbatim, whether the
 * provider is `anthropic` (the client's body passed through) or OpenAI-shaped (translated); with
 * cards blocked, a card at any one of those places alone is refused, sent nowhere.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Anthropic from "@anthropic-ai/sdk";
import fixture from "../fixtures/sdk-types/anthropic-messages.json";
import { type AnthropicUpstream, anthropicProvider, startAnthropicUpstream } from "../helpers/anthropic-upstream";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { groupToml } from "../helpers/groups-toml";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";
import { ALL_FEATURES } from "../openai/setup";
import {
  CARD_ALONE,
  carriedPart,
  FILLER,
  filled,
  leaked,
  PAYLOAD,
  requestTemplates,
  type Schema,
  type Template,
} from "./schema-walk";
import { STRICT_PLAN } from "./setup";

/** every feature, and image URLs fetched by the provider (the walk's URLs are public addresses) */
const FEATURES = `${ALL_FEATURES.slice(0, -1)}, "remote_urls"]`;
const SCHEMAS = fixture.components.schemas as Record<string, Schema>;
type Api = keyof typeof fixture.roots;
const ctx = {} as { gw: TestGateway; claude: AnthropicUpstream; sim: Upstream; keys: Record<string, string> };

beforeAll(async () => {
  [ctx.claude, ctx.sim] = await Promise.all([startAnthropicUpstream(), startUpstream()]);
  ctx.gw = await startGateway({
    functions: [],
    configText: `
${anthropicProvider({ url: ctx.claude.url, extra: `features = ${FEATURES}` })}
${simProvider({ url: `${ctx.sim.url}/v1`, name: "sim", model: "model-a", extra: `features = ${FEATURES}` })}
${groupToml("via-claude", [{ provider: "claude", model: "claude-sim-1" }])}
${groupToml("via-sim", [{ provider: "sim", model: "model-a" }])}

${STRICT_PLAN}
[plans.redacting.guardrails]
redact_pii = ["email", "credit_card", "name"]

[plans.redacting.rate_limits]
messages = 100000

[plans.strict.rate_limits]
messages = 100000
`,
  });
  ctx.keys = {};
  for (const plan of ["redacting", "strict"]) ctx.keys[plan] = ctx.gw.newKey({ plan, credits: 1_000_000 }).key;
});

afterAll(async () => {
  await ctx.gw.close();
  await ctx.claude.close();
  await ctx.sim.close();
});

const client = (key: string) => new Anthropic({ apiKey: key, baseURL: ctx.gw.url, maxRetries: 0 });

/** The request as the SDK sends it: a message (its stream read to the end) or a count; the status. */
async function send(api: Api, key: string, body: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const messages = client(key).messages;
  try {
    const res =
      api === "messages"
        ? await messages.create(body as unknown as Anthropic.MessageCreateParams).asResponse()
        : await messages.countTokens(body as unknown as Anthropic.MessageCountTokensParams).asResponse();
    return { status: res.status, text: await res.text() };
  } catch (e) {
    if (e instanceof Anthropic.APIError) return { status: e.status ?? 0, text: e.message };
    throw e;
  }
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/** What simulator `sim` was sent of `api` since `from` (its counts: count_tokens), as one text, and how many. */
function sentTo(sim: "claude" | "sim", api: Api, from: number): { n: number; text: string } {
  const bodies: unknown[] =
    sim === "sim"
      ? ctx.sim.calls.requests.map((r) => r.body)
      : api === "messages"
        ? ctx.claude.calls.requests.map((r) => r.body)
        : ctx.claude.calls.counts;
  return { n: bodies.length - from, text: JSON.stringify(bodies.slice(from)) };
}
const sentCount = (sim: "claude" | "sim", api: Api) => sentTo(sim, api, 0).n;

/**
 * What the gateway refuses as a Messages request whatever the provider (it is never sent): a turn
 * with the `system` role, which the SDK declares (`SystemMessageParam` in `messages`) and the
 * gateway refuses (`messages[i].role` must be user or assistant; the system prompt is `system`).
 * The streaming form of MessageCreateParams is left out too: it is the same fields with `stream: true`.
 */
const LEFT_OUT = new Set(["SystemMessageParam"]);
/** a `url` field's slot is the path of a public address (an image URL the translations take; no DNS look-up) */
const URL_PREFIX = "https://93.184.216.34/";
/**
 * An array holds at most this many items a template: templates stay small (the blocking test sends
 * one per slot), and what a route leaves out of one takes fewer slots with it.
 */
const CHUNK = 8;

/** The part of each of `api`'s templates that the route to `model` takes (schema-walk.ts `carriedPart`). */
async function routed(api: Api, model: string, sim: "claude" | "sim", dropped: Set<string>): Promise<Template[]> {
  const top = (b: Record<string, unknown>) => ({ ...b, model });
  const out: Template[] = [];
  for (const t of requestTemplates(SCHEMAS, fixture.roots[api], {
    top,
    once: true,
    leave: (ref) => LEFT_OUT.has(ref),
    url: URL_PREFIX,
    chunk: CHUNK,
  })) {
    const part = await carriedPart(
      t,
      (body) => send(api, ctx.keys.redacting as string, body),
      () => sentCount(sim, api),
      dropped,
    );
    // a template left with no slot, or the same as one before (a cache hit), proves nothing
    if (part.slots.length > 0 && !out.some((o) => o.json === part.json)) out.push(part);
  }
  return out;
}

const walks = {} as Record<string, Template[]>;
const droppedBy = { "via-claude": new Set<string>(), "via-sim": new Set<string>() };
beforeAll(async () => {
  const sim = { "via-claude": "claude", "via-sim": "sim" } as const;
  // one route at a time per simulator: whether a refusal came before the simulator was sent anything is read from its count
  await Promise.all(
    (["via-claude", "via-sim"] as const).map(async (model) => {
      for (const api of Object.keys(fixture.roots) as Api[])
        walks[`${api} ${model}`] = await routed(api, model, sim[model], droppedBy[model]);
    }),
  );
}, 60_000);

test("the fixture is the installed SDK's: an upgrade regenerates it (scripts/sdk-request-schemas.ts)", () => {
  const installed = createRequire(import.meta.url).resolve(`${fixture.sdk}/package.json`);
  expect(fixture.version).toBe((JSON.parse(readFileSync(installed, "utf8")) as { version: string }).version);
});

test("the walk finds the string fields and keys of both request types, and what each route carries of them", () => {
  const slots = (k: string) => new Set((walks[k] ?? []).flatMap((t) => t.slots)).size;
  console.log(
    Object.keys(walks)
      .map((k) => `${k}: ${slots(k)} slots`)
      .join(", "),
    `; left out as refused: to anthropic ${[...droppedBy["via-claude"]].join(" ")}; translated ${[...droppedBy["via-sim"]].join(" ")}`,
  );
  for (const k of Object.keys(walks))
    expect({ k, slots: slots(k) > (k.endsWith("via-claude") ? 400 : 60) }).toEqual({ k, slots: true });
});

describe.each([
  ["anthropic (the body passed through)", "via-claude", "claude"],
  ["OpenAI-shaped (translated)", "via-sim", "sim"],
] as const)("every string field and key of the SDK's request types, to an %s provider", (_, model, sim) => {
  test("with a card, an email and a name in every one at once, none reaches the simulator verbatim", async () => {
    const out: unknown[] = [];
    // count_tokens is sent to an `anthropic` provider only (else the gateway counts)
    for (const api of (sim === "claude" ? ["messages", "count_tokens"] : ["messages"]) as Api[])
      for (const [i, t] of (walks[`${api} ${model}`] ?? []).entries()) {
        const from = sentCount(sim, api);
        const r = await send(
          api,
          ctx.keys.redacting as string,
          filled(t, () => PAYLOAD),
        );
        const sent = sentTo(sim, api, from);
        out.push({
          api,
          i,
          why: r.status === 200 || sent.n > 0 ? "" : r.text.slice(0, 160),
          reached: sent.n > 0,
          placeholder: sent.text.includes("[EMAIL_"),
          leaked: leaked(sent.text),
          status: r.status < 500,
        });
      }
    expect(out).toEqual(
      out.map((o) => ({ ...(o as object), why: "", reached: true, placeholder: true, leaked: [], status: true })),
    );
  });
});

test("with cards blocked, a card at any one of them alone is refused, sent nowhere", async () => {
  const missed: string[] = [];
  const sentAll = () => sentCount("claude", "messages") + sentCount("claude", "count_tokens") + sentCount("sim", "messages");
  const before = sentAll();
  for (const [k, ts] of Object.entries(walks)) {
    const api = k.split(" ")[0] as Api;
    const jobs = ts.flatMap((t) => t.slots.map((s) => [t, s] as const));
    await pool(jobs, 4, async ([t, s]) => {
      const r = await send(
        api,
        ctx.keys.strict as string,
        filled(t, (x) => (x === s ? CARD_ALONE : FILLER)),
      );
      if (r.status !== 422) missed.push(`${k} ${s}: ${r.status} ${r.text.slice(0, 200)}`);
    });
  }
  expect(sentAll() - before).toBe(0);
  expect(missed.slice(0, 20)).toEqual([]);
}, 120_000);
