import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type PricingConfig, type TokenPrice } from "../../src/config";
import { isCredits } from "../../src/credits/amount";
import { Holds } from "../../src/credits/holds";
import { creditsFor, pricedTargets } from "../../src/credits/pricing";
import { SqliteCreditLedger } from "../../src/credits/sqlite";
import { GatewayError } from "../../src/errors";
import { checkParameterRanges } from "../../src/http/openai-params";
import type { Target } from "../../src/providers/route-plan";
import type { ProxyApi } from "../../src/providers/types";
import { openStorage } from "../../src/storage/db";

/**
 * Issue 35, finding 2: credits are whole, finite, non-negative numbers by construction. Random and
 * extreme parameters (Infinity, 1e308, NaN, negative, zero prices, huge n) go through the parameter
 * check, the pricing of a /v1 call, the holds and a real SQLite ledger: every amount that comes out
 * is credits, and every one that is not is an error before any comparison (never an admission).
 */

/** A seeded generator (mulberry32): the same cases every run, and a failing seed can be replayed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const EXTREMES = [
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.NaN,
  1e308,
  -1e308,
  Number.MAX_VALUE,
  Number.MAX_SAFE_INTEGER,
  2 ** 53 + 2,
  -1,
  0,
  -0,
  0.5,
  1,
  1e-300,
  128,
  129,
  1_000_000,
  1_000_001,
  2 ** 31,
];

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
const anyNumber = (r: () => number): number => (r() < 0.6 ? pick(r, EXTREMES) : Math.floor(r() * 10 ** Math.floor(r() * 12)));

function pricingWith(price: TokenPrice, r: () => number): PricingConfig {
  return {
    default: price,
    models: [],
    refuseUnpriced: false,
    defaultMaxOutputTokens: pick(r, [1, 1000, 1_000_000]),
    imageTokens: pick(r, [0, 2000, 10_000_000]),
    audioTokens: pick(r, [0, 2000, 10_000_000]),
  };
}

/** The prices a config may hold: zero included, up to the ceiling, fractions. */
const configPrice = (r: () => number): number => pick(r, [0, 0, 1e-9, 0.15, 1, 600, 1_000_000, r() * 1000]);

const target = { name: "sim", provider: { functionsOnly: false, modelFor: () => "m" } } as unknown as Target;
const APIS: ProxyApi[] = ["chat/completions", "responses", "embeddings"];

function randomBody(r: () => number, api: ProxyApi): Record<string, unknown> {
  const body: Record<string, unknown> = { model: "m" };
  if (api === "chat/completions") {
    body.messages = [{ role: "user", content: "x".repeat(Math.floor(r() * 50)) }];
    if (r() < 0.7) body.max_tokens = anyNumber(r);
    if (r() < 0.5) body.max_completion_tokens = anyNumber(r);
    if (r() < 0.7) body.n = anyNumber(r);
  } else if (api === "responses") {
    body.input = "hello";
    if (r() < 0.8) body.max_output_tokens = anyNumber(r);
  } else body.input = Array.from({ length: Math.floor(r() * 5) }, () => Math.floor(r() * 100_000));
  if (r() < 0.2) body.messages = [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }];
  return body;
}

describe("credits are finite non-negative integers by construction (issue 35.2)", () => {
  test("every /v1 call either fails its checks (400, or 500 before anything is held) or holds whole credits, over 20,000 random and extreme parameters", () => {
    const r = rng(35_2);
    let held = 0;
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const api = pick(r, APIS);
      const body = randomBody(r, api);
      const price = { input: configPrice(r), output: configPrice(r) };
      const p = pricingWith(price, r);
      const bytes = pick(r, [0, 10, 1_048_576, 1_000_000_000]);
      try {
        checkParameterRanges(api, body);
        const priced = pricedTargets(p, api, body, bytes, [target]);
        expect(isCredits(priced.hold)).toBe(true);
        // the hold covers the bound it says it holds
        expect(priced.hold).toBeGreaterThanOrEqual(creditsFor(price, priced.estimate));
        held++;
      } catch (err) {
        expect(err).toBeInstanceOf(GatewayError);
        const e = err as GatewayError;
        expect([400, 500]).toContain(e.status);
        refused++;
      }
    }
    // both branches were exercised
    expect(held).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
  });

  test("max_tokens 1e308 with n = 128 and a zero price: refused by the parameter check, never a NaN hold", () => {
    const body = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 1e308, n: 128 };
    expect(() => checkParameterRanges("chat/completions", body)).toThrow(/max_tokens/);
    // and past the check (a caller that skipped it): the hold is still credits, or an error
    const r = rng(1);
    const p = pricingWith({ input: 0, output: 0 }, r);
    const priced = pricedTargets(p, "chat/completions", body, 100, [target]);
    expect(isCredits(priced.hold)).toBe(true);
  });

  test("the price of a usage is credits or an error, whatever the price and usage", () => {
    const r = rng(7);
    for (let i = 0; i < 20_000; i++) {
      const price = { input: anyNumber(r) * (r() < 0.5 ? 1e-3 : 1), output: anyNumber(r) };
      const usage = { input: anyNumber(r), output: anyNumber(r) };
      let out: number | undefined;
      try {
        out = creditsFor(price, usage);
      } catch (err) {
        expect((err as GatewayError).status).toBe(500);
        continue;
      }
      expect(isCredits(out)).toBe(true);
    }
  });

  test("a hold that is not credits is an error before the balance is compared: never an admission", () => {
    const r = rng(11);
    const holds = new Holds();
    for (let i = 0; i < 5000; i++) {
      const amount = anyNumber(r);
      const balance = pick(r, [0, 0, 10, anyNumber(r)]);
      let admitted: unknown = "threw";
      try {
        admitted = holds.take("acc", amount, balance);
      } catch (err) {
        expect((err as GatewayError).status).toBe(500);
      }
      if (admitted !== "threw") {
        expect(isCredits(amount) && isCredits(balance)).toBe(true);
        // admitted only when covered
        if (admitted !== null) expect(balance - (holds.held("acc") - amount)).toBeGreaterThanOrEqual(amount);
      }
      holds.give("acc", holds.held("acc"));
    }
    expect(() => holds.take("acc", Number.NaN, 0)).toThrow(/not a whole number of credits/);
    expect(() => holds.take("acc", 1, Number.NaN)).toThrow(/not a whole number of credits/);
  });

  describe("the SQLite ledger", () => {
    const dir = mkdtempSync(join(tmpdir(), "textai-credits-prop-"));
    const storage = openStorage(join(dir, "ledger.db"));
    const ledger = new SqliteCreditLedger(storage);
    afterAll(() => {
      storage.close();
      rmSync(dir, { recursive: true, force: true });
    });
    let n = 0;
    const account = (credits: number) => {
      const id = `acc_prop_${++n}`;
      storage.sqlite.query("INSERT INTO accounts (id, plan, balance) VALUES (?, 'free', 0)").run(id);
      if (credits > 0) ledger.grant(id, credits, "grant", "test");
      return id;
    };
    const details = { keyId: "key_prop", fn: "chat-completions", requestId: "req_prop", provider: "sim", cached: false };

    test("reserve, a key's limit, settle and charge refuse every amount that is not credits; balance 0 admits only 0", async () => {
      const r = rng(13);
      const empty = account(0);
      for (let i = 0; i < 2000; i++) {
        const amount = anyNumber(r);
        const limit = pick(r, [0, Number.NaN, Number.POSITIVE_INFINITY, -1, 5, anyNumber(r)]);
        const budget = r() < 0.5 ? { keyId: `key_${i % 7}`, limit } : undefined;
        let res: unknown;
        try {
          res = ledger.reserve(empty, amount, budget);
        } catch (err) {
          const e = err as GatewayError;
          expect([402, 500]).toContain(e.status);
          continue;
        }
        expect(isCredits(amount)).toBe(true);
        if (budget) expect(isCredits(budget.limit)).toBe(true);
        // an empty account is admitted only for nothing
        if (res !== null) {
          expect(amount === 0).toBe(true);
          ledger.release(res as never);
        }
      }
      expect(ledger.held(empty)).toBe(0);
      const rich = account(100);
      const hold = ledger.reserve(rich, 10);
      expect(hold).not.toBeNull();
      if (!hold) return;
      await expect(ledger.settle(hold, details, Number.NaN)).rejects.toThrow(/not a whole number of credits/);
      expect(await ledger.charge(rich, Number.NaN, details).catch((e) => e)).toBeInstanceOf(GatewayError);
      await expect(ledger.charge(rich, Number.POSITIVE_INFINITY, details)).rejects.toThrow(/not a whole number/);
      ledger.release(hold);
      expect(ledger.balance(rich)).toBe(100);
      expect(ledger.held(rich)).toBe(0);
    });
  });

  test("[pricing] takes no price, cap or fee that could make a hold overflow", () => {
    const load = (toml: string) => () => loadConfig({ TEXTAI_CONFIG: "x.toml" }, toml);
    expect(load('[pricing.models]\n"m" = { input = inf }\n')).toThrow(/pricing\.models\.m\.input/);
    expect(load('[pricing.models]\n"m" = { input = nan }\n')).toThrow(/pricing\.models\.m\.input/);
    expect(load('[pricing.models]\n"m" = { input = 1e308 }\n')).toThrow(/pricing\.models\.m\.input/);
    expect(load('[pricing.models]\n"m" = { input = 1, max_output_tokens = 1e12 }\n')).toThrow(/max_output_tokens/);
    expect(load('[pricing.models]\n"m" = { input = 1, per_call = { web_search = inf } }\n')).toThrow(/per_call/);
    expect(load("[pricing]\ndefault_max_output_tokens = 1000000000\n")).toThrow(/default_max_output_tokens/);
    expect(load("[pricing]\nimage_tokens = -1\n")).toThrow(/image_tokens/);
  });
});
