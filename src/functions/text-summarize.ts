import { type Static, type TProperties, Type } from "@sinclair/typebox";
import { extractJson, parseSchemaSpec } from "../offline-engine/json-extract";
import { isKnownAudience, isSupportedFormat, isSupportedLength, summarize } from "../offline-engine/summarize";
import { defineFunction } from "./define";
import { decline, ignoreOption, noteLowConfidence, noteNotFound } from "./offline-reach";
import { option } from "./prompt";
import {
  CustomInstructions,
  checkSchemaParam,
  ExtractSchema,
  extractedResult,
  Model,
  Result,
  Short,
  Strings,
  Text,
} from "./schemas";

const request = Type.Object({
  text: Text("the text to summarize"),
  length: Type.Optional(
    Type.Union([Short("short, medium or long; or a number of sentences", 20), Type.Integer({ minimum: 1, maximum: 50 })], {
      description:
        "short (1-2 sentences), medium (about a third, 2-5 sentences), long (about half), or a sentence count; default medium",
    }),
  ),
  format: Type.Optional(Short("paragraph, bullets, numbered, tldr or headline; default paragraph", 40)),
  target_audience: Type.Optional(Short("who will read it: executives, customers, engineers, children...", 200)),
  extract_schema: ExtractSchema(),
  custom_instructions: CustomInstructions(),
  model: Model(),
});
type Req = Static<typeof request>;

const DESCRIPTION = "summary of the text, its key points, and extracted fields when asked";

const base = {
  summary: Type.String({ minLength: 1, description: "the summary, rendered in the requested format" }),
  key_points: Strings("the main points, one sentence each", 20),
  word_count: Type.Integer({ minimum: 0, description: "words in the summary" }),
};

const result = Result(
  {
    ...base,
    extracted: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "present when extract_schema is given" })),
  },
  DESCRIPTION,
);

function resultFor(req: Req) {
  const props: TProperties = { ...base };
  if (req.extract_schema && Object.keys(req.extract_schema).length > 0) props.extracted = extractedResult(req.extract_schema);
  return Result(props, DESCRIPTION);
}

function lengthRule(length: Req["length"]): string {
  if (typeof length === "number") return `Use exactly ${length} sentence(s) (or bullet points).`;
  const l = (length ?? "medium").trim().toLowerCase();
  if (/^\d+$/.test(l)) return `Use exactly ${l} sentence(s) (or bullet points).`;
  if (l.startsWith("short")) return "Keep it short: one or two sentences.";
  if (l.startsWith("long")) return "Make it long: about half the length of the text, covering every main point.";
  if (l === "medium") return "Medium length: about a third of the text, two to five sentences.";
  return `Length of the summary: ${length}.`;
}

const countWords = (s: string) => (s.match(/[\p{L}\p{N}]+/gu) ?? []).length;

export default defineFunction({
  name: "text-summarize",
  summary: "Summarize a text at a chosen length and format, for an audience, optionally extracting fields",
  request,
  result,
  normalize: checkSchemaParam<Req>("extract_schema"),
  resultSchemaFor: resultFor,
  role: "You summarize texts faithfully: no facts that are not in the text.",
  brief: (req) => ({
    rules: [
      lengthRule(req.length),
      option("Format of summary", req.format ?? "paragraph"),
      req.format &&
        /bullet|numbered|key/i.test(req.format) &&
        "Put one point per line, starting with '- ' (or '1. ' for numbered).",
      req.format && /tl;?dr/i.test(req.format) && "Start the summary with 'TL;DR: '.",
      req.target_audience && `Write for this audience: ${req.target_audience}. Choose what matters to them and words they use.`,
      "key_points: the main points, one sentence each.",
      "word_count: the number of words in summary.",
      req.extract_schema &&
        Object.keys(req.extract_schema).length > 0 &&
        `extracted: fill these fields from the text, null when it does not say: ${JSON.stringify(req.extract_schema)}.`,
    ],
    instructions: req.custom_instructions,
    inputs: [["text", req.text]],
  }),
  postprocess: (_req, res) => ({ ...res, word_count: countWords(res.summary) }),
  check: (req, res) => {
    const problems: string[] = [];
    if (countWords(res.summary) > countWords(req.text) * 1.1 + 10) problems.push("summary is longer than the text");
    if (req.extract_schema && Object.keys(req.extract_schema).length > 0 && !res.extracted)
      problems.push("extracted missing though extract_schema is given");
    return problems;
  },
  local: (req) => {
    // an extractive engine cannot follow free-form instructions or invent a format it does not know
    if (req.custom_instructions?.trim())
      return decline(req, "custom_instructions", "free-form instructions need a model; the offline summarizer is extractive");
    if (!isSupportedFormat(req.format)) return decline(req, "format", `the offline summarizer has no "${req.format}" format`);
    if (!isSupportedLength(req.length)) return decline(req, "length", `the offline summarizer has no "${req.length}" length`);
    if (req.target_audience?.trim() && !isKnownAudience(req.target_audience))
      ignoreOption(
        req,
        "target_audience",
        "the offline summarizer adapts only to executives, engineers and other experts, or beginners and customers",
      );
    const r = summarize(req.text, { length: req.length, format: req.format, targetAudience: req.target_audience });
    if (!r.summary) return null;
    const out: Static<typeof result> = { summary: r.summary, key_points: r.keyPoints, word_count: r.wordCount };
    if (req.extract_schema && Object.keys(req.extract_schema).length > 0) {
      const fields = parseSchemaSpec(req.extract_schema);
      if (!fields) return decline(req, "extract_schema", "the offline engine cannot read this field specification");
      const ex = extractJson(req.text, fields);
      // a field the engine cannot recognize would be a guess: leave the request to a model
      if (ex.unresolved.length)
        return decline(req, "extract_schema", `no offline recognizer for ${ex.unresolved.map((f) => `"${f}"`).join(", ")}`);
      noteNotFound(req, ex.missing);
      if (ex.doubtful.length)
        noteLowConfidence(
          req,
          ex.doubtful.map((f) => `extracted.${f}`),
        );
      out.extracted = ex.value;
    }
    return out;
  },
  // Extractive summaries are faithful but cannot paraphrase or adapt wording as a model does.
  preferLocal: false,
  example: {
    request: {
      text: "The Q3 launch of the Atlas app has been moved to October 14 because the payment integration failed security review. Dr. Lee found 3 critical issues in the checkout flow. The fixes will take about two weeks. Marketing must update the campaign dates.",
      length: "short",
      format: "bullets",
      target_audience: "executives",
    },
    result: {
      summary:
        "- The Q3 launch of the Atlas app has been moved to October 14 because the payment integration failed security review.\n- Marketing must update the campaign dates.",
      key_points: [
        "The Q3 launch of the Atlas app has been moved to October 14 because the payment integration failed security review.",
        "Dr. Lee found 3 critical issues in the checkout flow.",
        "Marketing must update the campaign dates.",
      ],
      word_count: 27,
    },
  },
});
