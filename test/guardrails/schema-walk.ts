/**
 * Issue 41's generated walk, shared by the tests that run it (openapi-walk.test.ts over OpenAI's
 * vendored request schemas, sdk-walk.test.ts over the Anthropic SDK's request types, vendor-walk.test.ts
 * with each new vendor as the provider): request templates that between them hold a slot in every
 * string-bearing field and, in every object, one key more (a field a vendor might add tomorrow), and
 * what is put in the slots. Fields on the guard's documented skip list (src/providers/guard-walk.ts:
 * the model, roles, types, ids, enumerations, base64 payloads) get a neutral value, as do
 * enumerated and constant fields of the schema.
 */
import { dropAt } from "../../src/http/messages-translate";
import { SKIP, skipped } from "../../src/providers/guard-walk";
import requests from "../fixtures/openai-openapi/requests.json";

export type Schema = Record<string, unknown>;
/** a union's member: its schema and, when it was reached by a `$ref`, the component's name */
type Alt = { schema: Schema; ref: string };

/** A request's template (its JSON, slots in it) and the slots it holds. */
export interface Template {
  json: string;
  slots: string[];
}

export const EMAIL = "maria.garcia@example.com";
export const NAME = "Maria Garcia";
export const CARD = "4111 1111 1111 1111";
/** what goes in every slot at once */
export const PAYLOAD = `${NAME} ${EMAIL} ${CARD}`;
/** none of these may reach a simulator with redaction on (the card written both ways) */
export const VERBATIM = [EMAIL, "Garcia", CARD, "4111111111111111"];
/** what goes in one slot when blocking is tried, the others holding `FILLER` */
export const CARD_ALONE = `card ${CARD}`;
export const FILLER = "plain words";

/** the parents named by the skip list's `parent.field` entries */
const POSITIONED = new Set(SKIP.filter((s) => s.includes(".")).map((s) => s.split(".")[0]));

const URL_KEY = /(^|_)url$/;

const SLOT = /\\u0001[SK]\d+\\u0001/g;

/**
 * The templates of the request schema `root`, its `$ref`s read in `schemas` (a component's name,
 * the last part of the ref; a ref to a schema not there is left out, as not vendored), each
 * passed through `top` (the caller's fixed fields: the model...), the components `leave` names left
 * out of the unions they are members of. With `once`, a component is
 * walked in full once (once per key it sits under, for the parents named on the skip list), and met
 * again it is given its required
 * fields only (no slots): a schema with many paths to the same types (the Anthropic SDK's content
 * blocks, nested in tool results) then has a slot per field and position rather than per path.
 */
export function requestTemplates(
  schemas: Record<string, Schema>,
  root: unknown,
  {
    top = (b) => b,
    once = false,
    leave = () => false,
    url = "",
    chunk = 0,
    json = [],
  }: {
    top?: (body: Record<string, unknown>) => Record<string, unknown>;
    once?: boolean;
    /** components left out wherever they are a union's member (a form the gateway refuses before sending) */
    leave?: (ref: string) => boolean;
    /** what the slot of a `url` or `*_url` field is written after (a URL a provider's translation takes as one) */
    url?: string;
    /** an array holds at most this many of its items' instances, the rest in further instances (0: all at once) */
    chunk?: number;
    /** fields whose string is a JSON document (tool-call `arguments`): the slot goes in one, `{"text": slot}` */
    json?: readonly string[];
  } = {},
): Template[] {
  /** a string field's value around its slot (the slot's characters need no JSON escape inside a JSON document) */
  const placed = (key: string, s: string) => (json.includes(key) ? `{"text":"${s}"}` : URL_KEY.test(key) ? `${url}${s}` : s);
  let slots = 0;
  /** a string placed in the instances: `\u0001S<n>\u0001` for a value, `\u0001K<n>\u0001` for a key */
  const slot = (kind: "S" | "K") => `\u0001${kind}${slots++}\u0001`;

  /** The schema a `$ref` names (and that name), or null when it is not there. */
  const resolve = (s: unknown, ref = ""): Alt | null => {
    if (typeof s !== "object" || s === null) return null;
    const to = (s as Schema).$ref;
    if (typeof to !== "string") return { schema: s as Schema, ref };
    const name = to.split("/").at(-1) as string;
    return resolve(schemas[name], name);
  };

  /** A schema's members: a union's alternatives (flattened), or an allOf's parts merged into one object. */
  const alternatives = (s: unknown): Alt[] => {
    const r = resolve(s);
    if (!r) return [];
    const { schema, ref } = r;
    if (Array.isArray(schema.allOf)) {
      const parts = schema.allOf.flatMap((p) => alternatives(p));
      const properties = Object.assign({}, ...parts.map((p) => p.schema.properties ?? {}));
      return [{ schema: { type: "object", properties }, ref }];
    }
    const union = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
    if (union) return union.flatMap((a) => alternatives(a)).filter((a) => !leave(a.ref));
    if (schema.type === "null") return [];
    return [r];
  };

  /** A named schema met again under the same key (with `once`): its required fields only, no slot. */
  const seen = new Set<string>();
  const minimal = (s: unknown, key: string, depth: number): unknown => {
    const alt = alternatives(s)[0]?.schema;
    if (!alt || depth > 10) return null;
    if ("const" in alt) return alt.const;
    if (Array.isArray(alt.enum)) return alt.enum[0];
    if (alt.type === "string") return key === "model" ? "model-a" : "neutral";
    if (alt.type === "integer" || alt.type === "number") return 1;
    if (alt.type === "boolean") return false;
    if (alt.type === "array") return [minimal(alt.items, key, depth + 1)];
    const props = (alt.properties ?? {}) as Record<string, Schema>;
    const required = (alt.required ?? []) as string[];
    return Object.fromEntries(required.map((k) => [k, minimal(props[k], k, depth + 1)]));
  };

  /**
   * Instances of `s` that between them hold every string-bearing field (a slot each) and, in every
   * object, one key more (a slot too). An array holds every instance of its items at once; an object
   * has as many instances as its most varied property; a union, its alternatives' instances.
   */
  const instances = (s: unknown, parent: string, key: string, depth = 0): unknown[] => {
    if (depth > 10) return [];
    return alternatives(s).flatMap(({ schema: alt, ref }): unknown[] => {
      if (once && ref) {
        // what the guard reads of a field depends on its name, and on its parent's key only for the
        // parents the skip list names (guard-walk.ts `skipped`)
        const at = `${ref}@${POSITIONED.has(key) ? key : "*"}`;
        if (seen.has(at)) return [minimal(alt, key, depth)];
        seen.add(at);
      }
      if ("const" in alt) return [alt.const];
      if (Array.isArray(alt.enum)) return [alt.enum[0]];
      if (alt.type === "string")
        return [skipped(parent, key) ? (key === "model" ? "model-a" : "neutral") : placed(key, slot("S"))];
      if (alt.type === "integer" || alt.type === "number") return [1];
      if (alt.type === "boolean") return [false];
      if (alt.type === "array") {
        const items = instances(alt.items, parent, key, depth + 1);
        if (items.length === 0) return [];
        if (!chunk) return [items];
        return Array.from({ length: Math.ceil(items.length / chunk) }, (_, i) => items.slice(i * chunk, (i + 1) * chunk));
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
        o[slot("K")] = slot("S");
        return o;
      });
    });
  };

  return instances(root, "", "").map((body) => templateOf(top(body as Record<string, unknown>)));
}

/** A body holding slots (a template's, filled with the slots themselves, then changed) as a template. */
export function templateOf(body: Record<string, unknown>): Template {
  const json = JSON.stringify(body);
  return { json, slots: [...json.matchAll(SLOT)].map((m) => m[0]) };
}

/** The template's JSON with `fill(slot)` at each slot (JSON string content). */
export const filled = (t: Template, fill: (slot: string) => string) =>
  JSON.parse(t.json.replace(SLOT, (s) => JSON.stringify(fill(s)).slice(1, -1))) as Record<string, unknown>;

/** The verbatim values found in `sent` (what a simulator was sent, as one text). */
export const leaked = (sent: string) => VERBATIM.filter((v) => sent.includes(v));

export type OpenaiApi = "chat/completions" | "responses" | "embeddings";
export type OpenaiTemplate = Template & { api: OpenaiApi };

const OPENAI_SCHEMAS = requests.components.schemas as Record<string, Schema>;
const OPENAI_ROOTS: Record<OpenaiApi, [schema: string, model: string]> = {
  "chat/completions": ["CreateChatCompletionRequest", "model-a"],
  responses: ["CreateResponse", "model-a"],
  embeddings: ["CreateEmbeddingRequest", "embed-a"],
};

/** The templates of OpenAI's request schemas (test/fixtures/openai-openapi/requests.json) of `apis`, with `model`s as given. */
export function openaiTemplates(
  apis: readonly OpenaiApi[] = ["chat/completions", "responses", "embeddings"],
  models: Partial<Record<OpenaiApi, string>> = {},
  { url = "", chunk = 0, json = [] }: { url?: string; chunk?: number; json?: readonly string[] } = {},
): OpenaiTemplate[] {
  return apis.flatMap((api) => {
    const [schema, model] = OPENAI_ROOTS[api];
    return requestTemplates(OPENAI_SCHEMAS, OPENAI_SCHEMAS[schema], {
      top: (b) => ({ ...b, model: models[api] ?? model }),
      url,
      chunk,
      json,
    }).map((t) => ({ ...t, api }));
  });
}

/**
 * The part of template `t` that a route takes: what the gateway refuses before sending (a field it
 * does not carry, a part the provider's translation has no equivalent for) is left out, found by the
 * gateway's own refusals of the template with its slots' names for values (no personal data), each
 * naming a place (`messages[1].k`, `messages[1].content[3].type`): that place is left out, and
 * when it is refused again, the element holding it (messages-translate.ts `dropAt`);
 * a refusal after the simulator was sent the request is the provider's, not the gateway's. What was
 * left out is added to `dropped` (array indices as `[]`).
 */
export async function carriedPart(
  t: Template,
  send: (body: Record<string, unknown>) => Promise<{ status: number; text: string }>,
  sentCount: () => number,
  dropped: Set<string>,
): Promise<Template> {
  const body = filled(t, (s) => JSON.parse(`"${s}"`));
  for (let i = 0; i < 200; i++) {
    const from = sentCount();
    const r = await send(body);
    if (r.status !== 400 || sentCount() !== from) break;
    const param = paramOf(r.text);
    // the place itself (an unknown key), else, refused again, its element (a block, a message, a tool)
    if (!param || !(dropExact(body, param) || dropAt(body, param))) break;
    dropped.add(param.replace(/\[\d+\]|\.\d+/g, "[]"));
  }
  return templateOf(body);
}

/** The place a refusal names: the `param` of OpenAI's error body, or what an SDK's message starts with. */
function paramOf(text: string): string | undefined {
  try {
    const p = (JSON.parse(text) as { error?: { param?: unknown } }).error?.param;
    if (typeof p === "string") return p;
  } catch {}
  return /serve "([^"]+)"/.exec(text)?.[1] ?? /^(?:400 )?([^: ]+): /.exec(text)?.[1];
}

/** Deletes the field or element `param` names (`messages[1].content`, `tools.0`); false when it is not there. */
function dropExact(body: Record<string, unknown>, param: string): boolean {
  if (Object.hasOwn(body, param)) {
    delete body[param];
    return true;
  }
  const path = [...param.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => m[2] ?? (m[1] as string));
  let holder: unknown = body;
  for (const key of path.slice(0, -1))
    holder = typeof holder === "object" && holder !== null ? (holder as Record<string, unknown>)[key] : undefined;
  const last = path.at(-1);
  if (last === undefined || typeof holder !== "object" || holder === null || !(last in holder)) return false;
  if (Array.isArray(holder)) holder.splice(Number(last), 1);
  else delete (holder as Record<string, unknown>)[last];
  return true;
}
