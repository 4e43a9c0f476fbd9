// The pure rules of key policies (src/auth/policy.ts): model patterns, narrowing, patches.
import { describe, expect, test } from "bun:test";
import {
  applyPolicyPatch,
  modelPatternMatches,
  parsePolicyPatch,
  policyPatchFromText,
  widenedField,
} from "../../src/auth/policy";

describe("key policy rules", () => {
  test("* matches any run of characters, anywhere; everything else literally", () => {
    const cases: [string, string, boolean][] = [
      ["gpt-4o*", "gpt-4o", true],
      ["gpt-4o*", "gpt-4o-mini", true],
      ["gpt-4o*", "gpt-4", false],
      ["*-mini", "gpt-4o-mini", true],
      ["*-mini", "gpt-4o-mini-2", false],
      ["a*b*c", "abc", true],
      ["a*b*c", "aXbYc", true],
      ["a*b*c", "acb", false],
      ["ab*ba", "aba", false],
      ["*", "", true],
      ["gpt.4", "gpt-4", false],
      ["GPT-4", "gpt-4", false],
    ];
    for (const [pattern, model, want] of cases)
      expect([pattern, model, modelPatternMatches(pattern, model)]).toEqual([pattern, model, want]);
  });

  test("narrowing: a subset, a lower figure or an earlier expiry narrows; anything else widens", () => {
    const now = {
      allowed_functions: ["a", "b"],
      allowed_models: ["gpt-4o*"],
      rate_limit_per_minute: 10,
      monthly_credit_limit: 100,
      expires_at: "2030-01-01T00:00:00.000Z",
    };
    expect(widenedField(now, now)).toBeNull();
    expect(
      widenedField(now, {
        ...now,
        allowed_functions: ["a"],
        allowed_models: ["gpt-4o-mini*"],
        rate_limit_per_minute: 5,
        monthly_credit_limit: 0,
        expires_at: "2029-01-01T00:00:00.000Z",
      }),
    ).toBeNull();
    expect(widenedField(now, { ...now, allowed_functions: ["a", "c"] })).toBe("allowed_functions");
    expect(widenedField(now, { ...now, allowed_models: ["gpt-4*"] })).toBe("allowed_models");
    expect(widenedField(now, { ...now, rate_limit_per_minute: 11 })).toBe("rate_limit_per_minute");
    expect(widenedField(now, { ...now, monthly_credit_limit: undefined })).toBe("monthly_credit_limit");
    expect(widenedField(now, { ...now, expires_at: "2031-01-01T00:00:00.000Z" })).toBe("expires_at");
    // from no policy, anything narrows
    expect(widenedField(undefined, now)).toBeNull();
  });

  test("patches: fields given replace, null clears, none left is no policy; text fields as the CLI and forms send them", () => {
    const known = new Set(["a", "b"]);
    const p = applyPolicyPatch(
      undefined,
      parsePolicyPatch({ rate_limit_per_minute: 3, expires_at: "2030-01-01T01:00:00+01:00" }, known),
    );
    expect(p).toEqual({ rate_limit_per_minute: 3, expires_at: "2030-01-01T00:00:00.000Z" });
    expect(applyPolicyPatch(p, { rate_limit_per_minute: null, expires_at: null })).toBeUndefined();
    expect(
      policyPatchFromText({ allowed_functions: " a, b , a", monthly_credit_limit: "7", rate_limit_per_minute: "" }, known),
    ).toEqual({
      allowed_functions: ["a", "b"],
      monthly_credit_limit: 7,
      rate_limit_per_minute: null,
    });
    expect(() => policyPatchFromText({ rate_limit_per_minute: "1.5" }, known)).toThrow("whole number");
    expect(() => parsePolicyPatch({ allowed_models: [""] }, known)).toThrow("none empty (item 1 of 1 is empty)");
    // an empty item is a slip, refused as in a JSON list, never dropped; a new key has no field to clear
    expect(() => policyPatchFromText({ allowed_functions: "a,,b" }, known)).toThrow("item 2 of 3 is empty");
    expect(() => policyPatchFromText({ allowed_models: "m1," }, known)).toThrow("item 2 of 2 is empty");
    expect(() => policyPatchFromText({ allowed_models: "" }, known, { creating: true })).toThrow("a new key has none to clear");
    expect(() => parsePolicyPatch({ expires_at: "2027-02-31" }, known)).toThrow("on a day the calendar has");
    expect(() => parsePolicyPatch([], known)).toThrow("must be an object");
    expect(() => policyPatchFromText({ allowed_functions: "a, c" }, known)).toThrow('unknown function "c"; known: a, b');
  });
});

test("guardrails narrow a key by adding protection: dropping a guarded kind, or restore turned back on, widens it", () => {
  const c = { guardrails: { redact_pii: ["email"], block_pii: ["ssn"], restore_pii: false } };
  expect(widenedField(c, { guardrails: { redact_pii: ["email", "name"], block_pii: ["ssn"], restore_pii: false } })).toBeNull();
  expect(widenedField(c, { guardrails: { redact_pii: [], block_pii: ["ssn"], restore_pii: false } })).toBe("guardrails");
  expect(widenedField(c, { guardrails: { redact_pii: ["email"], block_pii: ["ssn"] } })).toBe("guardrails");
  expect(widenedField(c, {})).toBe("guardrails");
  expect(widenedField({}, c)).toBeNull();
});
