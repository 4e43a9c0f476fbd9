import { type Static, Type } from "@sinclair/typebox";
import { fixGrammar, GRAMMAR_DIALECTS, parseDialect } from "../offline-engine/grammar";
import { detectLanguage } from "../offline-engine/language";
import { defineFunction } from "./define";
import { decline } from "./offline-reach";
import { option } from "./prompt";
import { Model, Result, Short, Text } from "./schemas";

const request = Type.Object({
  text: Text("the text to correct"),
  tone: Type.Optional(
    Short("tone to give the text while correcting: formal, casual, friendly...; default: keep the author's", 64),
  ),
  dialect: Type.Optional(Short(`English dialect for spelling: ${GRAMMAR_DIALECTS.join(", ")}; default american`, 32)),
  return_explanations: Type.Optional(Type.Boolean({ description: "true: explain each correction" })),
  model: Model(),
});
type Req = Static<typeof request>;

const correctionFields = {
  original: Type.String({ description: "the text as written" }),
  corrected: Type.String({ description: "what it became (empty when removed)" }),
  start: Type.Optional(Type.Integer({ minimum: 0, description: "string index of original in text" })),
  end: Type.Optional(Type.Integer({ minimum: 0 })),
  type: Type.String({ description: "spelling, grammar, agreement, punctuation, capitalization, word_choice, style..." }),
};
const Correction = Type.Object(
  {
    ...correctionFields,
    explanation: Type.Optional(Type.String({ description: "why it was wrong; present when return_explanations is true" })),
  },
  { additionalProperties: false },
);
const ExplainedCorrection = Type.Object(
  { ...correctionFields, explanation: Type.String({ minLength: 1, description: "why it was wrong" }) },
  { additionalProperties: false },
);

const DESCRIPTION = "the corrected text and the corrections made";

const fields = (withExplanation: boolean) => ({
  corrected_text: Type.String({ description: "the whole text with every correction applied" }),
  corrections: Type.Array(withExplanation ? ExplainedCorrection : Correction, { description: "each change, in text order" }),
  changes_count: Type.Integer({ minimum: 0 }),
});

const result = Result(fields(false), DESCRIPTION);

// Tones that ask for no rewrite: the engine can serve them.
const KEEP_TONE = /^(?:neutral|original|keep|same|unchanged|preserve|as is|none|default)$/i;

/**
 * Detected this surely as a language other than English, a text is out of the offline engine's
 * reach: Harper knows English words only and "corrects" every other one into one ("Ich habe" ->
 * "Ice ha be"). English test sets read as another language at most 0.48 (short slips: "teh cat
 * sat" 0.38); German, French, Spanish, Italian, Portuguese and Dutch sentences at 0.53 to 0.72.
 */
const OTHER_LANGUAGE_AT = 0.5;

/** The language the text is surely written in when it is not English; null for English or unsure. */
function otherLanguage(text: string): string | null {
  const d = detectLanguage(text);
  return d.code !== "en" && d.code !== "und" && d.confidence >= OTHER_LANGUAGE_AT ? d.name : null;
}

function kindName(kind: string): string {
  return kind.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

export default defineFunction({
  name: "grammar-fix",
  summary: "Correct grammar, spelling and punctuation in a dialect of English, optionally explaining each change",
  request,
  result,
  resultSchemaFor: (req: Req) => Result(fields(Boolean(req.return_explanations)), DESCRIPTION),
  role: "You are a careful copy editor. You correct grammar, spelling and punctuation and change nothing else.",
  brief: (req) => ({
    rules: [
      `Use ${parseDialect(req.dialect) ?? req.dialect ?? "american"} English spelling and usage.`,
      req.tone && !KEEP_TONE.test(req.tone)
        ? option("Adjust the wording to this tone while keeping the meaning", req.tone)
        : "Keep the author's words, tone and meaning; do not rephrase correct text.",
      "corrections: every change, in order, with the original text, the corrected text and its start and end string index in the original.",
      req.return_explanations ? "explanation: for every correction, a short reason a learner understands." : undefined,
      "changes_count: the number of corrections.",
    ],
    inputs: [["text", req.text]],
  }),
  // Models are poor at character offsets: re-anchor each correction on its original text (the
  // nearest occurrence to the offsets given) and drop corrections whose original is not in the text.
  // Without a tone rewrite, corrected_text is derived from the corrections so the two always agree.
  postprocess: (req, res) => {
    const anchored = res.corrections.flatMap((c) => {
      if (c.start !== undefined && c.end !== undefined && req.text.slice(c.start, c.end) === c.original) return [c];
      const at = nearestOccurrence(req.text, c.original, c.start ?? 0);
      return at < 0 ? [] : [{ ...c, start: at, end: at + c.original.length }];
    });
    const rewrite = req.tone !== undefined && !KEEP_TONE.test(req.tone);
    const corrections = rewrite ? anchored : withoutOverlaps(anchored);
    const corrected_text = rewrite ? res.corrected_text : applyCorrections(req.text, corrections);
    return { ...res, corrected_text, corrections, changes_count: corrections.length };
  },
  check: (req, res) => {
    const problems: string[] = [];
    for (const c of res.corrections) {
      if (c.start !== undefined && c.end !== undefined && req.text.slice(c.start, c.end) !== c.original)
        problems.push(`correction "${c.original}" does not sit at ${c.start}..${c.end}`);
    }
    if (res.corrections.length === 0 && res.corrected_text !== req.text) problems.push("text changed but no correction listed");
    return problems;
  },
  local: async (req) => {
    const language = otherLanguage(req.text);
    if (language)
      return decline(
        req,
        "language",
        `the text reads as ${language}; the offline grammar engine corrects English only (configure an AI provider for other languages)`,
      );
    const dialect = parseDialect(req.dialect);
    // Harper corrects; it does not rewrite for tone, and it knows only these dialects
    if (!dialect)
      return decline(
        req,
        "dialect",
        `the offline grammar engine knows American, British, Canadian and Australian English, not "${req.dialect}"`,
      );
    if (req.tone && !KEEP_TONE.test(req.tone.trim()))
      return decline(req, "tone", `rewriting for a "${req.tone}" tone needs a model; the offline engine only corrects`);
    const r = await fixGrammar(req.text, { dialect });
    const corrections = r.corrections.map((c) => ({
      original: c.original,
      corrected: c.replacement,
      start: c.start,
      end: c.end,
      type: kindName(c.kind),
      ...(req.return_explanations ? { explanation: c.explanation } : {}),
    }));
    return { corrected_text: r.correctedText, corrections, changes_count: corrections.length };
  },
  // Harper catches spelling and common grammar slips but far fewer errors than a model.
  preferLocal: false,
  example: {
    request: { text: "Their going to the store tomorow. I has a apple.", dialect: "british", return_explanations: true },
    result: {
      corrected_text: "They're going to the store tomorrow. I have an apple.",
      corrections: [
        { original: "Their", corrected: "They're", start: 0, end: 5, type: "grammar", explanation: "Did you mean `they're`?" },
        {
          original: "tomorow",
          corrected: "tomorrow",
          start: 25,
          end: 32,
          type: "spelling",
          explanation: "Did you mean to spell `tomorow` this way?",
        },
        {
          original: "has",
          corrected: "have",
          start: 36,
          end: 39,
          type: "agreement",
          explanation: "The form of the verb must agree in grammatical number with the pronoun.",
        },
        {
          original: "a",
          corrected: "an",
          start: 40,
          end: 41,
          type: "miscellaneous",
          explanation: "Incorrect indefinite article.",
        },
      ],
      changes_count: 4,
    },
  },
});

function nearestOccurrence(text: string, needle: string, near: number): number {
  if (!needle) return -1;
  let best = -1;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
    if (best < 0 || Math.abs(i - near) < Math.abs(best - near)) best = i;
  }
  return best;
}

type Located = { start?: number; end?: number; corrected: string };

function withoutOverlaps<T extends Located>(cs: T[]): T[] {
  const placed = cs.filter((c) => c.start !== undefined && c.end !== undefined).sort((a, b) => a.start! - b.start!);
  const out: T[] = [];
  for (const c of placed) if (!out.length || c.start! >= out[out.length - 1].end!) out.push(c);
  return out;
}

function applyCorrections(text: string, cs: Located[]): string {
  let out = "";
  let at = 0;
  for (const c of cs) {
    out += text.slice(at, c.start) + c.corrected;
    at = c.end!;
  }
  return out + text.slice(at);
}
