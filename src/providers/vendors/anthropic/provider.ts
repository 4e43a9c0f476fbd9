import type { ProviderConfig } from "../../../config";
import { defaultFeatures, mapSdkError, type ProxyTransport } from "../../openai-like";
import {
  type CompletionRequest,
  type CompletionResult,
  contextLengthError,
  type Feature,
  isObject,
  type MessagesRequest,
  type Provider,
  ProviderError,
  type ProxyApi,
  type ProxyRequest,
} from "../../types";
import { type AdapterOptions, baseUrlOf, type VendorDescriptor } from "../descriptor";
import { isFormatted, toolName, toolSchema } from "../translating";
import { proxyTransport } from "../transport";
import { chatChunks } from "./stream";
import { chatFromMessage, DEFAULT_MAX_TOKENS, finishReason, messagesFromChat, unservable } from "./translate";

type Json = Record<string, unknown>;

/** Anthropic's wording of a prompt longer than the model's context window (a 400 invalid_request_error). */
const CONTEXT_LENGTH = /prompt is too long|exceed(?:s|ed)? (?:the )?context|context (?:window|limit|length)/i;
/** A request field path ("messages.0.content"), never a host or a file. */
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_.[\]-]{0,99}$/;

/**
 * A function call's messages as turns: system messages go to `system`, an empty one (a repair of
 * an empty answer) is left out, and consecutive turns of one role are merged, as Anthropic wants.
 */
function turns(messages: CompletionRequest["messages"]): { role: string; content: string }[] {
  const out: { role: string; content: string }[] = [];
  for (const m of messages) {
    if (m.role === "system" || m.content === "") continue;
    const last = out[out.length - 1];
    if (last?.role === m.role) last.content += `\n\n${m.content}`;
    else out.push({ role: m.role, content: m.content });
  }
  return out;
}

/**
 * Type `anthropic`: Anthropic's Messages API over plain HTTP (vendors/transport.ts), the key in
 * `x-api-key`. Function calls ask for their structured answer by forced tool use; the `/v1`
 * chat completions are translated both ways (translate.ts, stream.ts); `/v1/responses` reaches it
 * through chat completions (responses-via-chat.ts); it has no embeddings. `messages` passes an
 * Anthropic request through as sent (the inbound `/v1/messages`).
 */
export class AnthropicProvider implements Provider {
  readonly name: string;
  readonly type: string;
  readonly features: ReadonlySet<Feature>;
  readonly modelPatterns: readonly string[];
  private readonly transport: ProxyTransport;
  /** whether Anthropic's 4xx messages reach /v1 clients (its own cloud: yes; a proxy in front of it may say otherwise) */
  private readonly passMessages: boolean;
  private models?: readonly string[];

  constructor(
    private readonly config: ProviderConfig,
    opts: AdapterOptions,
    private readonly vendor: VendorDescriptor,
  ) {
    this.name = config.name;
    this.type = config.type;
    this.features = defaultFeatures(config, vendor);
    this.modelPatterns = config.model_patterns ?? (vendor.catalog === "vendor" ? ["*"] : []);
    this.passMessages = config.pass_upstream_messages ?? vendor.catalog === "vendor";
    // the base URL as Anthropic's SDK takes it (no /v1); there is no SDK transport
    const base = baseUrlOf(config, vendor).replace(/\/+$/, "").replace(/\/v1$/, "");
    this.transport = proxyTransport(config, vendor, `${base}/v1`, { ...opts, transport: "http" }) as ProxyTransport;
  }

  modelFor(fn: string): string {
    return this.config.models?.[fn] ?? this.config.default_model ?? this.vendor.models.function;
  }

  listModels(): readonly string[] {
    this.models ??= [
      ...new Set([this.config.default_model ?? this.vendor.models.function, ...Object.values(this.config.models ?? {})]),
    ];
    return this.models;
  }

  untranslatable(api: ProxyApi, body: Record<string, unknown>): string | null {
    return api === "chat/completions" ? unservable(body) : api;
  }

  /** One POST to the Messages API (or count_tokens): the parsed answer, or with `stream` its events. */
  private send(
    path: string,
    body: Json | string,
    opts: { signal?: AbortSignal; headers?: Record<string, string> },
    stream: boolean,
  ) {
    const o = { signal: opts.signal, headers: opts.headers, stream };
    const postText = this.transport.postText;
    if (typeof body === "string" && postText) return postText.call(this.transport, path, body, o);
    return this.transport.post(path, typeof body === "string" ? JSON.parse(body) : body, o);
  }

  /**
   * A failure as the router's ProviderError: context length named, 4xx messages (and those of an
   * error event inside a stream) withheld unless they pass.
   */
  private error(err: unknown, signal?: AbortSignal): ProviderError {
    const e = mapSdkError(err, this.transport.errors, signal);
    if ((e.kind !== "status" && e.kind !== "upstream_error") || !e.upstream) return e;
    if ((e.status === 400 || e.status === 413) && CONTEXT_LENGTH.test(e.upstream.message)) {
      return contextLengthError(e.upstream.message, e.status, e.upstream);
    }
    if (this.passMessages) return e;
    const type = e.upstream.type ? ` ${e.upstream.type}` : "";
    const message =
      e.kind === "upstream_error"
        ? `provider "${this.name}" sent an error event (${e.upstream.type ?? "error"})`
        : `provider "${this.name}" rejected the request (${e.status ?? "error"}${type})`;
    const param = e.upstream.param !== null && FIELD_PATH.test(e.upstream.param) ? e.upstream.param : null;
    return new ProviderError(e.kind, message, e.status, e.retryAfterMs, { ...e.upstream, message, param });
  }

  /** A plain answer that is a Message (an object with content blocks), else the malformed-answer failure. */
  private static message(answer: unknown): Json {
    if (!isObject(answer) || !Array.isArray(answer.content))
      throw new ProviderError("connection", "upstream sent a malformed response");
    return answer;
  }

  async proxy(req: ProxyRequest): Promise<unknown> {
    if (req.api !== "chat/completions") throw new ProviderError("unsupported", `${req.api} is not served by this provider`);
    const body = messagesFromChat(req.body, String(req.body.model ?? this.modelFor("chat-completions")));
    let answer: unknown;
    try {
      answer = await this.send("/messages", body, req, false);
    } catch (err) {
      throw this.error(err, req.signal);
    }
    return chatFromMessage(AnthropicProvider.message(answer), isFormatted(req.body));
  }

  async *proxyStream(req: ProxyRequest): AsyncIterable<unknown> {
    if (req.api !== "chat/completions") throw new ProviderError("unsupported", `${req.api} is not served by this provider`);
    const model = String(req.body.model ?? this.modelFor("chat-completions"));
    const body = { ...messagesFromChat(req.body, model), stream: true };
    const options = req.body.stream_options;
    const includeUsage = isObject(options) && options.include_usage === true;
    try {
      const events = (await this.send("/messages", body, req, true)) as AsyncIterable<unknown>;
      yield* chatChunks(events, { model, formatted: isFormatted(req.body), includeUsage });
    } catch (err) {
      throw this.error(err, req.signal);
    }
  }

  async messages(req: MessagesRequest): Promise<unknown> {
    try {
      return AnthropicProvider.message(await this.send("/messages", req.text ?? req.body, req, false));
    } catch (err) {
      throw this.error(err, req.signal);
    }
  }

  async countTokens(req: MessagesRequest): Promise<unknown> {
    let answer: unknown;
    try {
      answer = await this.send("/messages/count_tokens", req.text ?? req.body, req, false);
    } catch (err) {
      throw this.error(err, req.signal);
    }
    if (!isObject(answer) || typeof answer.input_tokens !== "number")
      throw new ProviderError("connection", "upstream sent a malformed response");
    return answer;
  }

  async *messagesStream(req: MessagesRequest): AsyncIterable<unknown> {
    let stopped = false;
    try {
      const events = (await this.send("/messages", req.text ?? req.body, req, true)) as AsyncIterable<unknown>;
      for await (const e of events) {
        if (isObject(e) && e.type === "message_stop") stopped = true;
        yield e;
      }
    } catch (err) {
      throw this.error(err, req.signal);
    }
    if (!stopped) throw new ProviderError("connection", "upstream stream ended early");
  }

  /** A function call: its result schema as the input_schema of a tool the model is made to use. */
  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const model = req.model ?? this.modelFor(req.fn);
    const system = req.messages.filter((m) => m.role === "system").map((m) => m.content);
    const body: Json = {
      model,
      max_tokens: req.maxTokens ?? DEFAULT_MAX_TOKENS,
      ...(system.length > 0 ? { system: system.join("\n\n") } : {}),
      messages: turns(req.messages),
    };
    if (req.temperature !== undefined) body.temperature = req.temperature;
    const tool = req.schema ? { name: toolName(req.schema.name), ...toolSchema(req.schema.schema) } : undefined;
    if (tool) {
      body.tools = [{ name: tool.name, input_schema: tool.schema }];
      body.tool_choice = { type: "tool", name: tool.name };
    }
    let answer: Json;
    try {
      answer = AnthropicProvider.message(await this.send("/messages", body, req, false));
    } catch (err) {
      throw this.error(err, req.signal);
    }
    const blocks = answer.content as Json[];
    const use = tool && blocks.find((b) => b.type === "tool_use" && b.name === tool.name);
    const input = use && (tool.wrapped && isObject(use.input) ? use.input.value : use.input);
    // no tool use (cut at max_tokens): its text, which the function's validation then judges
    const text = use
      ? JSON.stringify(input ?? null)
      : blocks.map((b) => (b.type === "text" && typeof b.text === "string" ? b.text : "")).join("");
    const usage = isObject(answer.usage) ? answer.usage : {};
    const n = (v: unknown) => (typeof v === "number" ? v : 0);
    return {
      text,
      model: typeof answer.model === "string" ? answer.model : model,
      usage: {
        prompt_tokens: n(usage.input_tokens) + n(usage.cache_read_input_tokens) + n(usage.cache_creation_input_tokens),
        completion_tokens: n(usage.output_tokens),
      },
      finishReason: finishReason(answer.stop_reason, tool !== undefined),
    };
  }
}
