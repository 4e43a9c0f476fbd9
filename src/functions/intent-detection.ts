import { type Static, Type } from "@sinclair/typebox";
import { calibrated } from "../offline-engine/calibration";
import { BUILTIN_INTENTS, detectIntent } from "../offline-engine/intent";
import { canonical, outside } from "./constrain";
import { defineFunction } from "./define";
import { decline } from "./offline-reach";
import { pinTo } from "./prompt";
import { AllowedList, Confidence, Entities, Model, oneOf, Result, Text } from "./schemas";

const request = Type.Object({
  text: Text("the text whose intent to detect"),
  intent_types: AllowedList("intent must be one of these labels; default: the built-in taxonomy"),
  intent_entities: Type.Optional(
    Type.Record(Type.String({ minLength: 1, maxLength: 64 }), Type.String({ maxLength: 500 }), {
      maxProperties: 50,
      description: "entities to extract: name -> description or type (email, date, amount, order id...)",
    }),
  ),
  model: Model(),
});
type Req = Static<typeof request>;

const DESCRIPTION = "the intent of the text, how sure, and the entities it names";

const Alternative = Type.Object(
  { intent: Type.String({ minLength: 1 }), confidence: Confidence() },
  { additionalProperties: false },
);

const fields = (req: Partial<Req>) => ({
  intent: req.intent_types?.length
    ? oneOf(req.intent_types, "the text's intent")
    : Type.String({ minLength: 1, maxLength: 100, description: `the text's intent, e.g. ${BUILTIN_INTENTS.join(", ")}` }),
  confidence: Confidence(),
  entities: Entities(),
  alternatives: Type.Optional(Type.Array(Alternative, { maxItems: 5, description: "runner-up intents, best first" })),
});

const result = Result(fields({}), DESCRIPTION);

export default defineFunction({
  name: "intent-detection",
  aliases: ["/v1/ai/intent"],
  summary: "Detect the intent of a text, with confidence and the entities it names",
  description: `Without intent_types, intents come from the built-in taxonomy: ${BUILTIN_INTENTS.join(", ")}.`,
  request,
  result,
  resultSchemaFor: (req) => Result(fields(req), DESCRIPTION),
  role: "You detect the intent behind a message: what the writer wants to achieve.",
  brief: (req) => ({
    rules: [
      pinTo("intent", req.intent_types) ??
        `intent: one of ${BUILTIN_INTENTS.join(", ")}, or a short snake_case label when none fits.`,
      "confidence: how sure you are of the intent, from 0 to 1.",
      req.intent_entities && Object.keys(req.intent_entities).length
        ? `entities: fill exactly these keys when the text names them, leave a key out when it does not: ${Object.entries(
            req.intent_entities,
          )
            .map(([k, v]) => `${k} (${v})`)
            .join("; ")}.`
        : "entities: the named things the text mentions (order_id, product, date, amount, person...), name -> value as written.",
      "alternatives: up to 3 other plausible intents with their confidence.",
    ],
    inputs: [["text", req.text]],
    result,
  }),
  postprocess: (req, res) => ({ ...res, intent: canonical(res.intent, req.intent_types) }),
  check: (req, res) => {
    const problems = outside("intent", res.intent, req.intent_types);
    if (res.alternatives?.some((a) => a.intent === res.intent)) problems.push("alternatives repeat the chosen intent");
    return problems;
  },
  local: (req) => {
    const r = detectIntent(req.text, req.intent_types, { entities: req.intent_entities });
    // no cue supports any label: the engine would only be guessing
    if (!r.matched)
      return decline(req, req.intent_types?.length ? "intent_types" : "text", "no cue of the offline engine supports any intent");
    const confidence = calibrated("intent", r.confidence);
    // runner-ups keep their share of the chosen intent's confidence
    const scale = r.confidence > 0 ? confidence / r.confidence : 0;
    const alternatives = r.alternatives.map((a) => ({
      ...a,
      confidence: Math.round(Math.min(confidence, a.confidence * scale) * 100) / 100,
    }));
    return { intent: r.intent, confidence, entities: r.entities, alternatives };
  },
  // Cue rules cover common support and commerce intents but not what a model understands: a model answers first.
  preferLocal: false,
  example: {
    request: {
      text: "Hi, I was charged twice for order #A-10234 on March 3. Can I get my money back?",
      intent_types: ["refund_request", "order_status", "technical_support", "other"],
      intent_entities: { order_id: "the order number", amount: "money involved", date: "when it happened" },
    },
    result: {
      intent: "refund_request",
      confidence: 0.9,
      entities: { order_id: "A-10234", date: "March 3" },
      alternatives: [{ intent: "order_status", confidence: 0.2 }],
    },
  },
});
