import { type Static, Type } from "@sinclair/typebox";
import { invalidRequest } from "../errors";
import { defineFunction } from "./define";
import { factsText, option, replyVoice, ticketInputs } from "./prompt";
import {
  BusinessName,
  CustomInstructions,
  Enum,
  KnowledgeBase,
  ReplyLanguage,
  Result,
  Short,
  ticketContextFields,
} from "./schemas";

export const TICKET_TONES = ["empathetic", "technical", "friendly", "concise"] as const;

const request = Type.Object({
  ticket: Type.Optional(Type.String({ minLength: 1, description: "the ticket text (required unless ticket_body is sent)" })),
  ticket_body: Type.Optional(Type.String({ minLength: 1, description: "page variant of ticket: the ticket or email text" })),
  knowledge_base: KnowledgeBase(),
  agent_name: Type.Optional(Short("name for the closing sign-off")),
  customer_name: Type.Optional(Short("the customer's name, for the greeting")),
  business_name: BusinessName(),
  tone: Type.Optional(Enum(TICKET_TONES, "tone of the reply")),
  language: ReplyLanguage("ticket"),
  instructions: CustomInstructions(),
  ...ticketContextFields(),
});
type Req = Static<typeof request>;

const result = Result(
  {
    reply: Type.String({ minLength: 1, description: "the reply to the customer, greeting and sign-off included, ready to send" }),
  },
  "a reply to a support ticket",
);

/** The two published variants become one: the text is always in `ticket`. */
function normalize(req: Req): Req {
  const { ticket_body, ...rest } = req;
  if (ticket_body !== undefined && req.ticket !== undefined && ticket_body !== req.ticket) {
    throw invalidRequest("send the ticket text in ticket or in ticket_body, not both", "ticket_body");
  }
  const ticket = req.ticket ?? ticket_body;
  if (ticket === undefined) throw invalidRequest("ticket is required (ticket_body is accepted too)", "ticket");
  return { ...rest, ticket };
}

export default defineFunction({
  name: "ticket-reply",
  summary: "Write a reply to a support ticket, grounded in the given knowledge base",
  tags: ["tickets"],
  request,
  result,
  cost: 2,
  rateClass: "bulk",
  normalize,
  role: "You are a customer support agent replying to a ticket.",
  brief: (req) => ({
    rules: [
      ...replyVoice(req, "ticket", "empathetic", [
        option("Greet the customer as", req.customer_name),
        option("Sign off as", req.agent_name),
      ]),
      req.knowledge_base?.length
        ? "Ground every statement in <knowledge_base>; when it does not cover the question, say you are checking with the team instead of guessing."
        : "Do not invent policies, prices, dates or promises.",
      "Take the previous messages into account: do not repeat what was already said or asked.",
      "Give clear next steps.",
    ],
    instructions: req.instructions,
    inputs: [["knowledge_base", factsText(req.knowledge_base)], ...ticketInputs(req, req.ticket ?? req.ticket_body ?? "")],
  }),
  example: {
    request: {
      ticket: "I was charged twice for my March subscription. Can I get one refunded?",
      customer_name: "Priya",
      agent_name: "Sam",
      tone: "empathetic",
      knowledge_base: ["Duplicate charges are refunded within 3-5 business days after confirmation."],
    },
    result: {
      reply:
        "Hi Priya,\n\nI'm sorry about the double charge, that's frustrating. I've flagged the duplicate March payment for a refund; it will reach your account within 3-5 business days. I'll let you know as soon as it's processed.\n\nBest,\nSam",
    },
  },
});
