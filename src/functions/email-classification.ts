import { type Static, type TProperties, Type } from "@sinclair/typebox";
import { calibrated } from "../offline-engine/calibration";
import { defineFunction } from "./define";
import { extractFields } from "./offline/extract-fields";
import {
  builtinIntent,
  categoryOfIntent,
  declineLanguage,
  offlineReadable,
  pickLabel,
  priorityOf,
  withSubject,
  writerSentiment,
} from "./offline/signals";
import { decline } from "./offline-reach";
import { emailInputs } from "./prompt";
import {
  AllowedList,
  Confidence,
  CustomInstructions,
  checkSchemaParam,
  ExtractSchema,
  extractedResult,
  Model,
  oneOf,
  Priority,
  Result,
  Subject,
  Text,
} from "./schemas";

const request = Type.Object({
  email_content: Text("the email body"),
  subject: Subject(),
  allowed_categories: AllowedList("category must be one of these"),
  detect_urgency: Type.Optional(Type.Boolean({ description: "true: also rate how urgent the email is" })),
  extract_schema: ExtractSchema(),
  custom_instructions: CustomInstructions(),
  model: Model(),
});
type Req = Static<typeof request>;

const Urgency = Type.Object(
  {
    level: Priority("how urgent"),
    is_urgent: Type.Boolean({ description: "true when it should be handled today" }),
    reason: Type.String({ description: "what makes it urgent or not" }),
  },
  { additionalProperties: false, description: "present when detect_urgency is true" },
);

const fields = (req: Partial<Req>) => ({
  category: oneOf(req.allowed_categories, "the email's category", "billing, support, sales, spam"),
  confidence: Confidence(),
});
const DESCRIPTION = "category of one email, with urgency and extracted fields when asked";

const result = Result(
  {
    ...fields({}),
    urgency: Type.Optional(Urgency),
    extracted: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "present when extract_schema is given" })),
  },
  DESCRIPTION,
);

function resultFor(req: Req) {
  const props: TProperties = fields(req);
  if (req.detect_urgency) props.urgency = Urgency;
  if (req.extract_schema && Object.keys(req.extract_schema).length > 0) props.extracted = extractedResult(req.extract_schema);
  return Result(props, DESCRIPTION);
}

export default defineFunction({
  name: "email-classification",
  summary: "Classify an email into a category, optionally rating urgency and extracting fields",
  tags: ["email"],
  request,
  result,
  normalize: checkSchemaParam<Req>("extract_schema"),
  resultSchemaFor: resultFor,
  pins: (req) => ({ category: req.allowed_categories }),
  role: "You classify incoming emails.",
  brief: (req) => ({
    rules: [
      "confidence: how sure you are of the category, from 0 to 1.",
      req.detect_urgency &&
        "Rate urgency: critical for outages, security or legal threats; high when the sender is blocked or a deadline is near.",
      req.extract_schema &&
        `Extract these fields into "extracted", with null for anything the email does not state: ${JSON.stringify(req.extract_schema)}`,
    ],
    instructions: req.custom_instructions,
    inputs: emailInputs(req),
  }),
  local: (req) => {
    const text = withSubject(req.email_content, req.subject);
    if (!offlineReadable(text)) return declineLanguage(req, text);
    const own = builtinIntent(text);
    const picked = req.allowed_categories?.length
      ? pickLabel(text, req.allowed_categories)
      : { label: categoryOfIntent(own.intent), confidence: own.matched ? calibrated("category", own.confidence) : 0.3 };
    if (picked === null) return decline(req, "allowed_categories", "no offline cue fits any of these categories");
    const out: Static<typeof result> = { category: picked.label, confidence: picked.confidence };
    if (req.detect_urgency) {
      const { level, why } = priorityOf(text, writerSentiment(text));
      out.urgency = { level, is_urgent: level === "high" || level === "critical", reason: `Priority ${level}: ${why}.` };
    }
    if (req.extract_schema && Object.keys(req.extract_schema).length > 0)
      out.extracted = extractFields(req.email_content, req.extract_schema);
    return out;
  },
  example: {
    request: {
      email_content: "Hi, please cancel my subscription (account 88213) before the renewal on 2026-12-01.",
      allowed_categories: ["billing", "cancellation", "support", "sales"],
      detect_urgency: true,
      extract_schema: { account_id: "string", renewal_date: "date" },
    },
    result: {
      category: "cancellation",
      confidence: 0.94,
      urgency: { level: "medium", is_urgent: false, reason: "The renewal is more than a week away." },
      extracted: { account_id: "88213", renewal_date: "2026-12-01" },
    },
  },
});
