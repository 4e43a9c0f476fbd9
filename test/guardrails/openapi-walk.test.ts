/**
 * Issue 41, generated: every string-bearing field of OpenAI's request schemas (chat completions,
 * Responses and embeddings, as vendored in test/fixtures/openai-openapi/requests.json), and a key
 * added to every object (a field a vendor might add tomorrow), gets a card number, an email and a
 * name. With redaction on, none of them reaches the upstream simulator verbatim; with cards
 * blocked, a card at any one of those places alone is refused, sent nowhere. Fields on the guard's
 * documented skip list (src/providers/guard-walk.ts: the model, roles, types, ids, enumerations)
 * get a neutral value, as do enumerated and constant fields of the schema.
 */
import { describe, expect, test } from "bun:test";
import { skipped } from "../../src/providers/guard-walk";
import requests from "../fixtures/openai-openapi/requests.json";
import { rawPost } from "../openai/setup";
import { guardedSuite, STRICT_PLAN } from "./setup";

type Schema = Record<string, unknown>;
const SCHEMAS = requests.components.schemas as Record<string, Schema>;

/** The schema a `$ref` names, or null when the fixture does not vendor it (its README lists which). */
function resolve(s: unknown): Schema | null {
  if (typeof s !== "object" || s === null) return null;
  const ref = (s as Schema).$ref;
  if (typeof ref !== "string") return s as Schema;
  return resolve(SCHEMAS[ref.split("/").at(-1) as string]);
}

/** A schema's members: a union's alternatives (flattened), or an allOf's parts merged into one object. */
function alternatives(s: unknown): Schema[] {
  const r = resolve(s);
  if (!r) return [];
  if (Array.isArray(r.allOf)) {
    const parts = r.allOf.flatMap((p) => alternatives(p));
    const properties = Object.assign({}, ...parts.map((p) => p.properties ?? {}));
    return [{ type: "object", properties }];
  }
  const union = (r.anyOf ?? r.oneOf) as unknown[] | undefined;
  if (union) return union.flatMap((a) => alternatives(a));
  if (r.type === "null") return [];
  return [r];
}

/** A string placed in the instances: `\u0001S<n>\u0001` for a value, `\u0001K<n>\u0001` for a key (filled in later). */
const slot = (kind: "S" | "K", n: number) => `\u0001${kind}${n}\u0001`;
let slots = 0;

/**
 * Instances of `s` that between them hold every string-bearing field (a slot each) and, in every
 * object, one key more (a slot too). An array holds every instance of its items at once; an object
 * has as many instances as its most varied property; a union, its alternatives' instances.
 */
function instances(s: unknown, parent: string, key: string, depth = 0): unknown[] {
  if (depth > 10) return [];
  return alternatives(s).flatMap((alt): unknown[] => {
    if ("const" in alt) return [alt.const];
    if (Array.isArray(alt.enum)) return [alt.enum[0]];
    if (alt.type === "string") return [skipped(parent, key) ? (key === "model" ? "model-a" : "neutral") : slot("S", slots++)];
    if (alt.type === "integer" || alt.type === "number") return [1];
    if (alt.type === "boolean") return [false];
    if (alt.type === "array") {
      const items = instances(alt.items, parent, key, depth + 1);
      return items.length > 0 ? [items] : [];
    }
    const props = (alt.properties ?? {}) as Record<string, Schema>;
    const required = new Set((alt.required ?? []) as string[]);
    // a field on the skip list is left out unless the schema requires it (an id the gateway would refuse)
    const each = Object.entries(props)
      .map(([k, v]) => [k, instances(v, key, k, depth + 1)] as const)
      .filter(([k, v]) => required.has(k) || !(v.length === 1 && v[0] === "neutral"));
    const n = Math.max(1, ...each.map(([, v]) => v.length));
    return Array.from({ length: n }, (_, i) => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of each) if (v.length > 0) o[k] = v[Math.min(i, v.length - 1)];
      o[slot("K", slots++)] = slot("S", slots++);
      return o;
    });
  });
}

const EMAIL = "maria.garcia@example.com";
const NAME = "Maria Garcia";
const CARD = "4111 1111 1111 1111";
const PAYLOAD = `${NAME} ${EMAIL} ${CARD}`;

/** A request's template (its JSON, slots in it) and the slots it holds. */
interface Template {
  api: "chat/completions" | "responses" | "embeddings";
  json: string;
  slots: string[];
}

function templates(): Template[] {
  const out: Template[] = [];
  const add = (api: Template["api"], schema: string, top: (body: Record<string, unknown>) => Record<string, unknown>) => {
    for (const body of instances(SCHEMAS[schema], "", "")) {
      const json = JSON.stringify(top(body as Record<string, unknown>));
      out.push({ api, json, slots: [...json.matchAll(/\\u0001[SK]\d+\\u0001/g)].map((m) => m[0]) });
    }
  };
  add("chat/completions", "CreateChatCompletionRequest", (b) => ({ ...b, model: "model-a" }));
  add("responses", "CreateResponse", (b) => ({ ...b, model: "model-a" }));
  add("embeddings", "CreateEmbeddingRequest", (b) => ({ ...b, model: "embed-a" }));
  return out;
}

/** The template's JSON with `fill(slot)` at each slot (JSON string content). */
const filled = (t: Template, fill: (slot: string) => string) =>
  JSON.parse(t.json.replace(/\\u0001[SK]\d+\\u0001/g, (s) => JSON.stringify(fill(s)).slice(1, -1))) as Record<string, unknown>;

const suite = guardedSuite(
  `${STRICT_PLAN}
[plans.redacting.guardrails]
redact_pii = ["email", "credit_card", "name"]

[plans.redacting.rate_limits]
"chat-completions" = 100000
responses = 100000
embeddings = 100000
standard = 100000

[plans.strict.rate_limits]
"chat-completions" = 100000
responses = 100000
embeddings = 100000
standard = 100000
`,
  ["redacting", "strict"],
);

const all = templates();

test("the walk finds the string fields and keys of every vendored request schema", () => {
  const count = (api: string) => all.filter((t) => t.api === api).reduce((n, t) => n + t.slots.length, 0);
  expect(count("chat/completions")).toBeGreaterThan(40);
  expect(count("responses")).toBeGreaterThan(40);
  expect(count("embeddings")).toBeGreaterThan(3);
});

describe("every string field and key of OpenAI's request schemas", () => {
  test("with a card, an email and a name in every one at once, none reaches the simulator verbatim", async () => {
    const { sim, gw, keys } = suite;
    for (const t of all) {
      const from = sim.calls.requests.length;
      const r = await rawPost(
        gw,
        `/v1/${t.api}`,
        keys.redacting as string,
        filled(t, () => PAYLOAD),
      );
      expect({ api: t.api, status: r.status, body: r.status === 200 ? "" : await r.text() }).toEqual({
        api: t.api,
        status: 200,
        body: "",
      });
      const sent = suite.sentSince(from);
      expect(sent).toContain("[EMAIL_1]");
      for (const v of [EMAIL, "Garcia", CARD, "4111111111111111"]) expect(sent).not.toContain(v);
    }
  });

  test("a card at any one of them alone is refused, sent nowhere", async () => {
    const { sim, gw, keys } = suite;
    const missed: string[] = [];
    for (const t of all)
      for (const s of t.slots) {
        const before = sim.calls.requests.length;
        const r = await rawPost(
          gw,
          `/v1/${t.api}`,
          keys.strict as string,
          filled(t, (x) => (x === s ? `card ${CARD}` : "plain words")),
        );
        if (r.status !== 422 || sim.calls.requests.length !== before) missed.push(`${t.api} ${s}: ${r.status}`);
      }
    expect(missed).toEqual([]);
  });
});
