import { Elysia } from "elysia";
import { isObject } from "../../providers/types";
import type { AppDeps } from "../deps";
import { edgePlugin } from "../edge-plugin";
import { MessagesStreamWire } from "../messages-stream";
import { chatForPassThrough, MESSAGES_FN, messageFromChat, messageId } from "../messages-translate";
import { type Inbound, ProxyPipeline } from "../proxy-pipeline";
import { type ProxyRouteContext as Ctx, proxyPostOptions } from "./openai-compat";

/** An answer that is Anthropic's message already (never a chat completion, which has `object` instead). */
const isMessage = (v: unknown) => isObject(v) && v.type === "message";

/**
 * The Anthropic Messages API (docs/messages.md): `POST /v1/messages` and
 * `POST /v1/messages/count_tokens`, authenticated by a gateway key (`x-api-key`, as Anthropic's
 * clients send it, or `Authorization: Bearer`; `anthropic-version` is not read). A request is
 * translated into a Chat Completions body (http/messages-translate.ts) and handed to the /v1
 * pipeline, whose admission stage, prices, hold, charge, fallback, cache, guardrails, request log
 * and traces it runs under the usage name `messages`; the answer and the stream are translated
 * back (http/messages-stream.ts), refusals are Anthropic's (http/messages-errors.ts).
 *
 * A provider that speaks the Messages API itself (`anthropic`) is sent the client's body as sent
 * (its model the target's, redacted by the guardrails) and its answer or events come back as it
 * sent them (providers/chat.ts `native`); a fallback chain mixes both forms, one attempt each.
 */
export function messagesRoutes(deps: AppDeps) {
  const proxy = new ProxyPipeline(deps);

  const create = ({ request, state, auth, payload }: Ctx) => {
    state.headers["request-id"] = state.requestId;
    const { chat, untranslated } = chatForPassThrough(payload);
    const ctx = { id: messageId(state.requestId), model: chat.model as string, stopSequences: payload.stop_sequences };
    const inbound: Inbound = {
      fn: MESSAGES_FN,
      own: payload,
      untranslated,
      // the restored text is in `json` only (`parsed` may be the parse from before the guardrails' restore);
      // an answer in Anthropic's own shape (an `anthropic` provider's, or a cache hit of one) goes as it is
      answer: (out, charged) => {
        if (out.native) return out.json;
        const answer: unknown = JSON.parse(out.json);
        return isMessage(answer) ? out.json : JSON.stringify(messageFromChat(answer, { ...ctx, charged }));
      },
      wire: (promptTokens, native) => new MessagesStreamWire({ ...ctx, promptTokens, native }),
    };
    return proxy.handle("chat/completions", request, state, { auth, body: chat }, inbound);
  };

  // with the call's checks and the key's model policy, free: an `anthropic` first provider's own
  // count (exact), else the count a call of this body is held for (an upper bound; no provider called)
  const countTokens = async ({ request, state, auth, payload }: Ctx) => {
    state.headers["request-id"] = state.requestId;
    const { chat, untranslated } = chatForPassThrough(payload, true);
    const input = await proxy.countInput(
      "chat/completions",
      request,
      state,
      { auth, body: chat },
      { own: payload, untranslated },
    );
    state.status = 200;
    return new Response(JSON.stringify({ input_tokens: input }), {
      headers: { "content-type": "application/json", ...state.headers },
    });
  };

  const options = (summary: string, description: string) => proxyPostOptions(MESSAGES_FN, summary, description);

  return new Elysia({ name: "messages" })
    .use(edgePlugin(deps))
    .post(
      "/v1/messages",
      create,
      options(
        "Anthropic Messages API (plain and stream: true), passed through to an anthropic provider, translated to the others; priced per token (docs/messages.md)",
        "An Anthropic Messages request: model, max_tokens, messages, system, tools, tool_choice, stop_sequences, temperature, top_p, metadata, stream",
      ),
    )
    .post(
      "/v1/messages/count_tokens",
      countTokens,
      options(
        "The input tokens of a /v1/messages call of this body: an anthropic first provider's own count, else the count the call is held for; free (docs/messages.md)",
        "An Anthropic count_tokens request: model, messages, system, tools, tool_choice",
      ),
    );
}
