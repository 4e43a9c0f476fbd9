import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { GatewayError } from "../../src/errors";
import { fromStructured, toStructured } from "../../src/providers/structured";
import { call, makeRouter, rejection, TinyResult, tiny } from "./fixtures";

const input = { text: "fine" };
const localAnswer = { label: "neutral" as const, score: 0.5, keywords: ["fine"] };

describe("local engine in the route", () => {
  test("preferLocal: local answers first with model local", async () => {
    const def = { ...tiny, preferLocal: true, local: () => localAnswer };
    const router = makeRouter({ providers: [{ name: "m", type: "mock" }] });
    expect(router.routeFor(def)).toEqual(["local", "m"]);
    const out = await router.run(call(def, input));
    expect(out).toEqual({ result: localAnswer, provider: "local", model: "local", attempts: [], inProcess: true });
    expect(router.resolveModel(def, {})).toEqual({ provider: "local", model: "local" });
  });

  test("local is last by default, and only when the function has a local implementation", () => {
    const router = makeRouter({ providers: [{ name: "m", type: "mock" }] });
    expect(router.routeFor({ ...tiny, local: () => localAnswer })).toEqual(["m", "local"]);
    expect(router.routeFor(tiny)).toEqual(["m"]);
    expect(router.canServe(tiny)).toBe(true);
    expect(makeRouter({}).canServe(tiny)).toBe(false);
  });

  test("a null local answer passes to the next provider without counting as a failure", async () => {
    const def = { ...tiny, preferLocal: true, local: () => null };
    const out = await makeRouter({ providers: [{ name: "m", type: "mock" }] }).run(call(def, input));
    expect(out.provider).toBe("m");
    expect(out.attempts).toEqual([]);
    expect(Value.Check(TinyResult, out.result)).toBe(true);
  });

  test("a null local answer with nothing else: no_provider 503 saying what to configure", async () => {
    const err = await rejection(makeRouter({}).run(call({ ...tiny, local: () => null }, input)));
    expect(err.code).toBe("no_provider");
    expect(err.status).toBe(503);
    expect(err.message).toContain("GROQ_API_KEY");
    const none = await rejection(makeRouter({}).run(call(tiny, input)));
    expect(none.code).toBe("no_provider");
  });

  test("a GatewayError from the local implementation reaches the client unchanged", async () => {
    const def = {
      ...tiny,
      preferLocal: true,
      local: () => {
        throw new GatewayError("not_found", "collection not found");
      },
    };
    const err = await rejection(makeRouter({ providers: [{ name: "m", type: "mock" }] }).run(call(def, input)));
    expect(err.code).toBe("not_found");
  });

  test("a configured route is policy: a request model cannot add a provider to it", async () => {
    const def = { ...tiny, local: () => localAnswer };
    const router = makeRouter({ providers: [{ name: "m", type: "mock" }], routes: { tiny: ["local"] } });
    expect(router.routeFor(def, "m")).toEqual(["local"]);
    const out = await router.run(call(def, input, { model: "m/mock-2" }));
    expect(out.provider).toBe("local");
  });

  test("model 'local' puts the offline engine first", async () => {
    const def = { ...tiny, local: () => localAnswer };
    const out = await makeRouter({ providers: [{ name: "m", type: "mock" }] }).run(call(def, input, { model: "local" }));
    expect(out.provider).toBe("local");
  });
});

describe("mock provider", () => {
  test("schema-valid, deterministic results with the configured latency", async () => {
    const router = makeRouter({ providers: [{ name: "m", type: "mock", latency_ms: 60, default_model: "mock-large" }] });
    const started = performance.now();
    const one = await router.run(call(tiny, input));
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    const two = await router.run(call(tiny, input));
    expect(one.model).toBe("mock-large");
    expect(Value.Check(TinyResult, one.result)).toBe(true);
    expect(two.result).toEqual(one.result);
  });

  test("free text when no schema is asked for", async () => {
    const router = makeRouter({ providers: [{ name: "m", type: "mock" }] });
    const c = {
      api: "chat/completions" as const,
      body: { messages: [{ role: "user", content: "ping" }] },
      signal: new AbortController().signal,
      deadlineMs: Date.now() + 1000,
      requestId: "req_test",
    };
    const out = await router.proxy(c, router.proxyTargets(c));
    expect(JSON.parse(out.json).choices[0].message.content).toContain("ping");
  });
});

describe("strict schema adaptation", () => {
  test("optional properties become required and nullable; nulls are removed again", () => {
    const s = toStructured(TinyResult as unknown as Record<string, unknown>);
    expect(s.strict).toBe(true);
    const note = (s.schema.properties as Record<string, { anyOf?: unknown[] }>).note;
    expect(note?.anyOf).toContainEqual({ type: "null" });
    const back = fromStructured(
      { label: "positive", score: 1, keywords: [], note: null },
      TinyResult as unknown as Record<string, unknown>,
      s,
    );
    expect(back).toEqual({ label: "positive", score: 1, keywords: [] });
    expect(Value.Check(TinyResult, back)).toBe(true);
  });

  test("free-form maps give up strictness; non-object roots are wrapped", () => {
    const record = toStructured({
      type: "object",
      properties: { entities: { type: "object", patternProperties: { "^(.*)$": { type: "string" } } } },
      required: ["entities"],
    });
    expect(record.strict).toBe(false);
    const arr = toStructured({ type: "array", items: { type: "string" } });
    expect(arr.wrapKey).toBe("value");
    expect(fromStructured({ value: ["x"] }, { type: "array", items: { type: "string" } }, arr)).toEqual(["x"]);
  });
});
