import { type Static, Type } from "@sinclair/typebox";
import { invalidRequest } from "../errors";
import { defineFunction } from "./define";
import { bullets, factsText, languageRule, option } from "./prompt";
import { Context, KnowledgeBase, Model, Result, Short, Text, Tone } from "./schemas";

const request = Type.Object({
  email_text: Type.Optional(Text("the email to answer (required unless email_content is sent)")),
  email_content: Type.Optional(Text("the name the other email functions give the email: accepted for email_text")),
  knowledge_base: KnowledgeBase(),
  rules: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { maxItems: 50, description: "rules the reply must follow" }),
  ),
  tone: Tone("friendly, formal, apologetic"),
  sender_name: Type.Optional(Short("who signs the reply")),
  recipient_name: Type.Optional(Short("who the reply is addressed to")),
  context: Context("background for the reply: the business, the customer, the case"),
  model: Model(),
});

const result = Result(
  {
    subject: Type.String({ description: "subject line for the reply" }),
    reply: Type.String({ minLength: 1, description: "the reply body, greeting and sign-off included, ready to send" }),
  },
  "a drafted email reply",
);

type Req = Static<typeof request>;

/**
 * The email is `email_text` here (the spec's name) and `email_content` in email-analyze,
 * email-workflow and email-classification: either is taken, and it is always in `email_text` after.
 */
function normalize(req: Req): Req {
  const { email_content, ...rest } = req;
  if (email_content !== undefined && req.email_text !== undefined && email_content !== req.email_text)
    throw invalidRequest("send the email in email_text or in email_content, not both", "email_content");
  const email_text = req.email_text ?? email_content;
  if (email_text === undefined) throw invalidRequest("email_text is required (email_content is accepted too)", "email_text");
  return { ...rest, email_text };
}

export default defineFunction({
  name: "email-reply",
  summary: "Draft a reply to an email",
  tags: ["email"],
  request,
  result,
  cost: 2,
  normalize,
  role: "You write replies to emails on behalf of the recipient of the email.",
  brief: (req) => ({
    rules: [
      "Answer every question and request in the email; do not invent facts, prices, dates or promises.",
      req.knowledge_base?.length &&
        "Use the facts in <knowledge_base> where they apply and never contradict them; when they do not answer a question, say the team will follow up.",
      option("Tone", req.tone ?? "professional and friendly"),
      option("Address the reply to", req.recipient_name),
      option("Sign the reply as", req.sender_name),
      req.rules?.length && `The reply must follow these rules:\n${bullets(req.rules)}`,
      languageRule("email"),
    ],
    inputs: [
      ["context", req.context],
      ["knowledge_base", factsText(req.knowledge_base)],
      ["email", req.email_text],
    ],
  }),
  example: {
    request: {
      email_text: "Hi, I ordered a blue jacket last week (order #4471) but it hasn't arrived. Can you check? Thanks, Maria",
      knowledge_base: ["Standard shipping takes 5-7 business days.", "Tracking links are sent by email when an order ships."],
      tone: "friendly",
      sender_name: "Tom from Northwind Support",
      recipient_name: "Maria",
    },
    result: {
      subject: "Re: Your order #4471",
      reply:
        "Hi Maria,\n\nThanks for reaching out. Standard shipping takes 5-7 business days, so your jacket should arrive shortly; the tracking link was sent to your email when the order shipped. If it hasn't arrived by the end of the week, just reply and we'll look into it right away.\n\nBest regards,\nTom from Northwind Support",
    },
  },
});
