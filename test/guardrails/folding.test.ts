/**
 * Issue 41: text read as a person reads it (src/offline-engine/pii/fold.ts). Emails, cards and SSNs
 * written in compatibility forms, with ideographic punctuation, combining or invisible characters,
 * or split by separators a reader reads through, never reach the upstream simulator verbatim through
 * a real server: redacted under a plan that redacts every kind, refused under one that blocks cards.
 */
import { describe, expect, test } from "bun:test";
import { rawPost } from "../openai/setup";
import { guardedSuite, REDACT_EVERY_KIND, STRICT_PLAN } from "./setup";

const suite = guardedSuite(
  `${STRICT_PLAN}
[plans.redacting.guardrails]
${REDACT_EVERY_KIND}
restore_pii = true

[routes]
pii-redaction = ["local"]
`,
  ["redacting", "strict"],
);
const key = (plan: string) => suite.keys[plan] as string;

const chat = (content: string) => ({ model: "model-a", messages: [{ role: "user", content }] });

/** `value` inside a message is sent as a placeholder of `kind`, and no part of it (its digits or its user) goes verbatim. */
async function redacted(value: string, label: string, pieces: string[]) {
  const from = suite.sim.calls.requests.length;
  const r = await rawPost(suite.gw, "/v1/chat/completions", key("redacting"), chat(`Please note: ${value} . Thanks.`));
  expect(r.status).toBe(200);
  const sent = suite.sentSince(from);
  expect(sent).not.toContain(value);
  expect(sent).not.toContain(JSON.stringify(value).slice(1, -1));
  for (const p of pieces) expect(sent).not.toContain(p);
  expect(sent).toContain(`[${label}_1]`);
}

const EMAILS: Record<string, string> = {
  "small commercial at ﹫ (U+FE6B) for @": "maria.garcia﹫example.com",
  "fullwidth ＠ for @": "maria.garcia＠example.com",
  "ideographic full stop 。 (U+3002) for the dot": "maria.garcia@example。com",
  "combining marks": "mari\u0301a.garci\u0301a@exa\u0301mple.com",
  "a zero-width space inside": "maria.gar\u200bcia@example.com",
};

const CARDS: Record<string, string> = {
  "ー (U+30FC) between groups": "4111ー1111ー1111ー1111",
  "split by a newline": "4111 1111\n1111 1111",
  "a group per line": "4111\n1111\n1111\n1111",
  "split by /": "4111/1111/1111/1111",
  "split by _": "4111_1111_1111_1111",
  "split by ,": "4111,1111,1111,1111",
  "split by two thin spaces": "4111\u2009\u20091111\u2009\u20091111\u2009\u20091111",
  "superscript digits": "⁴¹¹¹ ¹¹¹¹ ¹¹¹¹ ¹¹¹¹",
  "circled digits": "④①①① ①①①① ①①①① ①①①①",
  "fullwidth digits and ideographic spaces": "４１１１\u3000１１１１\u3000１１１１\u3000１１１１",
  "zero-width spaces between groups": "4111\u200b1111\u200b1111\u200b1111",
};

/** (2026-12-06) Unicode's default-ignorable code points, as a class, and pictographs or dots a person reads through between groups */
const PHONES: Record<string, string> = {
  "right-to-left marks between groups": "054\u200F-\u200F123\u200F-\u200F4567",
  "the Arabic letter mark after a group": "050\u061C 123 4567",
  "keycap digits (digit, U+FE0F, U+20E3)": [..."07700 900123"].map((d) => (d === " " ? d : `${d}\uFE0F\u20E3`)).join(""),
  "emoji between groups, spaced": "0152 👉 3381 👉 9074",
  "emoji glued between groups": "0176🔹5512🔹8830",
  "middle dots glued between groups": "0612·345·678",
  "a Hangul filler (U+3164) after the area code": "010\u3164-1234-5678",
};

const SSNS: Record<string, string> = {
  "spaced digit by digit": "2 1 9 0 9 9 9 9 9",
  "spaced digit by digit, groups dashed": "2 1 9 - 0 9 - 9 9 9 9",
};

describe("emails in forms a person reads as one", () => {
  for (const [what, email] of Object.entries(EMAILS))
    test(`an email with ${what} is redacted`, () => redacted(email, "EMAIL", ["garcia", "example"]));
});

describe("cards in forms a person reads as one", () => {
  for (const [what, card] of Object.entries(CARDS)) {
    test(`a card ${what} is redacted`, () => redacted(card, "CREDIT_CARD", []));
    test(`a card ${what} is refused by block_pii, sent nowhere`, async () => {
      const before = suite.sim.calls.requests.length;
      const r = await rawPost(suite.gw, "/v1/chat/completions", key("strict"), chat(`my card: ${card} thanks`));
      expect(r.status).toBe(422);
      expect(suite.sim.calls.requests.length).toBe(before);
    });
  }
});

describe("phone numbers in forms a person reads as one", () => {
  for (const [what, phone] of Object.entries(PHONES))
    test(`a phone number with ${what} is redacted`, () => redacted(phone, "PHONE", []));
});

describe("every invisible character (Unicode's default-ignorable code points) is read through", () => {
  // each assigned one of the Basic Multilingual Plane, and a tag character, between a card's groups: one request for them all
  const invisibles = [
    ...Array.from({ length: 0x10000 }, (_, cp) => String.fromCharCode(cp)).filter(
      (c) => /\p{Default_Ignorable_Code_Point}/u.test(c) && !/\p{Cn}/u.test(c),
    ),
    "\u{E0020}",
  ];
  test(`${invisibles.length} invisible characters, each between the groups of a card, are redacted`, async () => {
    expect(invisibles.length).toBeGreaterThan(50);
    const cards = invisibles.map((c) => `4111${c}1111${c}1111${c}1111`);
    const from = suite.sim.calls.requests.length;
    const r = await rawPost(suite.gw, "/v1/chat/completions", key("redacting"), chat(cards.join(" ; ")));
    expect(r.status).toBe(200);
    const sent = suite.sentSince(from);
    const leaked = cards.filter((card) => sent.includes(card) || sent.includes(JSON.stringify(card).slice(1, -1)));
    expect(leaked.map((card) => [...card][4]?.codePointAt(0)?.toString(16))).toEqual([]);
    expect(sent).not.toContain("1111");
  });
});

describe("SSNs in forms a person reads as one", () => {
  for (const [what, ssn] of Object.entries(SSNS)) test(`an SSN ${what} is redacted`, () => redacted(ssn, "SSN", ["9 9 9 9"]));
});

describe("the offline engine's own PII redaction reads the same way (the fold is the recognizer's input stage)", () => {
  const all = { ...EMAILS, ...CARDS, ...SSNS };
  for (const [what, value] of Object.entries(all))
    test(`pii-redaction on the local engine: ${what}`, async () => {
      const r = await suite.gw.post(
        "/api/v1/ai/pii-redaction",
        { text: `Please note: ${value} . Thanks.` },
        { "x-api-key": key("redacting") },
      );
      expect(r.status).toBe(200);
      const out = r.json.data?.result?.redacted_text;
      expect(typeof out).toBe("string");
      expect(out).not.toContain(value);
      expect(out).toMatch(/Please note: \[[A-Z_]+\] \. Thanks\./);
    });
});
