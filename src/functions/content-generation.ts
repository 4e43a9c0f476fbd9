import { Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import { option } from "./prompt";
import { Model, Result, Short, Text, Tone } from "./schemas";

const request = Type.Object({
  prompt: Text("what to write: topic, purpose, key points"),
  tone: Tone("persuasive, playful, formal", "tone"),
  format: Type.Optional(
    Short("what kind of text: blog_post, product_description, social_post, email, ad_copy, markdown...", 100),
  ),
  audience: Type.Optional(Short("who will read it", 500)),
  model: Model(),
  provider: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: "^[A-Za-z0-9_.-]+$",
      description: "name of a configured provider to try first",
    }),
  ),
});

const result = Result(
  {
    title: Type.Optional(Type.String({ description: "a title or headline, when the format has one" })),
    content: Type.String({ minLength: 1, description: "the generated text, in the requested format" }),
  },
  "generated text",
);

export default defineFunction({
  name: "content-generation",
  summary: "Generate marketing or editorial text from a brief",
  tags: ["generation"],
  request,
  result,
  cost: 2,
  role: "You are a professional copywriter.",
  brief: (req) => ({
    rules: [
      option("Format", req.format),
      option("Tone", req.tone),
      option("Audience", req.audience),
      "Follow the brief; do not invent statistics, quotes, prices or customer names.",
      "Write in the language of the brief unless it asks for another.",
    ],
    inputs: [["brief", req.prompt]],
  }),
  example: {
    request: {
      prompt: "Announce our new recycled-material running shoe, the Stride Eco, available from May 1.",
      tone: "upbeat",
      format: "social_post",
      audience: "runners who care about sustainability",
    },
    result: {
      content: "Meet the Stride Eco: every pair is made from recycled materials, built for your daily miles. Lace up from May 1!",
    },
  },
});
