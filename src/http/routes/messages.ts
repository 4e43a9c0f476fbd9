import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppDeps } from "../deps";
import type { Edge } from "../edge";
import { edgePlugin } from "../edge-plugin";
import { MessagesStreamWire } from "../messages-stream";
import { chatFromMessages, MESSAGES_FN, messageFromChat, messageId } from "../messages-translate";
import { type Inbound, ProxyPipeline } from "../proxy-pipeline";
import type { RequestState } from "../state";

const Loose = (description: string) => T.Object({}, { additionalProperties: true, description });

type Ctx = { request: Request; state: RequestState } & Pick<Edge, "auth"> & { payload: Edge["body"] };

/**
 * The Anthropic Messages API (docs/messages.md): `POST /v1/messages` and
 * `POST /v1/messages/count_tokens`, authenticated by a gateway key (`x-api-key`, as Anthropic's
 * clients send it, or `Authorization: Bearer`; `anthropic-version` is not read). A request is
 * translated into a Chat Completions body (http/messages-translate.ts) and handed to the /v1
 * pipeline, whose admission stage, prices, hold, charge, fallback, cache, guardrails, request log
 * and traces it runs under the usage name `messages`; the answer and the stream are translated
 * back (http/messages-stream.ts), refusals are Anthropic's (http/messages-errors.ts).
 *
 * This is where a pass-through to a provider that speaks the Messages API itself would branch:
 * today every provider is reached through the translation.
 */
export function messagesRoutes(deps: AppDeps) {
  const proxy = new ProxyPipeline(deps);

  const create = ({ request, state, auth, payload }: Ctx) => {
    state.headers["request-id"] = state.requestId;
    const chat = chatFromMessages(payload);
    const ctx = { id: messageId(state.requestId), model: chat.model as string, stopSequences: payload.stop_sequences };
    const inbound: Inbound = {
      fn: MESSAGES_FN,
      // the restored text is in `json` only (`parsed` may be the parse from before the guardrails' restore)
      answer: (out, charged) => JSON.stringify(messageFromChat(JSON.parse(out.json), { ...ctx, charged })),
      wire: (promptTokens) => new MessagesStreamWire({ ...ctx, promptTokens }),
    };
    return proxy.handle("chat/completions", request, state, { auth, body: chat }, inbound);
  };

  // the count a call of this body is held for, with its checks and the key's model policy: free, no provider called
  const countTokens = ({ request, state, auth, payload }: Ctx) => {
    state.headers["request-id"] = state.requestId;
    const chat = chatFromMessages(payload, true);
    const input = proxy.inputBound("chat/completions", request, state, { auth, body: chat });
    state.status = 200;
    return new Response(JSON.stringify({ input_tokens: input }), {
      headers: { "content-type": "application/json", ...state.headers },
    });
  };

  const options = (summary: string, description: string) => ({
    key: { fn: MESSAGES_FN, body: true },
    parse: "none" as const,
    detail: {
      tags: ["Conversation"],
      summary,
      requestBody: {
        required: true,
        content: { "application/json": { schema: Loose(description) as unknown as Record<string, never> } },
      },
    },
  });

  return new Elysia({ name: "messages" })
    .use(edgePlugin(deps))
    .post(
      "/v1/messages",
      create,
      options(
        "Anthropic Messages API (plain and stream: true), translated to the configured providers; priced per token (docs/messages.md)",
        "An Anthropic Messages request: model, max_tokens, messages, system, tools, tool_choice, stop_sequences, temperature, top_p, metadata, stream",
      ),
    )
    .post(
      "/v1/messages/count_tokens",
      countTokens,
      options(
        "The input tokens a /v1/messages call of this body is held for; free, no provider called (docs/messages.md)",
        "An Anthropic count_tokens request: model, messages, system, tools, tool_choice",
      ),
    );
}
