/**
 * A model group's deployments refused at their gate (docs/routing.md, "Limits, cool-downs and
 * fallback"), on one node, through a real server and the upstream simulator:
 *
 * - every deployment at its `rpm` (or `tpm`) for the 60 s window: 429 with Retry-After the time
 *   until the window's oldest entry ages out (about 60 s here, not 1 s), each deployment named with
 *   why in the message and in meta.attempts;
 * - one deployment refused at its rpm and the other failing, its circuit opened: the 502 names both
 *   (the refused one as `rpm_limit`), with Retry-After the soonest back;
 * - the same once the circuit is open: both named, Retry-After the soonest back.
 *
 * Before the fix (2026-12-06): `Retry-After: 1` and no attempt for a deployment refused at the gate.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { groupToml } from "../helpers/groups-toml";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

let sim: Upstream;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    configText: `${simProvider({ url: `${sim.url}/v1`, model: "m" })}
[cache]
enabled = false

[breaker]
failure_threshold = 1
cooldown_ms = 30000
${groupToml("capped", [{ provider: "sim", model: "capped-a", rpm: 2 }])}
${groupToml("tokens", [{ provider: "sim", model: "tokens-a", tpm: 3000 }])}
${groupToml(
  "mixed",
  [
    { provider: "sim", model: "mixed-a", rpm: 1 },
    { provider: "sim", model: "mixed-b" },
  ],
  "ordered",
)}
`,
  });
  key = gw.newKey({ credits: 1_000_000, plan: "pro" }).key;
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

interface Answer {
  status: number;
  retryAfter: number;
  message: string;
  attempts: { provider: string; model?: string; error: string }[];
}

async function chat(model: string, maxTokens = 20): Promise<Answer> {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, max_tokens: maxTokens, messages: [{ role: "user", content: `hi ${crypto.randomUUID()}` }] }),
  });
  const body = (await r.json()) as { error?: { message: string }; meta?: { attempts?: Answer["attempts"] } };
  return {
    status: r.status,
    retryAfter: Number(r.headers.get("retry-after")),
    message: body.error?.message ?? "",
    attempts: body.meta?.attempts ?? [],
  };
}

/** A function call (its envelope carries meta.attempts; /v1's OpenAI-shaped error has only the message). */
async function fn(model: string): Promise<Answer> {
  const r = await gw.post("/api/v1/ai/chat", { message: `hi ${crypto.randomUUID()}`, model }, { authorization: `Bearer ${key}` });
  return {
    status: r.status,
    retryAfter: Number(r.headers.get("retry-after")),
    message: r.json.error?.message ?? "",
    attempts: r.json.meta?.attempts ?? [],
  };
}

const calls = (model: string) => sim.calls.requests.filter((c) => c.model === model).length;
const tried = (a: Answer) => a.attempts.map((x) => `${x.model}: ${x.error}`);

describe("a deployment refused at its gate says when it can take the call, and is named", () => {
  test("every deployment at its rpm: 429 with Retry-After the window's oldest entry ageing out (about 60 s)", async () => {
    expect((await chat("capped")).status).toBe(200);
    expect((await chat("capped")).status).toBe(200);
    const full = await chat("capped");
    expect(full.status).toBe(429);
    expect(full.retryAfter).toBeGreaterThanOrEqual(55);
    expect(full.retryAfter).toBeLessThanOrEqual(60);
    expect(full.message).toContain("sim: rpm_limit");
    // a function call on the group: the same, and its attempt in meta.attempts
    const viaFn = await fn("capped");
    expect(viaFn.status).toBe(429);
    expect(viaFn.retryAfter).toBeGreaterThanOrEqual(55);
    expect(viaFn.retryAfter).toBeLessThanOrEqual(60);
    expect(tried(viaFn)).toEqual(["capped-a: rpm_limit"]);
    expect(calls("capped-a")).toBe(2);
  });

  test("every deployment at its tpm: 429 with Retry-After the window's tokens ageing out, named tpm_limit", async () => {
    // each call's upper-bound estimate (its 2000 output tokens and the prompt) fits 3000 once, not twice
    sim.configure({ latencyMs: 600 });
    try {
      const first = chat("tokens", 2000);
      await Bun.sleep(150);
      const second = await chat("tokens", 2000);
      expect((await first).status).toBe(200);
      expect(second.status).toBe(429);
      expect(second.retryAfter).toBeGreaterThanOrEqual(55);
      expect(second.retryAfter).toBeLessThanOrEqual(61);
      expect(second.message).toContain("sim: tpm_limit");
    } finally {
      sim.configure({ latencyMs: 0 });
    }
  });

  test("one deployment at its rpm, the other failing open: the 502 names both, Retry-After the soonest back", async () => {
    expect((await fn("mixed")).status).toBe(200);
    sim.program([{ status: 500 }, { status: 500 }, { status: 500 }], { model: "mixed-b" });
    const failed = await fn("mixed");
    expect(failed.status).toBe(502);
    expect(tried(failed)).toEqual(["mixed-a: rpm_limit", "mixed-b: http_500"]);
    expect(failed.message).toContain("sim (mixed-a): rpm_limit");
    expect(failed.message).toContain("sim (mixed-b): http_500");
    // mixed-b's circuit is open for 30 s, mixed-a's window frees in about 60 s: the sooner
    expect(failed.retryAfter).toBeGreaterThanOrEqual(28);
    expect(failed.retryAfter).toBeLessThanOrEqual(30);

    const open = await fn("mixed");
    expect(tried(open)).toEqual(["mixed-a: rpm_limit", "mixed-b: circuit_open"]);
    expect(open.message).toContain("sim (mixed-a): rpm_limit");
    expect(open.retryAfter).toBeGreaterThanOrEqual(28);
    expect(open.retryAfter).toBeLessThanOrEqual(30);
    expect(calls("mixed-a")).toBe(1);
    expect(calls("mixed-b")).toBe(1);
  });
});
