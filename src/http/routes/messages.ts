import { Elysia } from "elysia";
import { GatewayError } from "../../errors";
import { isObject } from "../../providers/types";
import type { AppDeps } from "../deps";
import { edgePlugin } from "../edge-plugin";
import { MessagesStreamWire } from "../messages-stream";
import { chatForPassThrough, MESSAGES_FN, messageFromChat, messageId } from "../messages-translate";
import { type Inbound, ProxyPipeline } from "../proxy-pipeline";
import { type ProxyRouteContext as Ctx, proxyPostOptions } from "./openai-compat";

/** One name of an `anthropic-beta` header's list ("interleaved-thinking-2025-05-14"). */
const BETA_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** The most names an `anthropic-beta` header may list. */
const MAX_BETAS = 32;

/**
 * The client's `anthropic-beta` header (Anthropic's opt-in features: `mcp_servers`, interleaved
 * thinking, files…), for a provider that speaks the Messages API: its names, each checked, joined
 * by ","; none when it has none. Before (walkthrough of 2026-12-06) the header was dropped, so a
 * body "as sent" that needed it was refused or quietly done without the feature upstream.
 */
function betaHeaders(request: Request): Record<string, string> | undefined {
  const raw = request.headers.get("anthropic-beta");
  if (raw === null || raw.trim() === "") return undefined;
  const names = raw.split(",").map((n) => n.trim());
  if (names.length > MAX_BETAS || !names.every((n) => BETA_NAME.test(n)))
    throw new GatewayError(
      "invalid_request",
      `the anthropic-beta header must list 1 to ${MAX_BETAS} feature names (letters, digits, ".", "_", "-"), separated by commas`,
      { param: "anthropic-beta" },
    );
  return { "anthropic-beta": [...new Set(names)].join(",") };
}

/** An answer that is Anthropic's message already (never a chat completion, which has `object` instead). */
const isMessage = (v: unknown) => isObject(v) && v.type === "message";

/**
 * The Anthropic Messages API (docs/messages.md): `POST /v1/messages` and
 * `POST /v1/messages/count_tokens`, authenticated by a gateway key (`x-api-key`, as Anthropic's
 * clients send it, or `Authorization: Bearer`; `anthropic-version` is not read; `anthropic-beta` goes
 * with the body to an `anthropic` provider, never to a translation). A request is
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
      headers: betaHeaders(request),
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
      { own: payload, untranslated, headers: betaHeaders(request) },
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
