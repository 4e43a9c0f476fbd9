import { type Static, Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import {
  builtinIntent,
  categoryOfIntent,
  declineLanguage,
  entitiesOf,
  gist,
  labelFor,
  languageOf,
  offlineReadable,
  priorityOf,
  withSubject,
  writerSentiment,
} from "./offline/signals";
import { decline } from "./offline-reach";
import { emailInputs } from "./prompt";
import {
  AllowedList,
  CustomInstructions,
  Entities,
  Enum,
  LanguageCode,
  oneOf,
  Priority,
  Result,
  Subject,
  Text,
  WRITER_SENTIMENTS,
} from "./schemas";

const request = Type.Object({
  email_content: Text("the email body"),
  subject: Subject(),
  allowed_categories: AllowedList("category must be one of these"),
  allowed_intents: AllowedList("intent must be one of these"),
  custom_instructions: CustomInstructions(),
});
type Req = Static<typeof request>;

const resultFor = (req: Partial<Req>) =>
  Result(
    {
      category: oneOf(req.allowed_categories, "what the email is about", "billing, support, sales"),
      intent: oneOf(req.allowed_intents, "what the sender wants", "refund_request, question, complaint"),
      priority: Priority(),
      sentiment: Enum(WRITER_SENTIMENTS, "the sender's mood"),
      language: LanguageCode(),
      entities: Entities(),
      summary: Type.String({ description: "one or two sentences on what the email says and asks" }),
    },
    "analysis of one email",
  );
const result = resultFor({});

export default defineFunction({
  name: "email-analyze",
  summary: "Analyze an email: category, intent, priority, sentiment, language, entities and summary",
  tags: ["email"],
  request,
  result,
  cost: 2,
  rateClass: "heavy",
  resultSchemaFor: resultFor,
  pins: (req) => ({ category: req.allowed_categories, intent: req.allowed_intents }),
  role: "You analyze incoming emails for a support and sales inbox.",
  brief: (req) => ({
    rules: [
      "priority: critical for outages, security or legal threats; high for blocked customers, payment failures or angry senders; low for newsletters and FYIs.",
      "entities: only values written in the email (names, order numbers, amounts, dates, products), keyed by a short snake_case name.",
      "summary and entities are written in the email's language.",
    ],
    instructions: req.custom_instructions,
    inputs: emailInputs(req),
  }),
  local: (req) => {
    const text = withSubject(req.email_content, req.subject);
    if (!offlineReadable(text)) return foreignEmail(req, text);
    const { intent } = builtinIntent(text);
    const category = labelFor(text, req.allowed_categories, () => categoryOfIntent(intent));
    if (category === null) return decline(req, "allowed_categories", "no offline cue fits any of these categories");
    const intentLabel = labelFor(text, req.allowed_intents, () => intent);
    if (intentLabel === null) return decline(req, "allowed_intents", "no offline cue fits any of these intents");
    const sentiment = writerSentiment(text);
    return {
      category,
      intent: intentLabel,
      priority: priorityOf(text, sentiment).level,
      sentiment,
      language: languageOf(req.email_content),
      entities: entitiesOf(req.email_content),
      summary: gist(req.email_content, 2),
    };
  },
  example: {
    request: {
      email_content:
        "Hello, I was charged twice for invoice INV-2291 this month. Please refund the duplicate payment of $49 as soon as possible.",
      subject: "Double charge",
      allowed_categories: ["billing", "technical", "sales", "other"],
      allowed_intents: ["refund_request", "question", "complaint", "cancellation"],
    },
    result: {
      category: "billing",
      intent: "refund_request",
      priority: "high",
      sentiment: "frustrated",
      language: "en",
      entities: { invoice_number: "INV-2291", amount: "$49" },
      summary: "The customer was charged twice for invoice INV-2291 and asks for a refund of the $49 duplicate.",
    },
  },
});

/**
 * An email the engine's English cues cannot read: what it can honestly give without them. The
 * language, entities (patterns: amounts, dates, references, addresses), an extractive summary,
 * priority from urgency words and deadlines in seven languages, and the mood from the review
 * lexicon of those languages. Category and intent would be guesses, so they say so: "general"
 * and "unknown". With allowed lists to choose from, the engine cannot pick and declines.
 */
function foreignEmail(req: Req, text: string): Static<typeof result> | null {
  if (req.allowed_categories?.length || req.allowed_intents?.length) return declineLanguage(req, text);
  const sentiment = writerSentiment(text);
  return {
    category: "general",
    intent: "unknown",
    priority: priorityOf(text, sentiment).level,
    sentiment,
    language: languageOf(req.email_content),
    entities: entitiesOf(req.email_content),
    summary: gist(req.email_content, 2),
  };
}
