import { describe, expect, test } from "bun:test";
import { Kind, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { GatewayError } from "../../src/errors";
import type { AnyFunctionDef } from "../../src/functions/define";
import { FUNCTIONS, getFunction } from "../../src/functions/registry";
import { validateAgainst } from "../../src/functions/validate";
import type { RateClass } from "../../src/ratelimit/interface";

const MAX_TEXT = 100_000;
const clone = <T>(v: T): T => structuredClone(v);

/** What the pipeline does before a function sees a request: defaults, validation, cleaning, normalize. */
function accept(def: AnyFunctionDef, body: unknown): Record<string, unknown> {
  const req = validateAgainst<Record<string, unknown>>(def.request, clone(body), MAX_TEXT);
  return def.normalize ? def.normalize(req) : req;
}

function rejection(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error("expected an invalid_request error, got none");
}

const resultSchemaOf = (def: AnyFunctionDef, req: unknown): TSchema => def.resultSchemaFor?.(req) ?? def.result;
const problems = (schema: TSchema, value: unknown) => [...Value.Errors(schema, value)].map((e) => `${e.path}: ${e.message}`);
const promptText = (def: AnyFunctionDef, req: unknown) =>
  def
    .prompt(req)
    .map((m) => m.content)
    .join("\n");

/** Mine, with the costs and rate classes of CONTRACT sections 6 and 7. */
const EXPECTED: Record<string, { cost: number; rateClass: RateClass }> = {
  translation: { cost: 1, rateClass: "standard" },
  "email-reply": { cost: 2, rateClass: "standard" },
  "email-analyze": { cost: 2, rateClass: "heavy" },
  "email-workflow": { cost: 2, rateClass: "standard" },
  "email-classification": { cost: 1, rateClass: "standard" },
  "review-analyze": { cost: 1, rateClass: "standard" },
  "review-summary": { cost: 2, rateClass: "standard" },
  "review-reply": { cost: 2, rateClass: "standard" },
  "review-insights": { cost: 2, rateClass: "standard" },
  "comment-analyze": { cost: 1, rateClass: "standard" },
  "comment-reply": { cost: 2, rateClass: "standard" },
  "ticket-analyze": { cost: 2, rateClass: "standard" },
  "ticket-reply": { cost: 2, rateClass: "bulk" },
  "ticket-workflow": { cost: 2, rateClass: "standard" },
  chat: { cost: 1, rateClass: "standard" },
  "content-generation": { cost: 2, rateClass: "standard" },
  "image-generation": { cost: 5, rateClass: "standard" },
};

/** The offline engine must never fake generated text or images. */
const GENERATIVE = [
  "translation",
  "email-reply",
  "review-reply",
  "comment-reply",
  "ticket-reply",
  "chat",
  "content-generation",
  "image-generation",
];

describe("registry", () => {
  test("lists every catalog function once, by the last segment of its path", () => {
    const names = FUNCTIONS.map((d) => d.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of Object.keys(EXPECTED)) expect(names).toContain(name);
    for (const def of FUNCTIONS) {
      expect(def.path.split("/").at(-1)).toBe(def.name);
      expect(getFunction(def.name)).toBe(def);
    }
    expect(getFunction("no-such-function")).toBeUndefined();
  });

  test.each(Object.entries(EXPECTED))("%s has its contract cost and rate class", (name, expected) => {
    const def = getFunction(name)!;
    expect({ cost: def.cost, rateClass: def.rateClass }).toEqual(expected);
  });

  test.each(GENERATIVE)("%s has no local implementation", (name) => {
    expect(getFunction(name)!.local).toBeUndefined();
  });

  test("image-generation is an image function, the rest of mine are text", () => {
    for (const name of Object.keys(EXPECTED))
      expect(getFunction(name)!.kind ?? "text").toBe(name === "image-generation" ? "image" : "text");
  });
});

describe.each(FUNCTIONS.map((d) => [d.name, d] as const))("%s", (_name, def) => {
  test("its example request passes the request schema", () => {
    expect(() => accept(def, def.example.request)).not.toThrow();
  });

  test("its example result passes the result schema, the request's schema and its checks", () => {
    const req = accept(def, def.example.request);
    expect(problems(def.result, def.example.result)).toEqual([]);
    expect(problems(resultSchemaOf(def, req), def.example.result)).toEqual([]);
    expect(def.check?.(req, def.example.result) ?? []).toEqual([]);
  });

  test("unknown request fields are ignored", () => {
    expect(() => accept(def, { ...def.example.request, api_key: "tai_live_x", some_future_field: 1 })).not.toThrow();
  });

  const required = (def.request.required ?? []) as string[];
  // Functions with two variants have no required field in the schema; their normalize is tested below.
  if (required.length > 0)
    test.each(required)("a request without %s is rejected, naming it", (field) => {
      const body = clone(def.example.request) as Record<string, unknown>;
      delete body[field];
      const err = rejection(() => accept(def, body));
      expect(err.code).toBe("invalid_request");
      expect(err.param).toBe(field);
    });

  // Descriptions feed the prompt's field list and the OpenAPI document; held for the catalog functions owned here.
  if (def.name in EXPECTED)
    test("every result field has a description", () => {
      const props = (def.result.properties ?? {}) as Record<string, TSchema>;
      expect(Object.keys(props).length).toBeGreaterThan(0);
      for (const [key, schema] of Object.entries(props))
        expect({ key, description: schema.description ?? "" }).not.toMatchObject({ description: "" });
    });
});

// ---- prompts use every option the request carries ----

/** Fields that choose where a request runs, not what the model is told. */
const ROUTING_FIELDS = new Set(["model", "provider"]);
/** Fields the function turns into something other than prompt text (aspect_ratio becomes the size). */
const NOT_IN_PROMPT: Record<string, string[]> = { "image-generation": ["aspect_ratio", "size"] };
/** Variants that cannot be sent together: each entry is one way to call the function. */
const VARIANTS: Record<string, string[][]> = {
  chat: [["messages"], ["message", "conversation"]],
  "ticket-reply": [["ticket_body"], ["ticket"]],
  "email-reply": [["email_content"], ["email_text"]],
};

interface Filled {
  value: unknown;
  /** strings and numbers the prompt must contain */
  markers: string[];
}

/** A request with every field set to a value that can be found again in the prompt. */
function fill(schema: TSchema, path: string): Filled {
  switch (schema[Kind]) {
    case "String": {
      const marker = `mk_${path.replace(/\W+/g, "_")}`;
      const fits = !schema.pattern || new RegExp(schema.pattern).test(marker);
      return fits ? { value: marker, markers: [marker] } : { value: undefined, markers: [] };
    }
    case "Literal":
      return { value: schema.const, markers: [] };
    case "Boolean":
      return { value: true, markers: [] };
    case "Number":
      return { value: 4.5, markers: ["4.5"] };
    case "Integer":
      return { value: 7, markers: ["7"] };
    case "Union":
      return fill((schema.anyOf as TSchema[])[0], path);
    case "Array": {
      const item = fill(schema.items as TSchema, `${path}_0`);
      return { value: [item.value], markers: item.markers };
    }
    case "Record": {
      const key = `mk_${path}_key`;
      const item = fill(Object.values(schema.patternProperties as Record<string, TSchema>)[0], `${path}_value`);
      return { value: { [key]: item.value }, markers: [key, ...item.markers] };
    }
    case "Object": {
      const value: Record<string, unknown> = {};
      const markers: string[] = [];
      for (const [key, prop] of Object.entries(schema.properties as Record<string, TSchema>)) {
        const f = fill(prop, path ? `${path}_${key}` : key);
        if (f.value === undefined) continue;
        value[key] = f.value;
        markers.push(...f.markers);
      }
      return { value, markers };
    }
    default:
      throw new Error(`test generator: no filler for ${String(schema[Kind])} at ${path}`);
  }
}

function fullRequests(def: AnyFunctionDef): { body: Record<string, unknown>; markers: string[] }[] {
  const skip = new Set([...ROUTING_FIELDS, ...(NOT_IN_PROMPT[def.name] ?? [])]);
  const base: Record<string, unknown> = {};
  const markerOf: Record<string, string[]> = {};
  for (const [key, prop] of Object.entries(def.request.properties as Record<string, TSchema>)) {
    const f = fill(prop, key);
    if (f.value === undefined) continue;
    base[key] = f.value;
    markerOf[key] = skip.has(key) ? [] : f.markers;
  }
  return (VARIANTS[def.name] ?? [[]]).map((dropped) => {
    const body = Object.fromEntries(Object.entries(base).filter(([k]) => !dropped.includes(k)));
    return { body, markers: Object.keys(body).flatMap((k) => markerOf[k]) };
  });
}

/** Optional fields whose value is not text: the prompt must change when they change. */
function switches(def: AnyFunctionDef): { field: string; values: unknown[] }[] {
  const out: { field: string; values: unknown[] }[] = [];
  const skip = new Set([...ROUTING_FIELDS, ...(NOT_IN_PROMPT[def.name] ?? [])]);
  for (const [field, prop] of Object.entries(def.request.properties as Record<string, TSchema>)) {
    if (skip.has(field)) continue;
    if (prop[Kind] === "Boolean") out.push({ field, values: [true, false] });
    const literals = prop[Kind] === "Union" ? (prop.anyOf as TSchema[]).filter((s) => s[Kind] === "Literal") : [];
    if (literals.length > 1) out.push({ field, values: [literals[0].const, literals[1].const] });
  }
  return out;
}

describe.each(FUNCTIONS.filter((d) => d.name in EXPECTED).map((d) => [d.name, d] as const))("%s prompt", (_name, def) => {
  test.each(fullRequests(def).map((r, i) => [i, r] as const))(
    "variant %d mentions every option given",
    (_i, { body, markers }) => {
      const text = promptText(def, accept(def, body));
      const missing = markers.filter((m) => !text.includes(m));
      expect(missing).toEqual([]);
    },
  );

  const flips = switches(def);
  if (flips.length > 0)
    test.each(flips.map((s) => [s.field, s] as const))("changes with %s", (_field, flip) => {
      const [a, b] = flip.values.map((v) => promptText(def, accept(def, { ...def.example.request, [flip.field]: v })));
      expect(a).not.toBe(b);
    });

  test("starts with a system message and carries the answer format", () => {
    const messages = def.prompt(accept(def, def.example.request));
    if (def.kind === "image") {
      expect(messages.map((m) => m.role)).toEqual(["user"]);
      return;
    }
    expect(messages[0].role).toBe("system");
    const fields = Object.keys((resultSchemaOf(def, def.example.request).properties ?? {}) as object);
    for (const f of fields) expect(messages[0].content).toContain(`- ${f}`);
  });
});
