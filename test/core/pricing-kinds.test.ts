/**
 * Tokens of a kind priced apart (CONTRACT section 15: cached input, reasoning or thinking), read
 * from any provider's usage as data (providers/usage.ts USAGE_KINDS) and priced from `[pricing]`
 * (credits/pricing.ts): the same for every vendor, no branch on one.
 */
import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { boundPrice, creditsFor, listedPrice, reportedUsage } from "../../src/credits/pricing";

const pricing = (toml: string) => loadConfig({ TEXTAI_CONFIG: "p.toml" }, `[pricing.models]\n${toml}`).pricing;

describe("usage kinds", () => {
  test("read from Chat Completions' and Responses' details; none when zero or absent", () => {
    expect(
      reportedUsage({
        usage: {
          prompt_tokens: 100,
          completion_tokens: 50,
          prompt_tokens_details: { cached_tokens: 40 },
          completion_tokens_details: { reasoning_tokens: 20 },
        },
      }),
    ).toEqual({ input: 100, output: 50, kinds: { cached_input: 40, reasoning: 20 } });
    expect(
      reportedUsage({
        type: "response.completed",
        response: {
          usage: {
            input_tokens: 10,
            output_tokens: 5,
            input_tokens_details: { cached_tokens: 4 },
            output_tokens_details: { reasoning_tokens: 0 },
          },
        },
      }),
    ).toEqual({ input: 10, output: 5, kinds: { cached_input: 4 } });
    expect(reportedUsage({ usage: { prompt_tokens: 3, completion_tokens: 1 } })).toEqual({ input: 3, output: 1 });
  });

  test("each kind at its own price, out of the input or output it is part of; a kind without a price at the plain one", () => {
    const p = pricing(
      '"m" = { input = 1000, output = 2000, cached_input = 100, reasoning = 5000 }\n"plain" = { input = 1000, output = 2000 }',
    );
    const priced = listedPrice(p, "x", "m");
    const plain = listedPrice(p, "x", "plain");
    if (!priced || !plain) throw new Error("no price");
    expect(priced.kinds).toEqual({ cached_input: 100, reasoning: 5000 });
    const usage = { input: 100, output: 50, kinds: { cached_input: 40, reasoning: 20 } };
    // (60 * 1000 + 40 * 100 + 30 * 2000 + 20 * 5000) / 1000
    expect(creditsFor(priced, usage)).toBe(224);
    expect(creditsFor(plain, usage)).toBe(200);
    // a report claiming more of a kind than the whole is held to the whole
    expect(creditsFor(priced, { input: 10, output: 0, kinds: { cached_input: 50 } })).toBe(1);
  });

  test("the hold's bound prices the dearest of a kind and its plain price", () => {
    const p = pricing('"m" = { input = 1000, output = 2000, cached_input = 100, reasoning = 5000 }');
    const price = listedPrice(p, "x", "m");
    if (!price) throw new Error("no price");
    expect(boundPrice(price)).toMatchObject({ input: 1000, output: 5000 });
  });

  test("a kind's price out of range is refused at start, naming it", () => {
    expect(() => pricing('"m" = { input = 1, reasoning = -1 }')).toThrow("reasoning");
  });
});
