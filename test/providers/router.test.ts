import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { GatewayError } from "../../src/errors";
import { defineFunction } from "../../src/functions/define";
import type { Upstream } from "../helpers/upstream";
import { call, makeRouter, rejection, TinyResult, tiny, useUpstreams } from "./fixtures";

let a: Upstream;
let b: Upstream;

useUpstreams(2, ([first, second]) => {
  a = first as Upstream;
  b = second as Upstream;
});

/** Two OpenAI-compatible providers: "a" (primary) and "b" (secondary), both on simulators. */
function twoProviders(extra: Record<string, unknown> = {}, now?: () => number) {
  return makeRouter(
    {
      providers: [
        { name: "a", type: "openai", base_url: `${a.url}/v1`, api_key: "sk-a", timeout_ms: 500 },
        { name: "b", type: "openai-compatible", base_url: `${b.url}/v1`, default_model: "b-model" },
      ],
      ...extra,
    },
    now,
  );
}

const input = { text: "The delivery was quick and the support team was great" };

describe("structured answers", () => {
  test("the primary answers with a schema-valid result, asked for strict json_schema", async () => {
    const out = await twoProviders().run(call(tiny, input));
    expect(out.provider).toBe("a");
    expect(out.model).toBe("gpt-4o-mini");
    expect(out.attempts).toEqual([]);
    expect(Value.Check(TinyResult, out.result)).toBe(true);
    expect(a.calls.count).toBe(1);
    expect(b.calls.count).toBe(0);
    expect(a.calls.requests[0]?.aborted).toBe(false);
    const rf = a.calls.requests[0]?.body.response_format as {
      type: string;
      json_schema: { name: string; strict: boolean; schema: Record<string, unknown> };
    };
    expect(rf.type).toBe("json_schema");
    expect(rf.json_schema.name).toBe("tiny");
    expect(rf.json_schema.strict).toBe(true);
    // strict mode: every property required, optional ones nullable
    expect(rf.json_schema.schema.required).toEqual(["label", "score", "keywords", "note"]);
    expect(rf.json_schema.schema.additionalProperties).toBe(false);
  });

  test("a request model of provider/model picks both", async () => {
    const out = await twoProviders().run(call(tiny, input, { model: "b/custom-7b" }));
    expect(out.provider).toBe("b");
    expect(b.calls.requests[0]?.model).toBe("custom-7b");
    expect(a.calls.count).toBe(0);
  });

  test("preferProvider puts that provider first; resolveModel names what would be tried", async () => {
    const router = twoProviders();
    expect(router.routeFor(tiny, "b")).toEqual(["b", "a"]);
    expect(router.resolveModel(tiny, { preferProvider: "b" })).toEqual({ provider: "b", model: "b-model" });
    expect(router.resolveModel(tiny, {})).toEqual({ provider: "a", model: "gpt-4o-mini" });
    expect(router.resolveModel(tiny, { model: "gpt-4.1" })).toEqual({ provider: "a", model: "gpt-4.1" });
    const out = await router.run(call(tiny, input, { preferProvider: "b" }));
    expect(out.provider).toBe("b");
  });
});

describe("fallback", () => {
  const cases: { name: string; fault: Parameters<Upstream["program"]>[0]; error: string; status?: number; aCalls: number }[] = [
    { name: "500", fault: [{ status: 500 }], error: "http_500", status: 500, aCalls: 1 },
    { name: "429 with Retry-After", fault: [{ status: 429, retryAfter: 1 }], error: "http_429", status: 429, aCalls: 1 },
    { name: "timeout", fault: [{ delayMs: 2000 }], error: "timeout", aCalls: 1 },
    { name: "dropped connection", fault: [{ drop: true }], error: "connection", aCalls: 1 },
    {
      name: "malformed JSON (after the repair attempt)",
      fault: [{ malformed: true, times: 2 }],
      error: "invalid_output",
      aCalls: 2,
    },
    {
      name: "schema-invalid JSON (after the repair attempt)",
      fault: [{ schemaInvalid: true, times: 2 }],
      error: "invalid_output",
      aCalls: 2,
    },
    { name: "context length", fault: [{ status: 400, contextLength: true }], error: "context_length", status: 400, aCalls: 1 },
    { name: "401 (misconfigured key)", fault: [{ status: 401 }], error: "http_401", status: 401, aCalls: 1 },
  ];
  for (const c of cases) {
    test(`${c.name}: the secondary answers, attempts name the primary's failure`, async () => {
      a.program(c.fault);
      const out = await twoProviders().run(call(tiny, input));
      expect(out.provider).toBe("b");
      expect(Value.Check(TinyResult, out.result)).toBe(true);
      expect(out.attempts).toHaveLength(1);
      expect(out.attempts[0]).toMatchObject({ provider: "a", model: "gpt-4o-mini", error: c.error });
      expect(out.attempts[0]?.status).toBe(c.status);
      expect(a.calls.count).toBe(c.aCalls);
      expect(b.calls.count).toBe(1);
    });
  }

  test("timeout: the simulator sees the client give up", async () => {
    a.program([{ delayMs: 2000 }]);
    await twoProviders().run(call(tiny, input));
    await Bun.sleep(20);
    expect(a.calls.requests[0]?.aborted).toBe(true);
  });

  test("one invalid answer is repaired on the same provider, with the problems sent back", async () => {
    a.program([{ schemaInvalid: true }]);
    const out = await twoProviders().run(call(tiny, input));
    expect(out.provider).toBe("a");
    expect(out.attempts).toEqual([]);
    expect(a.calls.count).toBe(2);
    const messages = a.calls.requests[1]?.body.messages as { role: string; content: string }[];
    expect(messages.at(-2)?.role).toBe("assistant");
    expect(messages.at(-1)?.content).toContain("Your answer is invalid");
  });

  test("every provider failing: provider_error 502 with all attempts", async () => {
    a.program([{ status: 503 }]);
    b.program([{ status: 500 }]);
    const err = await rejection(twoProviders().run(call(tiny, input)));
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.code).toBe("provider_error");
    expect(err.status).toBe(502);
    expect(err.attempts).toMatchObject([
      { provider: "a", error: "http_503", status: 503 },
      { provider: "b", error: "http_500", status: 500 },
    ]);
  });

  test("postprocess runs before validation and check after it", async () => {
    const def = {
      ...tiny,
      postprocess: (_req: unknown, r: { label: string }) => ({ ...r, label: "neutral" }),
      check: (_req: unknown, r: { label: string }) => (r.label === "neutral" ? [] : ["label must be neutral"]),
    };
    const out = await twoProviders().run(call(def, input));
    expect((out.result as { label: string }).label).toBe("neutral");
    const failing = { ...tiny, check: () => ["never good enough"] };
    const err = await rejection(twoProviders().run(call(failing, input)));
    expect(err.attempts).toMatchObject([
      { provider: "a", error: "invalid_output" },
      { provider: "b", error: "invalid_output" },
    ]);
  });
});

describe("circuit breaker", () => {
  test("opens after repeated failures (primary then sees only probes) and closes after recovery", async () => {
    let now = 0;
    const router = twoProviders({ breaker: { failure_threshold: 2, cooldown_ms: 1000 } }, () => now);
    a.program([{ status: 500, times: 100 }]);
    await router.run(call(tiny, input));
    await router.run(call(tiny, input));
    expect(router.status().a).toMatchObject({ type: "openai", state: "open", consecutiveFailures: 2 });
    expect(a.calls.count).toBe(2);

    const skipped = await router.run(call(tiny, input));
    expect(skipped.provider).toBe("b");
    expect(skipped.attempts).toEqual([{ provider: "a", model: "gpt-4o-mini", error: "circuit_open", ms: 0 }]);
    expect(a.calls.count).toBe(2);

    // cool-down over, still failing: exactly one probe, then open again
    now += 1000;
    await router.run(call(tiny, input));
    await router.run(call(tiny, input));
    expect(a.calls.count).toBe(3);
    expect(router.status().a?.state).toBe("open");

    // recovered: the next probe closes the circuit
    a.reset();
    now += 1000;
    const probe = await router.run(call(tiny, input));
    expect(probe.provider).toBe("a");
    expect(router.status().a).toMatchObject({ state: "closed", consecutiveFailures: 0 });
    await router.run(call(tiny, input));
    expect(a.calls.count).toBe(2);
  });

  test("a 429 with Retry-After pauses the provider for that long", async () => {
    let now = 0;
    const router = twoProviders({ breaker: { failure_threshold: 5, cooldown_ms: 30_000 } }, () => now);
    a.program([{ status: 429, retryAfter: 2 }]);
    await router.run(call(tiny, input));
    const paused = await router.run(call(tiny, input));
    expect(paused.attempts).toMatchObject([{ provider: "a", error: "paused", status: 429 }]);
    now += 2000;
    const back = await router.run(call(tiny, input));
    expect(back.provider).toBe("a");
    expect(a.calls.count).toBe(2);
  });

  test("schema-invalid answers for one function leave the provider open for every other function (contract 9)", async () => {
    const router = twoProviders({ breaker: { failure_threshold: 2, cooldown_ms: 30_000 } });
    // the model behind one function answers JSON that fails the schema, first try and repair alike
    a.program([{ schemaInvalid: true, times: 100 }], { model: "bad-model" });
    for (let i = 0; i < 4; i++) {
      const out = await router.run(call(tiny, input, { model: "a/bad-model" }));
      expect(out.attempts).toMatchObject([{ provider: "a", error: "invalid_output" }]);
    }
    expect(router.status().a).toMatchObject({ state: "closed", consecutiveFailures: 0 });
    const other = defineFunction({ ...tiny, name: "tiny-other" });
    const served = await router.run(call(other, input));
    expect({ provider: served.provider, attempts: served.attempts }).toEqual({ provider: "a", attempts: [] });
  });

  test("request-specific errors (context length) do not open the circuit", async () => {
    const router = twoProviders({ breaker: { failure_threshold: 1, cooldown_ms: 1000 } });
    a.program([{ status: 400, contextLength: true }]);
    await router.run(call(tiny, input));
    expect(router.status().a?.state).toBe("closed");
  });
});

describe("hedging, deadline, abort", () => {
  test("hedging: the second provider answers when the first is slow, and the loser is aborted", async () => {
    a.program([{ delayMs: 3000 }]);
    const router = twoProviders({ hedge_after_ms: { tiny: 100 } });
    const started = performance.now();
    const out = await router.run(call(tiny, input));
    expect(out.provider).toBe("b");
    expect(performance.now() - started).toBeLessThan(1000);
    // no timeout attempt from "a" (its timeout_ms is 500): b answered while a was still running
    expect(out.attempts).toEqual([]);
    await Bun.sleep(50);
    expect(a.calls.requests[0]?.aborted).toBe(true);
    expect(router.status().a?.consecutiveFailures).toBe(0);
  });

  test("without hedging the slow primary is waited for", async () => {
    a.program([{ delayMs: 150 }]);
    const out = await twoProviders().run(call(tiny, input));
    expect(out.provider).toBe("a");
    expect(b.calls.count).toBe(0);
  });

  test("the overall deadline gives provider_timeout 504", async () => {
    a.program([{ delayMs: 3000 }]);
    const started = performance.now();
    const err = await rejection(twoProviders().run(call(tiny, input, { deadlineMs: Date.now() + 200 })));
    expect(err.code).toBe("provider_timeout");
    expect(err.status).toBe(504);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(err.attempts).toMatchObject([{ provider: "a", error: "timeout" }]);
  });

  test("a client abort aborts the upstream request (the simulator sees the disconnect)", async () => {
    a.program([{ delayMs: 3000 }]);
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 100);
    const err = await rejection(twoProviders().run(call(tiny, input, { signal: ctrl.signal })));
    expect(err).toBeInstanceOf(GatewayError);
    await Bun.sleep(50);
    expect(a.calls.requests[0]?.aborted).toBe(true);
    expect(b.calls.count).toBe(0);
  });
});

describe("outcome hook", () => {
  test("reports each provider's outcome", async () => {
    const router = twoProviders();
    const seen: string[] = [];
    router.onOutcome = (p, fn, outcome) => seen.push(`${p}:${fn}:${outcome}`);
    a.program([{ status: 500 }]);
    await router.run(call(tiny, input));
    expect(seen).toEqual(["a:tiny:error", "b:tiny:ok"]);
  });
});

describe("simulator fault scoping", () => {
  test("faults scoped to a model hit only calls for that model", async () => {
    a.program([{ status: 500 }], { model: "gpt-4o-mini" });
    const other = await twoProviders().run(call(tiny, input, { model: "a/gpt-4.1" }));
    expect(other.provider).toBe("a");
    const dflt = await twoProviders().run(call(tiny, input));
    expect(dflt.provider).toBe("b");
    expect(dflt.attempts).toMatchObject([{ provider: "a", error: "http_500" }]);
  });
});

describe("already aborted", () => {
  test("a request whose client is gone reaches no provider", async () => {
    const ctrl = new AbortController();
    ctrl.abort();
    const err = await rejection(twoProviders().run(call(tiny, input, { signal: ctrl.signal })));
    expect(err).toBeInstanceOf(GatewayError);
    expect(a.calls.count + b.calls.count).toBe(0);
  });
});
