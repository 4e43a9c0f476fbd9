import { Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import { option, replyVoice } from "./prompt";
import { BusinessName, Context, CustomInstructions, LanguageCode, Platform, ReplyLanguage, Result, Text, Tone } from "./schemas";

const request = Type.Object({
  comment: Text("the comment to answer"),
  business_name: BusinessName(),
  business_context: Context("who the business is, what it sells, its policies"),
  post_context: Context("the post the comment answers"),
  product_context: Context("the product the comment is about"),
  platform: Platform("instagram, facebook, youtube, x, tiktok..."),
  tone: Tone("playful, professional"),
  language: ReplyLanguage("comment"),
  instructions: CustomInstructions(),
});

const result = Result(
  {
    reply: Type.String({ minLength: 1, description: "the public reply, ready to post" }),
    should_reply: Type.Boolean({
      description: "false when the comment is spam or abuse better hidden than answered; the reply is drafted anyway",
    }),
    language: LanguageCode(),
  },
  "a public reply to a social media comment",
);

export default defineFunction({
  name: "comment-reply",
  summary: "Write a reply to a social media comment",
  tags: ["comments"],
  request,
  result,
  cost: 2,
  role: "You reply to comments on a business's social media posts, as the business's community manager.",
  brief: (req) => ({
    rules: [
      ...replyVoice(req, "comment", "friendly and human", [option("Platform (match its length and style)", req.platform)]),
      "Answer questions with facts from the business and product context only; when they lack the answer, invite the commenter to send a direct message.",
      "One to three sentences; no hashtags unless the comment uses them.",
    ],
    instructions: req.instructions,
    inputs: [
      ["business_context", req.business_context],
      ["product", req.product_context],
      ["post", req.post_context],
      ["comment", req.comment],
    ],
  }),
  example: {
    request: {
      comment: "Do you ship these to Canada?",
      business_name: "Stride Shoes",
      business_context: "We ship to the US, Canada and the EU.",
      platform: "instagram",
    },
    result: {
      reply: "Yes, we do! Shipping to Canada takes 5-8 business days. Happy strolling!",
      should_reply: true,
      language: "en",
    },
  },
});
