import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FUNCTIONS } from "../../src/functions/registry";
import { budgetText } from "../../src/offline-engine/budget";
import { PROSE as ADVERSARIAL_PROSE, fill, SHAPES, SIZE, TEXT_FIELD } from "../helpers/adversarial";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

/**
 * The offline engine's per-call CPU budget (limits.offline_cpu_ms, default 50 ms), end to end:
 * a call past it ends with 413 payload_too_large and no charge, and no single request can hold
 * the one JavaScript thread long enough to keep /health waiting.
 */
const PROSE =
  "Room was spotless and the staff were lovely. Breakfast was cold both days, which was disappointing.\n" +
  "Great location, but the wifi kept dropping in the evening! Would stay again for the price.\n";
const big = (unit: string, size = 100_000) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

describe("default CPU budget", () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    gw = await startGateway();
    ({ key, accountId } = gw.newKey({ credits: 1000, plan: "pro" }));
  });
  afterAll(() => gw.close());

  test("a call that needs more CPU than the budget is refused with 413 and not charged", async () => {
    const before = gw.deps.ledger.balance(accountId);
    const res = await gw.post("/api/v1/ai/review-insights", { reviews: big(PROSE) }, { "x-api-key": key });
    expect({ status: res.status, code: res.json.error?.code, charged: res.json.meta?.credits_deducted }).toEqual({
      status: 413,
      code: "payload_too_large",
      charged: 0,
    });
    expect(res.json.error.message).toContain("CPU budget of 50 ms");
    expect(gw.deps.ledger.balance(accountId)).toBe(before);
  });

  test("grammar-fix's refusal names the call's budget, not what its worker had left (was 49.84115900002699 ms)", async () => {
    const res = await gw.post("/api/v1/ai/grammar-fix", { text: fill(ADVERSARIAL_PROSE, 20_000) }, { "x-api-key": key });
    expect({ status: res.status, code: res.json.error?.code }).toEqual({ status: 413, code: "payload_too_large" });
    expect(res.json.error.message).toContain("CPU budget of 50 ms per call");
  }, 60_000);

  test("budgetText: whole milliseconds as they are, a fraction to one decimal", () => {
    expect([budgetText(50), budgetText(49.84115900002699), budgetText(0.25)]).toEqual(["50 ms", "49.8 ms", "0.3 ms"]);
  });

  test("the same function on an ordinary text is answered as before", async () => {
    const res = await gw.post("/api/v1/ai/review-insights", { reviews: PROSE.repeat(5) }, { "x-api-key": key });
    expect({ status: res.status, provider: res.json.meta?.provider }).toEqual({ status: 200, provider: "local" });
  });

  test("/health answers promptly while adversarial 100 KB texts are being analyzed", async () => {
    // the texts that took 8 to 26 s each before the sentence splitter was made linear
    const calls = [
      ["/api/v1/ai/sentiment-analysis", { text: big(".") }],
      ["/api/v1/ai/review-analyze", { review: big("!") }],
      ["/api/v1/ai/email-analyze", { email_content: big("!") }],
      ["/api/v1/ai/comment-analyze", { comment: big(".") }],
      ["/api/v1/ai/text-summarize", { text: big("!") }],
      ["/api/v1/ai/ticket-analyze", { ticket: `a${big("\n", 99_998)}a` }],
      ["/api/v1/ai/review-summary", { reviews: big(PROSE) }],
      ["/api/v1/ai/spam-detection", { text: big("Ab. "), return_sanitized: true }],
    ] as const;
    const pending = calls.map(([path, body]) => gw.post(path, body, { "x-api-key": key }));
    // let the requests reach the server before asking for /health
    await Bun.sleep(20);
    const started = performance.now();
    const health = await fetch(`${gw.url}/health`);
    const healthMs = performance.now() - started;
    const answers = await Promise.all(pending);
    expect(health.status).toBe(200);
    expect(healthMs).toBeLessThan(3000);
    // answered, refused past the budget, or declined by the offline engine (nothing to analyze in "!!!")
    for (const a of answers) expect([200, "payload_too_large", "no_provider"]).toContain(a.json.error?.code ?? a.status);
  }, 60_000);
});

describe("configured CPU budget", () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startGateway({ configText: "[limits]\noffline_cpu_ms = 60000\n" });
    key = gw.newKey({ credits: 1000, plan: "pro" }).key;
  });
  afterAll(() => gw.close());

  test("json-extractor on a long text lists at most 100 of each kind instead of answering 502", async () => {
    const text = "Order A-1001 shipped on March 3, 2026 for $12.50 (10% off). ".repeat(1500);
    const res = await gw.post("/api/v1/ai/json-extractor", { text }, { "x-api-key": key });
    expect({ status: res.status, dates: res.json.data?.result?.dates?.length }).toEqual({ status: 200, dates: 100 });
  }, 60_000);

  test("limits.offline_cpu_ms raises the budget: the long text is answered and charged", async () => {
    const res = await gw.post("/api/v1/ai/review-insights", { reviews: big(PROSE) }, { "x-api-key": key });
    expect({ status: res.status, charged: res.json.meta?.credits_deducted }).toEqual({ status: 200, charged: 2 });
  }, 60_000);
});

describe("CPU budget with a model further along the route", () => {
  let gw: TestGateway;
  let sim: Upstream;
  let key: string;
  beforeAll(async () => {
    sim = await startUpstream();
    gw = await startGateway({
      configText: `[[providers]]
name = "local"
type = "local"

${simProvider({ url: `${sim.url}/v1`, model: "sim-model" })}
[routes]
"review-insights" = ["local", "sim"]
`,
    });
    key = gw.newKey({ credits: 1000, plan: "pro" }).key;
  });
  afterAll(async () => {
    await gw.close();
    await sim.close();
  });

  test("past the offline budget the next provider answers, and attempts say why local did not", async () => {
    const res = await gw.post("/api/v1/ai/review-insights", { reviews: big(PROSE) }, { "x-api-key": key });
    expect({ status: res.status, provider: res.json.meta?.provider, charged: res.json.meta?.credits_deducted }).toEqual({
      status: 200,
      provider: "sim",
      charged: 2,
    });
    expect(res.json.meta.attempts).toMatchObject([{ provider: "local", error: "cpu_budget" }]);
  }, 60_000);
});

describe("a budget of 1 ms on the chaos scenario's 100 KB texts", () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    gw = await startGateway({ configText: "[limits]\noffline_cpu_ms = 1\n" });
    ({ key, accountId } = gw.newKey({ credits: 1000, plan: "pro" }));
  });
  afterAll(() => gw.close());

  /** the shape of test/helpers/adversarial.ts that costs each function the most (5 ms to 3 s without a budget) */
  const costliest = (fn: string) =>
    ["sentiment-analysis", "text-summarize", "spam-detection", "pii-redaction"].includes(fn)
      ? "short sentences"
      : "code-like ids";
  const fields: Record<string, string> = { ...TEXT_FIELD, "grammar-fix": "text" };
  const offline = FUNCTIONS.filter((d) => d.local && fields[d.name]);

  test.each(offline.map((d) => [d.name, d] as const))(
    "%s: 413 payload_too_large, nothing charged",
    async (name, def) => {
      const size = name === "search-query-parse" ? 20_000 : SIZE;
      const text = name === "grammar-fix" ? fill(ADVERSARIAL_PROSE, size) : SHAPES[costliest(name)](size);
      const before = gw.deps.ledger.balance(accountId);
      const res = await gw.post(def.path, { ...def.example.request, [fields[name] as string]: text }, { "x-api-key": key });
      expect({ status: res.status, code: res.json.error?.code, charged: res.json.meta?.credits_deducted }).toEqual({
        status: 413,
        code: "payload_too_large",
        charged: 0,
      });
      expect(gw.deps.ledger.balance(accountId)).toBe(before);
    },
    60_000,
  );
});
