/** The guardrails of a request: the plan's plus the key's policy (a key can only add protection), and the config's check. */
import { describe, expect, test } from "bun:test";
import {
  ConfigError,
  GUARDRAIL_MODERATION_CATEGORIES,
  type GuardrailSettings,
  loadConfig,
  parseGuardrails,
} from "../../src/config";
import { MODERATION_CATEGORIES } from "../../src/offline-engine/moderation";
import { mergeGuardrails } from "../../src/providers/guardrails";

const plan: GuardrailSettings = { redactPii: ["email"], restorePii: true, blockPii: ["ssn"], blockModeration: ["hate"] };

describe("mergeGuardrails", () => {
  test("no plan table and no key policy: nothing guarded", () => {
    expect(mergeGuardrails(undefined)).toBeNull();
    expect(mergeGuardrails(undefined, null)).toBeNull();
    expect(mergeGuardrails(undefined, {})).toBeNull();
  });

  test("the plan alone", () => {
    expect(mergeGuardrails(plan)).toEqual(plan);
  });

  test("a key's lists are added to the plan's", () => {
    const m = mergeGuardrails(plan, {
      redact_pii: ["name", "email"],
      block_pii: ["credit_card"],
      block_moderation: ["violence"],
    });
    expect(m).toEqual({
      redactPii: ["email", "name"],
      restorePii: true,
      blockPii: ["ssn", "credit_card"],
      blockModeration: ["hate", "violence"],
    });
  });

  test("a key's restore_pii, when set, wins; left out, the plan's holds", () => {
    expect(mergeGuardrails(plan, { restore_pii: false })?.restorePii).toBe(false);
    expect(mergeGuardrails({ ...plan, restorePii: false }, { restore_pii: true })?.restorePii).toBe(true);
    expect(mergeGuardrails(plan, { redact_pii: ["name"] })?.restorePii).toBe(true);
  });

  test("a key with guardrails on a plan without any", () => {
    expect(mergeGuardrails(undefined, { redact_pii: ["phone_number"] })).toEqual({
      redactPii: ["phone"],
      restorePii: false,
      blockPii: [],
      blockModeration: [],
    });
  });

  test("an unknown kind in a key's policy is refused, not ignored", () => {
    expect(() => mergeGuardrails(plan, { redact_pii: ["passport"] })).toThrow(ConfigError);
  });
});

describe("[plans.NAME.guardrails] in the config file", () => {
  const load = async (toml: string) => {
    const path = `${require("node:os").tmpdir()}/guardrails-${crypto.randomUUID()}.toml`;
    await Bun.write(path, toml);
    return () => loadConfig({ TEXTAI_CONFIG: path });
  };

  test("read and checked", async () => {
    const c = (
      await load(`[plans.pro.guardrails]
redact_pii = ["email", "phone", "credit_card", "ssn", "ip_address", "name", "address"]
restore_pii = true
block_pii = ["credit_card"]
block_moderation = ["hate", "violence"]
`)
    )();
    expect(c.guardrails.pro).toEqual({
      redactPii: ["email", "phone", "credit_card", "ssn", "ip_address", "name", "address"],
      restorePii: true,
      blockPii: ["credit_card"],
      blockModeration: ["hate", "violence"],
    });
    expect(c.guardrails.free).toBeUndefined();
  });

  test("an unknown kind or category is a config error naming it", async () => {
    expect(await load(`[plans.pro.guardrails]\nredact_pii = ["emails"]\n`)).toThrow(
      /plans\.pro\.guardrails\.redact_pii.*"emails"/,
    );
    expect(await load(`[plans.pro.guardrails]\nblock_moderation = ["rude"]\n`)).toThrow(/block_moderation.*"rude"/);
    expect(await load(`[plans.pro.guardrails]\nredact = ["email"]\n`)).toThrow(ConfigError);
  });

  test("the config's moderation categories are the engine's", () => {
    expect([...GUARDRAIL_MODERATION_CATEGORIES].sort()).toEqual([...MODERATION_CATEGORIES].sort());
    expect(parseGuardrails("x", {}).redactPii).toEqual([]);
  });
});
