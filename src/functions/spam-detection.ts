import { type Static, Type } from "@sinclair/typebox";
import { calibrated } from "../offline-engine/calibration";
import { PII_TYPES } from "../offline-engine/pii";
import { detectSpam } from "../offline-engine/spam";
import { defineFunction } from "./define";
import { option } from "./prompt";
import { Confidence, Enum, Model, Result, Short, Strings, Text } from "./schemas";

const STRICTNESS = ["low", "medium", "high"] as const;

const request = Type.Object({
  text: Text("the text to check"),
  content_type: Type.Optional(Short("what the text is: email, comment, review, message, post, sms...", 64)),
  strictness: Type.Optional(Enum(STRICTNESS, "how readily to call something spam; default medium")),
  detect_toxicity: Type.Optional(Type.Boolean({ description: "also rate insults, threats, hate and profanity" })),
  detect_pii: Type.Optional(Type.Boolean({ description: "also list personal data found in the text" })),
  return_sanitized: Type.Optional(
    Type.Boolean({ description: "also return the text with spam links removed, profanity masked and personal data redacted" }),
  ),
  model: Model(),
});
type Req = Static<typeof request>;

const LABELS = ["spam", "suspicious", "not_spam"] as const;

const Signal = Type.Object(
  {
    name: Type.String({ minLength: 1, description: "what fired, snake_case: phishing_language, shortened_link..." }),
    weight: Type.Number({ minimum: 0, maximum: 1, description: "how much it adds to the spam score" }),
    detail: Type.String({ description: "the evidence as found in the text" }),
  },
  { additionalProperties: false },
);

const Toxicity = Type.Object(
  {
    score: Confidence(),
    is_toxic: Type.Boolean(),
    categories: Strings("harm categories present: insult, harassment, threat, hate, profanity, sexual, violence, self_harm"),
  },
  { additionalProperties: false, description: "present when detect_toxicity is true" },
);

const PiiFound = Type.Array(
  Type.Object(
    {
      type: Type.String({ description: `one of ${PII_TYPES.join(", ")}` }),
      text: Type.String(),
      start: Type.Integer({ minimum: 0 }),
      end: Type.Integer({ minimum: 0 }),
      score: Confidence(),
    },
    { additionalProperties: false },
  ),
  { description: "present when detect_pii is true; offsets are string indices into text" },
);

const DESCRIPTION = "spam verdict with the signals behind it, and toxicity, PII and sanitized text when asked";

const base = {
  is_spam: Type.Boolean({ description: "true when label is spam" }),
  label: Enum(LABELS, "spam, suspicious (borderline at this strictness) or not_spam"),
  spam_score: Type.Number({ minimum: 0, maximum: 1, description: "0 clean .. 1 certainly spam; independent of strictness" }),
  confidence: Confidence(),
  signals: Type.Array(Signal, { maxItems: 30, description: "the evidence that fired, strongest first" }),
  categories: Strings("kinds of spam: phishing, scam, promotional, adult, pharma, seo, malicious_link, bulk, obfuscation", 10),
};

const result = Result(
  { ...base, toxicity: Type.Optional(Toxicity), pii: Type.Optional(PiiFound), sanitized_text: Type.Optional(Type.String()) },
  DESCRIPTION,
);

function resultFor(req: Req) {
  return Result(
    {
      ...base,
      ...(req.detect_toxicity ? { toxicity: Toxicity } : {}),
      ...(req.detect_pii ? { pii: PiiFound } : {}),
      ...(req.return_sanitized ? { sanitized_text: Type.String({ description: "the text made safe to show" }) } : {}),
    },
    DESCRIPTION,
  );
}

export default defineFunction({
  name: "spam-detection",
  summary: "Score a text for spam, with the signals that fired; optionally toxicity, PII and a sanitized copy",
  tags: ["safety"],
  request,
  result,
  resultSchemaFor: resultFor,
  role: "You detect spam: scams, phishing, unsolicited promotion, link farming and bot text.",
  brief: (req) => ({
    rules: [
      option("The text is a", req.content_type),
      `Strictness ${req.strictness ?? "medium"}: ${
        req.strictness === "high"
          ? "flag anything promotional or unsolicited"
          : req.strictness === "low"
            ? "flag only clear spam and scams"
            : "flag spam a careful moderator would remove"
      }; label suspicious when it is borderline.`,
      "signals: each piece of evidence with a weight from 0 to 1; spam_score combines them.",
      req.detect_toxicity && "toxicity: rate insults, harassment, threats, hate and profanity.",
      req.detect_pii &&
        `pii: every piece of personal data (${PII_TYPES.join(", ")}) with its exact text and string offsets into the text.`,
      req.return_sanitized &&
        "sanitized_text: the text with spam links replaced by [link removed], profanity masked with asterisks and personal data replaced by [TYPE].",
    ],
    inputs: [["text", req.text]],
  }),
  check: (req, res) => {
    const problems: string[] = [];
    if (res.is_spam !== (res.label === "spam")) problems.push("is_spam disagrees with label");
    if (req.detect_toxicity && !res.toxicity) problems.push("toxicity missing though detect_toxicity is true");
    if (req.detect_pii && !res.pii) problems.push("pii missing though detect_pii is true");
    for (const p of res.pii ?? [])
      if (req.text.slice(p.start, p.end) !== p.text) problems.push(`pii offsets of "${p.text}" do not match the text`);
    if (req.return_sanitized && res.sanitized_text === undefined)
      problems.push("sanitized_text missing though return_sanitized is true");
    return problems;
  },
  local: (req) => {
    const r = detectSpam(req.text, {
      contentType: req.content_type,
      strictness: req.strictness ?? "medium",
      detectToxicity: req.detect_toxicity,
      detectPii: req.detect_pii,
      returnSanitized: req.return_sanitized,
    });
    return {
      is_spam: r.isSpam,
      label: r.label,
      spam_score: r.spamScore,
      confidence: calibrated("spam", r.confidence),
      signals: r.signals.map(({ name, weight, detail }) => ({ name, weight, detail })),
      categories: r.categories,
      ...(r.toxicity
        ? { toxicity: { score: r.toxicity.score, is_toxic: r.toxicity.isToxic, categories: r.toxicity.categories } }
        : {}),
      ...(r.pii ? { pii: r.pii.map(({ type, text, start, end, score }) => ({ type, text, start, end, score })) } : {}),
      ...(r.sanitizedText !== undefined ? { sanitized_text: r.sanitizedText } : {}),
    };
  },
  // Pattern signals miss novel spam a model recognizes; the engine serves when no model is configured.
  preferLocal: false,
  example: {
    request: {
      text: "Congratulations! You have won a $1,000 gift card. Click here to claim your prize: bit.ly/3xYz",
      content_type: "comment",
      strictness: "medium",
      return_sanitized: true,
    },
    result: {
      is_spam: true,
      label: "spam",
      spam_score: 0.93,
      confidence: 0.99,
      signals: [
        { name: "prize_or_easy_money", weight: 0.65, detail: "you have won, prize" },
        { name: "shortened_link", weight: 0.35, detail: "1 shortened link(s)" },
      ],
      categories: ["scam", "malicious_link"],
      sanitized_text: "Congratulations! You have won a $1,000 gift card. Click here to claim your prize: [link removed]",
    },
  },
});
