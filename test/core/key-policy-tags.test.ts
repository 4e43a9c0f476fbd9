/**
 * The key-policy field `tags` (issue 39, docs/routing.md "Residency and tags"): validated from the
 * admin API's object and from the CLI's and the dashboard's text, shown in summaries, and never
 * dropped or changed from the account holder's form (it keeps a key's data where it may go).
 */
import { describe, expect, test } from "bun:test";
import { parsePolicyPatch, policyPatchFromText, policySummary, policyView, widenedField } from "../../src/auth/policy";
import { GatewayError } from "../../src/errors";

const KNOWN = new Set(["translation"]);
const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return (err as GatewayError).message;
  }
  throw new Error("accepted");
};

describe("policy.tags", () => {
  test("an object of string values; text as name=value pairs or JSON; null clears it", () => {
    expect(parsePolicyPatch({ tags: { region: "eu" } }, KNOWN)).toEqual({ tags: { region: "eu" } });
    expect(policyPatchFromText({ tags: "region=eu, tier=gold" }, KNOWN)).toEqual({ tags: { region: "eu", tier: "gold" } });
    expect(policyPatchFromText({ tags: '{"region":"eu"}' }, KNOWN)).toEqual({ tags: { region: "eu" } });
    expect(policyPatchFromText({ tags: "" }, KNOWN)).toEqual({ tags: null });
    expect(policySummary(policyView({ tags: { region: "eu" } }))).toBe("tags=region=eu");
  });

  test("anything else is refused, naming the field", () => {
    expect(refusal(() => parsePolicyPatch({ tags: ["eu"] }, KNOWN))).toContain("policy.tags must be an object");
    expect(refusal(() => parsePolicyPatch({ tags: { region: 1 } }, KNOWN))).toContain("policy.tags.region must be a string");
    expect(refusal(() => parsePolicyPatch({ tags: {} }, KNOWN))).toContain("from 1 to 20 tags");
    expect(refusal(() => policyPatchFromText({ tags: "region" }, KNOWN))).toContain("policy.tags must be an object");
    // a tag no deployment carries: every call to a group with region tags was refused
    expect(refusal(() => policyPatchFromText({ tags: "region= " }, KNOWN))).toContain("policy.tags.region must be a string");
  });

  test("dropping or changing a tag widens the key; adding one narrows it", () => {
    const eu = { tags: { region: "eu" } };
    expect(widenedField(eu, undefined)).toBe("tags");
    expect(widenedField(eu, { tags: { region: "us" } })).toBe("tags");
    expect(widenedField(eu, { tags: { region: "eu", tier: "gold" } })).toBeNull();
    expect(widenedField(undefined, eu)).toBeNull();
  });
});
