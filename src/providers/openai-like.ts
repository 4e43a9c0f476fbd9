import type { ProviderConfig, ProviderFeature } from "../config";
import { imageSizeFor } from "./image-sizes";
import { ModelLookup } from "./model-lookup";
import { fromStructured, type StructuredSchema, schemaInstruction, toStructured } from "./structured";
import {
  type ChatMessage,
  type CompletionRequest,
  type CompletionResult,
  type ImageRequest,
  type ImageResult,
  type JsonSchema,
  type Provider,
  ProviderError,
  type ProxyRequest,
  type UpstreamErrorBody,
} from "./types";
import type { VendorDescriptor } from "./vendors/descriptor";

/**
 * The part of an OpenAI-style SDK (openai, groq-sdk: both generated from the same template) that
 * the gateway uses, so one adapter serves both. vendors/openai/sdk.ts and vendors/groq/sdk.ts bind
 * the real clients to it; what differs by vendor comes from its descriptor (vendors/descriptor.ts).
 */
export type ResponseFormat =
  | { type: "json_schema"; json_schema: { name: string; strict: boolean; schema: JsonSchema } }
  | { type: "json_object" };

export interface ChatBody {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
  response_format?: ResponseFormat;
}

export interface ChatCompletionLike {
  model: string;
  choices: { message?: { content: string | null }; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
}

export interface RequestOpts {
  signal?: AbortSignal;
  /** extra headers of this call (traceparent) */
  headers?: Record<string, string>;
  /** the model the call is for, for a transport whose URL names it (Azure OpenAI's deployments) */
  model?: string;
}

/**
 * What the pass-through (`proxy`, `proxyStream`) needs of a transport: the SDK binding's raw
 * `post` is one, http-transport.ts's HttpTransport (Bun's fetch, no SDK) the other.
 */
export interface ProxyTransport {
  /** "sdk" or "http" (status and tests) */
  readonly kind: string;
  /** POST `path` (relative to the API's base URL): the parsed answer, or with `stream: true` its parsed events */
  post(path: string, body: Record<string, unknown>, opts: RequestOpts & { stream: boolean }): Promise<unknown>;
  /**
   * The same POST with the body already serialised, for a plain answer: the function path sends
   * its constant parts (the response_format) as text built once. Only the HTTP transport has it;
   * a provider whose transport has it sends function calls through it too, not through the SDK,
   * and the pass-through's bodies that go out as the client sent them (ProxyRequest.text).
   */
  postText?(path: string, body: string, opts: RequestOpts & { stream?: boolean }): Promise<unknown>;
  /** the classes of what `post` throws, for mapSdkError */
  readonly errors: SdkErrorClasses;
}

export interface SdkBinding {
  complete(body: ChatBody, opts: RequestOpts): Promise<ChatCompletionLike>;
  image?(req: { prompt: string; size: string; model: string; n: number }, opts: RequestOpts): Promise<ImageResult["images"]>;
  embed?(texts: string[], model: string, opts: RequestOpts): Promise<number[][]>;
  /** the SDK's raw POST (path relative to the base URL): the body goes out as given, the answer comes back parsed */
  post(path: string, body: Record<string, unknown>, opts: RequestOpts & { stream: boolean }): Promise<unknown>;
  /** the SDK's `models.retrieve` (`GET /models/{id}`): resolves when the model exists */
  retrieveModel?(id: string, opts: RequestOpts): Promise<unknown>;
  /** the ids of the SDK's `models.list` (`GET /models`) */
  listModelIds?(opts: RequestOpts): Promise<string[]>;
  /** the SDK's error classes, for mapping its errors to ProviderError */
  errors: SdkErrorClasses;
}

interface ApiErrorLike extends Error {
  status?: number;
  headers?: Headers;
  code?: string | null;
  param?: string | null;
  type?: string | null;
  error?: unknown;
}
type ErrorClass<T extends Error> = abstract new (...args: never[]) => T;
export interface SdkErrorClasses {
  APIError: ErrorClass<ApiErrorLike>;
  APIConnectionError: ErrorClass<Error>;
  APIConnectionTimeoutError: ErrorClass<Error>;
  APIUserAbortError: ErrorClass<Error>;
}

interface AdapterDefaults {
  model: string;
  imageModel?: string;
  embeddingModel?: string;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

const CONTEXT_LENGTH = /context[ _-]?length|maximum context|context window|too many tokens|reduce the length/i;
const RESPONSE_FORMAT = /response_format|json_schema|structured output/i;

function retryAfterMs(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get("retry-after-ms"));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const raw = headers.get("retry-after");
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Normalizes anything an SDK call throws. Messages never carry request or response bodies. */
export function mapSdkError(err: unknown, classes: SdkErrorClasses, signal?: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof classes.APIConnectionTimeoutError) return new ProviderError("timeout", "upstream timed out");
  if (err instanceof classes.APIUserAbortError || signal?.aborted) return new ProviderError("aborted", "request aborted");
  if (err instanceof classes.APIConnectionError) return new ProviderError("connection", "connection to upstream failed");
  if (err instanceof classes.APIError && typeof err.status === "number") {
    const status = err.status;
    const message = err.message.slice(0, 300);
    const upstream = upstreamError(err);
    if ((status === 400 || status === 413) && (err.code === "context_length_exceeded" || CONTEXT_LENGTH.test(message))) {
      return new ProviderError("context_length", "input exceeds the model's context length", status, undefined, upstream);
    }
    // the provider's content filter refused the request itself (Azure OpenAI's 400 content_filter)
    if (status === 400 && err.code === "content_filter")
      return new ProviderError(
        "content_filter",
        "the provider's content filter refused the request",
        status,
        undefined,
        upstream,
      );
    return new ProviderError("status", `upstream answered ${status}: ${message}`, status, retryAfterMs(err.headers), upstream);
  }
  // an error the upstream sent inside its stream (an `event: error`, a chunk with `error`): the SDKs'
  // APIError without a status. Its own type and message, never a broken connection (it was not)
  if (err instanceof classes.APIError) {
    const upstream = upstreamError(err);
    return new ProviderError(
      "upstream_error",
      `upstream sent an error event: ${upstream.message.slice(0, 300)}`,
      undefined,
      undefined,
      {
        ...upstream,
        message: upstream.message.slice(0, 300),
      },
    );
  }
  // A body that is not JSON (the SDK's JSON.parse): the server or a proxy in front of it is broken,
  // a health failure like a dropped connection (unlike model output that fails a schema)
  if (err instanceof SyntaxError) return new ProviderError("connection", "upstream sent a malformed response");
  // fetch/body errors outside the SDK's wrapping (socket reset while reading the body).
  // (never the error's class or message: they name the gateway's internals, and clients see this text)
  return new ProviderError("connection", "upstream connection failed");
}

const notFound = (e: ProviderError) => e.kind === "status" && e.status === 404;

/** A request field path ("messages[0].content"): what a `param` names, never a host or a file */
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_.[\]-]{0,99}$/;

const str = (v: unknown): string | null => (typeof v === "string" ? v : typeof v === "number" ? String(v) : null);

/** The upstream's error object (the SDK keeps the body's `error`), for clients that expect OpenAI's error shape. */
function upstreamError(err: ApiErrorLike): UpstreamErrorBody {
  const body = (typeof err.error === "object" && err.error !== null ? err.error : {}) as Record<string, unknown>;
  return {
    message: str(body.message) ?? err.message,
    type: str(body.type) ?? err.type ?? null,
    code: str(body.code) ?? err.code ?? null,
    param: str(body.param) ?? err.param ?? null,
  };
}

/** Features of an entry's API when the config names none: its vendor's (descriptor `features`). */
export function defaultFeatures(config: ProviderConfig, vendor: VendorDescriptor): ReadonlySet<ProviderFeature> {
  if (config.features) return new Set(config.features);
  const features = new Set<ProviderFeature>(vendor.features?.always ?? []);
  // a vendor's own cloud fetches URLs outside the operator's network; a self-hosted server would not
  const own = vendor.features?.ownHost;
  if (own && (!config.base_url || hostOf(config.base_url) === own)) features.add("remote_urls");
  if (config.embedding_model) features.add("embeddings");
  return features;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** A 400/422 that blames the response_format: the server has no json_schema support. */
function rejectsJsonSchema(err: ProviderError): boolean {
  return err.kind === "status" && (err.status === 400 || err.status === 422) && RESPONSE_FORMAT.test(err.message);
}

/** Provider over an OpenAI-style API: structured output with json_object fallback, images, embeddings, and the raw pass-through of the OpenAI-compatible endpoints. */
export class OpenAILikeProvider implements Provider {
  readonly name: string;
  readonly type: string;
  readonly image?: (req: ImageRequest) => Promise<ImageResult>;
  readonly embed?: (texts: string[], signal?: AbortSignal) => Promise<number[][]>;
  readonly features: ReadonlySet<ProviderFeature>;
  readonly enables?: Partial<Record<ProviderFeature, string>>;
  readonly modelPatterns: readonly string[];
  /** whether a 4xx's own message reaches /v1 clients (a self-hosted server's may name hosts, addresses, paths) */
  private readonly passMessages: boolean;
  /** models whose server rejected json_schema; their later calls go straight to json_object */
  private readonly jsonSchemaUnsupported = new Set<string>();

  /** what the pass-through goes through: the lean HTTP transport, or the SDK's own `post` */
  readonly transport: ProxyTransport;
  /** its models when the entry names none: the vendor's, else the entry's image and embedding models */
  private readonly defaults: AdapterDefaults;

  constructor(
    private readonly config: ProviderConfig,
    private readonly sdk: SdkBinding,
    private readonly vendor: VendorDescriptor,
    transport?: ProxyTransport,
  ) {
    this.transport = transport ?? { kind: "sdk", post: sdk.post, errors: sdk.errors };
    this.name = config.name;
    this.type = config.type;
    this.features = defaultFeatures(config, vendor);
    // an entry serves embeddings once it names a model for them (defaultFeatures)
    if (!this.features.has("embeddings")) this.enables = { embeddings: "give its [[providers]] entry an embedding_model" };
    // a vendor's catalog is its own (it answers an unknown model with its own 404 model_not_found, and
    // its messages are written for clients); a self-hosted server's is the operator's
    const vendorCatalog = vendor.catalog === "vendor";
    this.modelPatterns = config.model_patterns ?? (vendorCatalog ? ["*"] : []);
    this.passMessages = config.pass_upstream_messages ?? vendorCatalog;
    // a server without a default image model generates images only when the entry names one
    const defaults: AdapterDefaults = {
      model: vendor.models.function,
      imageModel: vendor.models.image ?? config.models?.["image-generation"],
      embeddingModel: vendor.models.embedding ?? config.embedding_model,
    };
    this.defaults = defaults;
    if (sdk.image && defaults.imageModel) this.image = (req) => this.generateImage(req);
    if (sdk.embed && defaults.embeddingModel) this.embed = (texts, signal) => this.embedTexts(texts, signal);
  }

  /** the provider's own answer to whether it serves a model, asked once per id and kept (model-lookup.ts) */
  private readonly lookup = new ModelLookup({
    retrieve: async (id, signal) => {
      if (!this.sdk.retrieveModel) return false;
      try {
        await this.sdk.retrieveModel(id, { signal });
        return true;
      } catch (err) {
        if (notFound(mapSdkError(err, this.sdk.errors, signal))) return false;
        throw this.lookupError(err, signal);
      }
    },
    list: async (signal) => {
      if (!this.sdk.listModelIds) return null;
      try {
        return await this.sdk.listModelIds({ signal });
      } catch (err) {
        if (notFound(mapSdkError(err, this.sdk.errors, signal))) return null;
        throw this.lookupError(err, signal);
      }
    },
  });

  /** Whether the provider itself serves `model` (a catalog of its own: GET /v1/models/{id}); rejects when it cannot be asked. */
  knowsModel(model: string): Promise<boolean> {
    return this.lookup.known(model);
  }

  /** the provider's failure to answer a model lookup, without its upstream message (it may name hosts) */
  private lookupError(err: unknown, signal: AbortSignal): ProviderError {
    const e = mapSdkError(err, this.sdk.errors, signal);
    return new ProviderError(
      e.kind,
      `provider "${this.name}" could not say which models it serves (${e.status ?? e.kind})`,
      e.status,
    );
  }

  supportsJsonSchema(model: string): boolean {
    return !this.jsonSchemaUnsupported.has(model);
  }

  modelFor(fn: string): string {
    if (fn === "embeddings")
      return this.config.models?.[fn] ?? this.config.embedding_model ?? this.defaults.embeddingModel ?? this.defaults.model;
    return this.config.models?.[fn] ?? this.config.default_model ?? this.defaults.model;
  }

  /** built once (the config does not change): routing asks for it on every /v1 call */
  private models?: readonly string[];

  listModels(): readonly string[] {
    if (!this.models) {
      const embedding = this.config.embedding_model ?? this.defaults.embeddingModel;
      this.models = [
        ...new Set([
          this.config.default_model ?? this.defaults.model,
          ...Object.values(this.config.models ?? {}),
          ...(embedding ? [embedding] : []),
        ]),
      ];
    }
    return this.models;
  }

  async proxy(req: ProxyRequest): Promise<unknown> {
    let answer: unknown;
    try {
      const opts = { signal: req.signal, headers: req.headers, stream: false, model: modelOf(req) };
      const postText = req.text === undefined ? undefined : this.transport.postText;
      answer = postText
        ? await postText.call(this.transport, `/${req.api}`, req.text as string, opts)
        : await this.transport.post(`/${req.api}`, req.body, opts);
    } catch (err) {
      throw this.proxyError(err, req.signal);
    }
    // Both transports give a 200 that is not JSON as its text, and an empty one as undefined (as the
    // SDKs do). Every /v1 answer is a JSON object: anything else is a broken server or a proxy's page
    // in front of it, never an answer to pass on (and charge for).
    if (typeof answer !== "object" || answer === null || Array.isArray(answer))
      throw new ProviderError("connection", "upstream sent a malformed response");
    return answer;
  }

  async *proxyStream(req: ProxyRequest): AsyncIterable<unknown> {
    let events: AsyncIterable<unknown>;
    try {
      const opts = { signal: req.signal, headers: req.headers, stream: true, model: modelOf(req) };
      const postText = req.text === undefined ? undefined : this.transport.postText;
      events = (await (postText
        ? postText.call(this.transport, `/${req.api}`, req.text as string, opts)
        : this.transport.post(`/${req.api}`, req.body, opts))) as AsyncIterable<unknown>;
    } catch (err) {
      throw this.proxyError(err, req.signal);
    }
    let finished = false;
    try {
      for await (const event of events) {
        if (!finished) finished = endsStream(req.api, event);
        yield event;
      }
    } catch (err) {
      throw this.proxyError(err, req.signal);
    }
    // The SDKs end quietly when the connection closes early; only a finish says the answer is whole.
    if (!finished) throw new ProviderError("connection", "upstream stream ended early");
  }

  /** An SDK error of the pass-through, its upstream message withheld unless this provider's messages pass (status, type, code stay). */
  private proxyError(err: unknown, signal: AbortSignal): ProviderError {
    const e = mapSdkError(err, this.transport.errors, signal);
    if (this.passMessages || !e.upstream) return e;
    const code = e.upstream.code ? ` ${e.upstream.code}` : "";
    const message =
      e.kind === "context_length"
        ? e.message
        : e.kind === "upstream_error"
          ? `provider "${this.name}" sent an error event (${e.upstream.type ?? "error"}${code})`
          : `provider "${this.name}" rejected the request (${e.status ?? "error"}${code})`;
    const param = e.upstream.param !== null && FIELD_PATH.test(e.upstream.param) ? e.upstream.param : null;
    return new ProviderError(e.kind, message, e.status, e.retryAfterMs, { ...e.upstream, message, param });
  }

  private body(req: CompletionRequest, structured: StructuredSchema | undefined, jsonSchema: boolean): ChatBody {
    const body: ChatBody = { model: req.model ?? this.modelFor(req.fn), messages: req.messages };
    if (req.temperature !== undefined) body.temperature = req.temperature;
    if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
    if (req.schema && structured) {
      if (jsonSchema) {
        body.response_format = {
          type: "json_schema",
          json_schema: { name: safeName(req.schema.name), strict: structured.strict, schema: structured.schema },
        };
      } else {
        const promptSchema = structured.wrapKey
          ? { type: "object", properties: { [structured.wrapKey]: req.schema.schema }, required: [structured.wrapKey] }
          : req.schema.schema;
        body.response_format = { type: "json_object" };
        body.messages = [{ role: "system", content: schemaInstruction(promptSchema) }, ...req.messages];
      }
    }
    return body;
  }

  /**
   * The body the SDK's `chat.completions.create` sent (`body()` and `stream: false`) as JSON text,
   * the same keys in the same order; a json_schema response_format (most of a function call's body
   * that is not the prompt) is serialised once per function schema and name, not per call.
   */
  private bodyText(req: CompletionRequest, structured: StructuredSchema | undefined, jsonSchema: boolean): string {
    if (!(req.schema && structured && jsonSchema))
      return JSON.stringify({ ...this.body(req, structured, jsonSchema), stream: false });
    let text = `{"model":${JSON.stringify(req.model ?? this.modelFor(req.fn))},"messages":${messagesJson(req.messages)}`;
    if (req.temperature !== undefined) text += `,"temperature":${JSON.stringify(req.temperature)}`;
    if (req.maxTokens !== undefined) text += `,"max_tokens":${JSON.stringify(req.maxTokens)}`;
    return `${text},"response_format":${jsonSchemaFormat(structured, req.schema.name)},"stream":false}`;
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const structured = req.schema ? toStructured(req.schema.schema) : undefined;
    const model = req.model ?? this.modelFor(req.fn);
    const jsonSchema = this.supportsJsonSchema(model);
    const errors = this.transport.postText ? this.transport.errors : this.sdk.errors;
    let answer: unknown;
    try {
      answer = await this.call(req, structured, jsonSchema);
    } catch (err) {
      const mapped = mapSdkError(err, errors, req.signal);
      if (!structured || !jsonSchema || !rejectsJsonSchema(mapped)) throw mapped;
      // Remembered per provider and model: many OpenAI-compatible servers (and some Groq models) only know json_object.
      this.jsonSchemaUnsupported.add(model);
      try {
        answer = await this.call(req, structured, false);
      } catch (retryErr) {
        throw mapSdkError(retryErr, errors, req.signal);
      }
    }
    // Both transports give a 200 that is not JSON as its text, an empty one as undefined: a broken
    // server or a proxy's page in front of it (as the pass-through says), never a model's answer.
    const response = answer as ChatCompletionLike | null | undefined;
    if (typeof response !== "object" || response === null || !Array.isArray(response.choices))
      throw new ProviderError("connection", "upstream sent a malformed response");
    const choice = response.choices[0];
    let text = choice?.message?.content ?? "";
    // an answer without a null anywhere has none to remove: restoring it would parse and write it again unchanged
    if (req.schema && structured && (structured.wrapKey || text.includes("null")))
      text = restore(text, req.schema.schema, structured);
    return {
      text,
      model: response.model || model,
      usage: response.usage
        ? { prompt_tokens: response.usage.prompt_tokens, completion_tokens: response.usage.completion_tokens }
        : undefined,
      finishReason: choice?.finish_reason ?? undefined,
    };
  }

  /** One chat completion: through the lean transport when this provider has it, else through the SDK. */
  private call(req: CompletionRequest, structured: StructuredSchema | undefined, jsonSchema: boolean): Promise<unknown> {
    const opts = { signal: req.signal, headers: req.headers, model: req.model ?? this.modelFor(req.fn) };
    const postText = this.transport.postText;
    if (postText) return postText.call(this.transport, "/chat/completions", this.bodyText(req, structured, jsonSchema), opts);
    return this.sdk.complete(this.body(req, structured, jsonSchema), opts);
  }

  private async generateImage(req: ImageRequest): Promise<ImageResult> {
    const model = req.model ?? this.config.models?.["image-generation"] ?? (this.defaults.imageModel as string);
    const bind = this.sdk.image;
    if (!bind) throw new ProviderError("unsupported", "images are not supported by this provider");
    try {
      // OpenAI answers 400 to any size outside a model's short list: send the nearest it accepts.
      const size = imageSizeFor(this.vendor.imageSizes, model, req.size);
      const images = await bind({ prompt: req.prompt, size, model, n: req.n ?? 1 }, { signal: req.signal, headers: req.headers });
      if (images.length === 0) throw new ProviderError("invalid_output", "upstream returned no image");
      return { model, images, size };
    } catch (err) {
      throw mapSdkError(err, this.sdk.errors, req.signal);
    }
  }

  private async embedTexts(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const bind = this.sdk.embed;
    if (!bind) throw new ProviderError("unsupported", "embeddings are not supported by this provider");
    try {
      return await bind(texts, this.config.embedding_model ?? (this.defaults.embeddingModel as string), { signal });
    } catch (err) {
      throw mapSdkError(err, this.sdk.errors, signal);
    }
  }
}

const modelOf = (req: ProxyRequest): string | undefined => (typeof req.body.model === "string" ? req.body.model : undefined);

/** A chunk with a finish_reason (chat), or the Responses API's terminal event. */
function endsStream(api: ProxyRequest["api"], event: unknown): boolean {
  if (typeof event !== "object" || event === null) return false;
  if (api === "responses") {
    const type = (event as { type?: unknown }).type;
    return type === "response.completed" || type === "response.incomplete" || type === "response.failed";
  }
  const choices = (event as { choices?: unknown }).choices;
  return Array.isArray(choices) && choices.some((c) => typeof c === "object" && c !== null && c.finish_reason);
}

/** `response_format` of json_schema as JSON text, per adapted schema (one per function schema) and name. */
const formatTexts = new WeakMap<StructuredSchema, Map<string, string>>();

function jsonSchemaFormat(structured: StructuredSchema, name: string): string {
  let byName = formatTexts.get(structured);
  if (!byName) {
    byName = new Map();
    formatTexts.set(structured, byName);
  }
  let text = byName.get(name);
  if (text === undefined) {
    const format: ResponseFormat = {
      type: "json_schema",
      json_schema: { name: safeName(name), strict: structured.strict, schema: structured.schema },
    };
    text = JSON.stringify(format);
    byName.set(name, text);
  }
  return text;
}

/** The JSON of messages shared from call to call (a function's system message, frozen: see functions/prompt.ts). */
const sharedMessageJson = new WeakMap<ChatMessage, string>();

/** JSON.stringify(messages), a shared message's part written once. */
function messagesJson(messages: ChatMessage[]): string {
  let out = "[";
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as ChatMessage;
    let json: string | undefined;
    if (Object.isFrozen(m)) {
      json = sharedMessageJson.get(m);
      if (json === undefined) {
        json = JSON.stringify(m);
        sharedMessageJson.set(m, json);
      }
    } else json = JSON.stringify(m);
    out += i === 0 ? json : `,${json}`;
  }
  return `${out}]`;
}

/** json_schema names allow [a-zA-Z0-9_-]{1,64}; function names are close but not guaranteed. */
function safeName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "result";
}

/** Maps a structured answer back to the original schema's shape; leaves unparseable text to the router's validation. */
function restore(text: string, original: JsonSchema, structured: StructuredSchema): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  return JSON.stringify(fromStructured(parsed, original, structured));
}

/** Image output format from a mime type or an SDK's output_format. */
export function imageFormat(value: string | undefined | null): "png" | "webp" | "jpeg" {
  if (value === "webp" || value === "jpeg") return value;
  if (value === "jpg") return "jpeg";
  return "png";
}
