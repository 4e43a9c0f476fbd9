import { Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import { option, replyVoice } from "./prompt";
import { BusinessName, CustomInstructions, LanguageCode, Rating, ReplyLanguage, Result, Short, Text, Tone } from "./schemas";

const request = Type.Object({
  review: Text("the review to answer"),
  rating: Rating(),
  business_name: BusinessName(),
  customer_name: Type.Optional(Short("the reviewer's name, for the greeting")),
  tone: Tone("warm, formal, apologetic"),
  language: ReplyLanguage("review"),
  instructions: CustomInstructions(),
});

const result = Result(
  {
    reply: Type.String({ minLength: 1, description: "the public reply, ready to post" }),
    language: LanguageCode(),
  },
  "a public reply to a review",
);

export default defineFunction({
  name: "review-reply",
  summary: "Write a public reply to a customer review",
  tags: ["reviews"],
  request,
  result,
  cost: 2,
  role: "You write public replies to customer reviews on behalf of the business.",
  brief: (req) => ({
    rules: [
      ...replyVoice(req, "review", "warm and professional", [
        option("Greet the reviewer as", req.customer_name),
        option("The reviewer's star rating", req.rating),
      ]),
      "Thank the reviewer, answer the points they raise, and for criticism apologise once and offer a way to follow up privately.",
      "Never argue, never reveal private customer data, never promise refunds or compensation the instructions do not allow.",
      "Keep it short: two to five sentences.",
    ],
    instructions: req.instructions,
    inputs: [["review", req.review]],
  }),
  example: {
    request: {
      review: "Lovely stay, but the wifi kept dropping.",
      rating: 4,
      business_name: "Harbor View Hotel",
      customer_name: "Alex",
    },
    result: {
      reply:
        "Hi Alex, thank you for staying with us and for your kind words! We're sorry the wifi let you down; our team is upgrading the network this month. We hope to welcome you back soon. - Harbor View Hotel",
      language: "en",
    },
  },
});
