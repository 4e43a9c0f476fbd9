import { type Static, Type } from "@sinclair/typebox";
import { invalidRequest } from "../errors";
import type { ChatMessage } from "../providers/types";
import { defineFunction } from "./define";
import { systemText } from "./prompt";
import { ChatTurn, Model, Result } from "./schemas";

const request = Type.Object({
  message: Type.Optional(
    Type.String({ minLength: 1, description: "the user text to answer (required unless messages is sent)" }),
  ),
  conversation: Type.Optional(Type.Array(ChatTurn, { maxItems: 500, description: "previous turns, oldest first" })),
  messages: Type.Optional(
    Type.Array(ChatTurn, {
      minItems: 1,
      maxItems: 500,
      description: "variant: the whole conversation, oldest first, instead of message and conversation",
    }),
  ),
  system_prompt: Type.Optional(Type.String({ description: "persona or grounding instructions" })),
  safe_mode: Type.Optional(Type.Boolean({ default: true, description: "enforces safety and content filtering; default true" })),
  model: Model(),
});
type Req = Static<typeof request>;

const result = Result({ message: Type.String({ description: "the assistant reply" }) }, "the assistant's next turn");

/** Both published variants become `messages` (the whole conversation, the new user turn last). */
function normalize(req: Req): Req {
  const { message, conversation, ...rest } = req;
  const safe_mode = req.safe_mode ?? true;
  if (req.messages) {
    if (message !== undefined || conversation !== undefined) {
      throw invalidRequest("send message (with conversation) or messages, not both", "messages");
    }
    if (!req.messages.some((t) => t.role === "user")) throw invalidRequest("messages needs at least one user turn", "messages");
    return { ...rest, safe_mode };
  }
  if (message === undefined) throw invalidRequest("message is required (or messages, the whole conversation)", "message");
  return { ...rest, safe_mode, messages: [...(conversation ?? []), { role: "user", content: message }] };
}

const SAFE_MODE =
  "Safe mode is on: decline, briefly and politely, anything sexual involving minors, hate, harassment, self-harm or violence instructions, weapons, malware or other clearly illegal help; keep other answers free of explicit content.";

function prompt(raw: Req): ChatMessage[] {
  const req = normalize(raw);
  const system = systemText({
    role: req.system_prompt || "You are a helpful, accurate assistant.",
    rules: [
      req.safe_mode ? SAFE_MODE : undefined,
      "Answer the last user turn, taking the whole conversation into account.",
      "Put your reply, as you would say it to the user, in the message field.",
    ],
    result,
  });
  return [{ role: "system", content: system }, ...(req.messages ?? [])];
}

export default defineFunction({
  name: "chat",
  summary: "Chat completion: the assistant's reply to a conversation",
  tags: ["conversation"],
  request,
  result,
  normalize,
  prompt,
  example: {
    request: {
      message: "And how long does it take?",
      conversation: [
        { role: "user", content: "Do you ship to Canada?" },
        { role: "assistant", content: "Yes, we ship to Canada." },
      ],
      system_prompt: "You are the assistant of Stride Shoes. Shipping to Canada takes 5-8 business days.",
    },
    result: { message: "Shipping to Canada takes 5 to 8 business days." },
  },
});
