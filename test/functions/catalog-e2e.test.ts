import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { FUNCTIONS } from "../../src/functions/registry";
import { VERSION } from "../../src/version";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

/** Costs the spec and the contract publish; everything else uses its definition's default. */
const PUBLISHED_COSTS: Record<string, number> = {
  "intent-detection": 1,
  chat: 1,
  "pii-redaction": 1,
  "email-analyze": 2,
  "ticket-reply": 2,
  "image-generation": 5,
  translation: 1,
  "sentiment-analysis": 1,
  "text-summarize": 1,
  "grammar-fix": 1,
  "spam-detection": 1,
  "comment-analyze": 1,
  "comment-moderate": 1,
  "review-analyze": 1,
  "json-extractor": 1,
  "search-query-parse": 1,
  "email-classification": 1,
  "email-reply": 2,
  "email-workflow": 2,
  "ticket-analyze": 2,
  "ticket-workflow": 2,
  "review-reply": 2,
  "review-summary": 2,
  "review-insights": 2,
  "comment-reply": 2,
  "content-generation": 2,
};

/** Variants the spec marks, beyond each definition's example. */
const VARIANTS: { fn: string; body: Record<string, unknown> }[] = [
  {
    fn: "chat",
    body: {
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello there" },
      ],
    },
  },
  {
    fn: "chat",
    body: {
      message: "And now?",
      conversation: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello!" },
      ],
      safe_mode: false,
    },
  },
  {
    fn: "ticket-reply",
    body: {
      ticket_body: "My order never arrived.",
      knowledge_base: ["Refunds within 14 days"],
      agent_name: "Sam",
      tone: "empathetic",
    },
  },
  {
    fn: "image-generation",
    body: { prompt: "a lighthouse at dusk", aspect_ratio: "16:9", style: "cinematic", negative_prompt: "people" },
  },
  { fn: "image-generation", body: { prompt: "a lighthouse at dusk", size: "512x512" } },
  { fn: "review-summary", body: { reviews: ["Great coffee.", "Slow service but friendly staff."] } },
];

let sim: Upstream;
let gw: TestGateway;
beforeAll(async () => {
  sim = await startUpstream();
  const routes = FUNCTIONS.map((d) => `"${d.name}" = ["sim"]`).join("\n");
  gw = await startGateway({
    configText: `${simProvider({ url: `${sim.url}/v1`, model: "sim-model", extra: 'models = { "image-generation" = "sim-image" }' })}
[routes]
${routes}

[plans.free.rate_limits]
standard = 10000
heavy = 10000
bulk = 10000
`,
  });
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

/** Only the schema's required fields, taken from the example; functions whose variants make the
 * schema require nothing (chat, ticket-reply) keep the example's main field. */
function minimal(def: (typeof FUNCTIONS)[number]): Record<string, unknown> {
  const example = def.example.request as Record<string, unknown>;
  const required = (def.request.required ?? []) as string[];
  const body = Object.fromEntries(required.map((k) => [k, example[k]]));
  if (!def.normalize) return body;
  try {
    def.normalize(Value.Default(def.request, structuredClone(body)) as never);
    return body;
  } catch {
    const main = Object.keys(example).find((k) => {
      try {
        def.normalize!(Value.Default(def.request, { ...body, [k]: example[k] }) as never);
        return true;
      } catch {
        return false;
      }
    });
    return main ? { ...body, [main]: example[main] } : { ...example };
  }
}

describe("every function through a real server with the upstream simulator as provider", () => {
  for (const def of FUNCTIONS) {
    const cases = [
      { label: "minimal", body: minimal(def) },
      { label: "example", body: def.example.request as Record<string, unknown> },
      ...VARIANTS.filter((v) => v.fn === def.name).map((v, i) => ({ label: `variant ${i + 1}`, body: v.body })),
    ];
    for (const c of cases) {
      test(`${def.name} (${c.label}) answers 2xx with a schema-valid result and charges its cost`, async () => {
        const { key, accountId } = gw.newKey({ credits: 50 });
        const r = await gw.post(def.path, c.body, { "x-api-key": key, "cache-control": "no-cache" });
        if (r.status !== 200) throw new Error(`${def.name}: ${r.status} ${JSON.stringify(r.json)}`);
        const normalized = def.normalize ? def.normalize(Value.Default(def.request, structuredClone(c.body)) as never) : c.body;
        const schema = def.resultSchemaFor?.(normalized as never) ?? def.result;
        const errors = [...Value.Errors(schema, r.json.data.result)].map((e) => `${e.path}: ${e.message}`);
        expect(errors).toEqual([]);
        expect(r.json.meta.provider).toBe("sim");
        const cost = PUBLISHED_COSTS[def.name] ?? def.cost;
        expect(r.json.meta.credits_deducted).toBe(cost);
        expect(gw.deps.ledger.balance(accountId)).toBe(50 - cost);
      });
    }

    for (const field of (def.request.required ?? []) as string[]) {
      test(`${def.name} without "${field}" is a 400 naming it, reaching no provider, costing nothing`, async () => {
        const { key, accountId } = gw.newKey({ credits: 50 });
        const body = minimal(def);
        delete body[field];
        const before = sim.calls.count;
        const r = await gw.post(def.path, body, { "x-api-key": key });
        expect(r.status).toBe(400);
        expect(r.json.error.code).toBe("invalid_request");
        expect(r.json.error.param).toBe(field);
        expect(sim.calls.count).toBe(before);
        expect(gw.deps.ledger.balance(accountId)).toBe(50);
      });
    }
  }

  test("the alias POST /v1/ai/intent runs intent detection", async () => {
    const intent = FUNCTIONS.find((d) => d.name === "intent-detection");
    if (!intent) return expect(FUNCTIONS.map((d) => d.name)).toContain("intent-detection");
    const { key } = gw.newKey({ credits: 5 });
    const r = await gw.post("/v1/ai/intent", { text: "I want to cancel my subscription" }, { "x-api-key": key });
    expect(r.status).toBe(200);
    expect(r.json.data.result.confidence).toBeGreaterThanOrEqual(0);
    expect(r.json.meta.credits_deducted).toBe(1);
  });
});

describe("OpenAPI", () => {
  test("the document is OpenAPI 3 and covers every function route with request and result schemas", async () => {
    const doc = (await gw.get("/openapi.json")).json;
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    // the gateway's own version (it said 1.0.0 while the gateway was 0.1.0)
    expect(doc.info.version).toBe(VERSION);
    for (const def of FUNCTIONS) {
      const op = doc.paths[def.path]?.post;
      expect(op, `${def.path} missing from OpenAPI`).toBeDefined();
      expect(op.requestBody.content["application/json"].schema.type).toBe("object");
      expect(op.requestBody.content["application/json"].example).toBeDefined();
      expect(op.responses["200"].content["application/json"].schema.properties.data).toBeDefined();
      expect(op.responses["400"]).toBeDefined();
      expect(op.responses["429"]).toBeDefined();
      // an alias (served: tested above) is its own operation with the function's schemas and its own operationId
      for (const alias of def.aliases ?? []) {
        const own = doc.paths[alias]?.post;
        expect(own, `${alias} missing from OpenAPI`).toBeDefined();
        expect(own.operationId).toBe(alias.slice(alias.lastIndexOf("/") + 1));
        expect(own.operationId).not.toBe(op.operationId);
        expect(own.requestBody).toEqual(op.requestBody);
        expect(own.responses).toEqual(op.responses);
        expect(op.description).toContain(`POST ${alias}`);
      }
    }
    // POST /v1/ai/intent, the spec's own endpoint, is listed as an operation a client generator reads
    expect(doc.paths["/v1/ai/intent"]?.post?.operationId).toBe("intent");
    // every operation has its own operationId (a generator names a method by it)
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>)
      .flatMap((ops) => Object.values(ops).map((o) => o.operationId))
      .filter((id): id is string => typeof id === "string");
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    for (const path of [
      "/api/v1/account/usage",
      "/api/v1/account/usage-summary",
      "/api/v1/account/api-key/current",
      "/v1/chat/completions",
      "/health",
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(Object.keys(doc.components.securitySchemes)).toEqual(expect.arrayContaining(["apiKeyHeader", "bearer"]));
    // one sidebar group per declared tag: every operation's tag is declared, every declared tag is used
    const declared = new Set((doc.tags as { name: string }[]).map((t) => t.name));
    const used = new Set<string>();
    for (const item of Object.values(doc.paths) as Record<string, { tags?: string[] }>[])
      for (const op of Object.values(item)) for (const tag of op.tags ?? []) used.add(tag);
    expect([...used].filter((t) => !declared.has(t))).toEqual([]);
    expect([...declared].filter((t) => !used.has(t))).toEqual([]);
  });
});
