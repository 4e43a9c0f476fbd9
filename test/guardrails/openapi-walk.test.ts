/**
 * Issue 41, generated: every string-bearing field of OpenAI's request schemas (chat completions,
 * Responses and embeddings, as vendored in test/fixtures/openai-openapi/requests.json), and a key
 * added to every object (a field a vendor might add tomorrow), gets a card number, an email and a
 * name. With redaction on, none of them reaches the upstream simulator verbatim; with cards
 * blocked, a card at any one of those places alone is refused, sent nowhere. Fields on the guard's
 * documented skip list (src/providers/guard-walk.ts: the model, roles, types, ids, enumerations)
 * get a neutral value, as do enumerated and constant fields of the schema.
 */
import { describe, expect, test } from "bun:test";
import { rawPost } from "../openai/setup";
import { CARD_ALONE, FILLER, filled, leaked, type OpenaiTemplate, openaiTemplates, PAYLOAD } from "./schema-walk";
import { guardedSuite, STRICT_PLAN } from "./setup";

const suite = guardedSuite(
  `${STRICT_PLAN}
[plans.redacting.guardrails]
redact_pii = ["email", "credit_card", "name"]

[plans.redacting.rate_limits]
"chat-completions" = 100000
responses = 100000
embeddings = 100000
standard = 100000

[plans.strict.rate_limits]
"chat-completions" = 100000
responses = 100000
embeddings = 100000
standard = 100000
`,
  ["redacting", "strict"],
);

const all: OpenaiTemplate[] = openaiTemplates();

test("the walk finds the string fields and keys of every vendored request schema", () => {
  const count = (api: string) => all.filter((t) => t.api === api).reduce((n, t) => n + t.slots.length, 0);
  expect(count("chat/completions")).toBeGreaterThan(40);
  expect(count("responses")).toBeGreaterThan(40);
  expect(count("embeddings")).toBeGreaterThan(3);
});

describe("every string field and key of OpenAI's request schemas", () => {
  test("with a card, an email and a name in every one at once, none reaches the simulator verbatim", async () => {
    const { sim, gw, keys } = suite;
    for (const t of all) {
      const from = sim.calls.requests.length;
      const r = await rawPost(
        gw,
        `/v1/${t.api}`,
        keys.redacting as string,
        filled(t, () => PAYLOAD),
      );
      expect({ api: t.api, status: r.status, body: r.status === 200 ? "" : await r.text() }).toEqual({
        api: t.api,
        status: 200,
        body: "",
      });
      const sent = suite.sentSince(from);
      expect(sent).toContain("[EMAIL_1]");
      expect(leaked(sent)).toEqual([]);
    }
  });

  test("a card at any one of them alone is refused, sent nowhere", async () => {
    const { sim, gw, keys } = suite;
    const missed: string[] = [];
    for (const t of all)
      for (const s of t.slots) {
        const before = sim.calls.requests.length;
        const r = await rawPost(
          gw,
          `/v1/${t.api}`,
          keys.strict as string,
          filled(t, (x) => (x === s ? CARD_ALONE : FILLER)),
        );
        if (r.status !== 422 || sim.calls.requests.length !== before) missed.push(`${t.api} ${s}: ${r.status}`);
      }
    expect(missed).toEqual([]);
  });
});
