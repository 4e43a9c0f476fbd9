import { Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import { categoryOfIntent, entitiesOf, gist, languageOf, offlineReadable, reportsServerFailure } from "./offline/signals";
import { readTicket } from "./offline/tickets";
import { noteLowConfidence } from "./offline-reach";
import { ticketInputs, writtenIn } from "./prompt";
import {
  Entities,
  Enum,
  InputLanguage,
  LanguageCode,
  Priority,
  Result,
  Strings,
  Text,
  ticketContextFields,
  WRITER_SENTIMENTS,
} from "./schemas";

const request = Type.Object({
  ticket: Text("the ticket text"),
  language: InputLanguage("ticket"),
  ...ticketContextFields(),
});

const result = Result(
  {
    category: Type.String({ description: "what the ticket is about: billing, bug, account, how_to, feature_request..." }),
    intent: Type.String({ description: "what the customer wants: refund, fix, information, cancellation..." }),
    priority: Priority(),
    sentiment: Enum(WRITER_SENTIMENTS, "the customer's mood"),
    language: LanguageCode(),
    summary: Type.String({ description: "the problem and the ask in one or two sentences" }),
    entities: Entities(),
    tags: Strings("short labels for search and reporting", 10),
    escalate: Type.Boolean({
      description: "true for outages, security or legal issues, data loss, or a customer about to leave",
    }),
  },
  "analysis of one support ticket",
);

export default defineFunction({
  name: "ticket-analyze",
  summary: "Analyze a support ticket: category, intent, priority, sentiment, entities and escalation",
  tags: ["tickets"],
  request,
  result,
  cost: 2,
  role: "You triage customer support tickets.",
  brief: (req) => ({
    rules: [
      writtenIn("ticket", req.language),
      "Read the previous messages and the customer, product and business context when given: a repeated problem or a long wait raises priority.",
      "priority: critical for outages, security incidents and data loss; high when the customer is blocked or threatens to leave.",
      "entities: only values written in the ticket (order numbers, error codes, product names, amounts), keyed by a short snake_case name.",
    ],
    inputs: ticketInputs(req, req.ticket),
  }),
  local: (req) => {
    const t = readTicket(req);
    let intent = t.intent;
    if (!offlineReadable(req.ticket)) {
      // the intent cues are English: another language gets "unknown", unless a status code or error
      // name says it is a technical issue; the urgency cues and deadlines cover seven languages
      intent = reportsServerFailure(t.text) ? "technical_issue" : "unknown";
      noteLowConfidence(req, intent === "unknown" ? ["category", "intent", "sentiment", "tags"] : ["sentiment", "tags"]);
    }
    return {
      category: intent === "unknown" ? "general" : categoryOfIntent(intent),
      intent,
      priority: t.priority.level,
      sentiment: t.sentiment,
      language: languageOf(req.ticket, req.language),
      summary: gist(req.ticket, 2),
      entities: entitiesOf(req.ticket),
      tags: t.tags,
      escalate: t.escalate,
    };
  },
  example: {
    request: {
      ticket: "The export button returns error E-503 every time since yesterday's update. This is the third time I'm writing!",
      subject: "Export broken",
      previous_messages: [{ role: "customer", content: "Export fails with E-503." }],
    },
    result: {
      category: "bug",
      intent: "fix",
      priority: "high",
      sentiment: "frustrated",
      language: "en",
      summary: "Export fails with error E-503 since the last update; the customer has reported it three times.",
      entities: { error_code: "E-503", feature: "export" },
      tags: ["export", "regression", "repeat-contact"],
      escalate: true,
    },
  },
});
