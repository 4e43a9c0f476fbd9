import type { TSchema } from "@sinclair/typebox";
import type { ProviderFeature } from "../config";
import type { TraceUsage } from "../trace";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** JSON Schema (as produced by TypeBox) that a structured answer must satisfy. */
export type JsonSchema = Record<string, unknown>;

export interface CompletionRequest {
  /** function name, e.g. "sentiment-analysis"; selects the per-function model */
  fn: string;
  messages: ChatMessage[];
  /** when set, the provider is asked for JSON matching this schema */
  schema?: { name: string; schema: JsonSchema };
  /** explicit model; otherwise the provider's model for `fn`, else its default model */
  model?: string;
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
  /** extra HTTP headers for this call (the trace's traceparent) */
  headers?: Record<string, string>;
}

export interface CompletionResult {
  /** raw text of the answer (JSON text when a schema was requested) */
  text: string;
  model: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  finishReason?: string;
}

export interface ImageRequest {
  prompt: string;
  size: string;
  model?: string;
  n?: number;
  signal?: AbortSignal;
  /** extra HTTP headers for this call (the trace's traceparent) */
  headers?: Record<string, string>;
}

export interface ImageResult {
  model: string;
  images: { url?: string; b64_json?: string; format: "png" | "webp" | "jpeg" }[];
  /** WIDTHxHEIGHT sent to the image API, which may differ from the size asked for (snapped to one the model accepts); absent: the size asked for */
  size?: string;
}

export type ProviderErrorKind =
  | "timeout"
  | "connection"
  | "status"
  /**
   * the upstream sent its own error inside a stream it had begun (an `event: error`, a chunk with
   * `error`): no status, the upstream's error object in `upstream`; its connection was fine
   */
  | "upstream_error"
  | "invalid_output"
  | "context_length"
  | "aborted"
  | "unsupported"
  /** the provider's own content filter refused the request or withheld its answer (422 content_filtered when no provider answers) */
  | "content_filter";

/** The error object an OpenAI-style upstream answered with, returned to OpenAI-compatible clients as is. */
export interface UpstreamErrorBody {
  message: string;
  type: string | null;
  code: string | null;
  param: string | null;
}

/** Any failure of a provider call, normalized so the router can decide to fall back. */
export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
    /** the upstream's own error object (never logged; the OpenAI-compatible routes return it) */
    readonly upstream?: UpstreamErrorBody,
  ) {
    super(message);
    this.name = "ProviderError";
  }

  /** Short code for meta.attempts: "timeout", "connection", "http_503", "invalid_output", ... */
  get code(): string {
    return this.kind === "status" && this.status ? `http_${this.status}` : this.kind;
  }
}

/**
 * A vendor's "the input is longer than the model's context" refusal, as every adapter reports it:
 * 400 naming `messages` with OpenAI's code, so the router moves to a larger model and /v1 clients
 * see the error they know. `upstream` is the vendor's own error object where it had one.
 */
export function contextLengthError(message: string, status = 400, upstream?: UpstreamErrorBody): ProviderError {
  return new ProviderError("context_length", "input exceeds the model's context length", status, undefined, {
    ...(upstream ?? { message, type: "invalid_request_error" }),
    code: "context_length_exceeded",
    param: "messages",
  } as UpstreamErrorBody);
}

/** The OpenAI-style APIs the gateway forwards as they are (the OpenAI-compatible endpoints). */
export type ProxyApi = "chat/completions" | "embeddings" | "responses";

/** A JSON object: neither null nor an array. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Optional features of a request that not every provider serves (config key `features`). */
export type Feature = ProviderFeature;

export interface ProxyRequest {
  api: ProxyApi;
  /** the client's body with `model` set to this provider's model; every other field as sent */
  body: Record<string, unknown>;
  /**
   * `body` as the client sent it, when it is exactly `body` (nothing removed, added or changed,
   * `model` included): a transport that can send text sends these bytes instead of serialising `body`
   */
  text?: string;
  signal: AbortSignal;
  /** extra HTTP headers for this call (the trace's traceparent) */
  headers?: Record<string, string>;
}

/**
 * An Anthropic Messages API request (the inbound `/v1/messages`), for a provider that speaks that
 * API itself: `body` goes as sent, `model` included.
 */
export interface MessagesRequest {
  body: Record<string, unknown>;
  /** `body`'s bytes as the client sent them, when unchanged: sent instead of serialising `body` */
  text?: string;
  signal: AbortSignal;
  /** extra HTTP headers for this call (the trace's traceparent) */
  headers?: Record<string, string>;
}

/** One try of a function call on one provider (see attemptFunction). */
export interface AttemptInput {
  def: RoutedFunction;
  request: unknown;
  accountId: string;
  provider: Provider;
  /** explicit model for this provider (from the request), else the provider's model for the function */
  model?: string;
  signal: AbortSignal;
  /** CPU milliseconds an in-process engine may spend on this call (config limits.offline_cpu_ms) */
  cpuBudgetMs?: number;
  /** sent with the provider call (the trace's traceparent) */
  headers?: Record<string, string>;
  /** the guardrails' redaction of a text an in-process engine itself sends out (an embedding query) */
  outbound?: (text: string) => string;
  /** the caller's key policy: the models an in-process engine's own provider calls (embeddings) may use */
  allowModel?: (model: string) => boolean;
}

export interface AttemptResult {
  result: unknown;
  model: string;
  /** tokens the provider reported, both round-trips of a repair included */
  usage?: TraceUsage;
}

/** A provider that answers functions with their own implementations (the offline engine), not with a chat model. */
export interface FunctionEngine {
  /** whether it can serve `def` at all (what it answers for a given request is another matter) */
  serves(def: RoutedFunction): boolean;
  /** its answer; null when it declines this request (the route goes on, no failure counted) */
  attempt(input: AttemptInput): Promise<AttemptResult | null>;
}

/** What replaces `fetch` for a transport or an SDK (tests count or fail calls with it). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * A configured provider. `type` names its vendor (config, status, traces); what the router and
 * the routes do differently for a provider is decided by the capabilities below or read from its
 * vendor's descriptor (vendors/), never by comparing `type`.
 */
export interface Provider {
  readonly name: string;
  /** its vendor type (config `type`): the registry's key to its descriptor (vendors/index.ts `vendorOf`) */
  readonly type: string;
  /**
   * Runs in the gateway's own process (the offline engine): no network to fail, so no circuit
   * breaker; last in a default route (first for `preferLocal` functions); its attempt spans name
   * the system "textai.offline".
   */
  readonly inProcess?: boolean;
  /**
   * Serves the gateway's functions only: nothing on the OpenAI-compatible API (its routes and
   * GET /v1/models), and it has one model (`modelFor`): a model a request names is never sent to
   * it, and its name given as a model selects it.
   */
  readonly functionsOnly?: boolean;
  /** answers function calls itself (instead of `complete`/`image`) */
  readonly functions?: FunctionEngine;
  /** what this provider's API serves beyond plain text chat; only providers with `proxy` have any */
  readonly features?: ReadonlySet<Feature>;
  /** for a feature it lacks, what in its config entry would turn it on (said when a request needs it) */
  readonly enables?: Partial<Record<Feature, string>>;
  /** forwards an OpenAI-style request unchanged and resolves the upstream's JSON answer */
  proxy?(req: ProxyRequest): Promise<unknown>;
  /** the same with `stream: true`: the upstream's events, parsed; a cut stream throws ProviderError */
  proxyStream?(req: ProxyRequest): AsyncIterable<unknown>;
  /**
   * A provider that translates `/v1` requests to another API: the first field of `body` it has no
   * translation for (its path, as `param` names it), or null; the routes skip it for such a
   * request, as for a feature it lacks (chat.ts `lacks`), so no field is dropped on the way
   * (absent: it forwards every field as sent)
   */
  untranslatable?(api: ProxyApi, body: Record<string, unknown>): string | null;
  /** Anthropic's Messages API, the request passed as sent: the upstream's JSON answer */
  messages?(req: MessagesRequest): Promise<unknown>;
  /** the same with `stream: true`: Anthropic's events, parsed; a stream cut before message_stop throws ProviderError */
  messagesStream?(req: MessagesRequest): AsyncIterable<unknown>;
  /** Anthropic's `POST /v1/messages/count_tokens`, the request passed as sent: `{ input_tokens }` */
  countTokens?(req: MessagesRequest): Promise<unknown>;
  /** model that serves `fn` when the request names none */
  modelFor(fn: string): string;
  complete(req: CompletionRequest): Promise<CompletionResult>;
  image?(req: ImageRequest): Promise<ImageResult>;
  embed?(texts: string[], signal?: AbortSignal): Promise<number[][]>;
  listModels?(): readonly string[];
  /**
   * Whether the provider's own catalog has `model` (asked of it, kept a while: model-lookup.ts);
   * rejects when it cannot be asked. Providers without it are taken at their patterns' word.
   */
  knowsModel?(model: string): Promise<boolean>;
  /** further model ids it serves on /v1, as patterns (`*`: any run of characters); see servesModel */
  readonly modelPatterns?: readonly string[];
  /**
   * Other vendors' model ids (`gpt-*`, `claude-*`...), which its patterns do not take: set when its
   * entry leaves `model_patterns` to its type's default (buildProvider); see servesModel
   */
  othersModels?: readonly string[];
}

/**
 * What routing and answering need of a function. `functions/define`'s FunctionDef satisfies it,
 * so the providers depend on this narrow shape and never import the functions layer above them.
 * Requests and results are validated before and after (their types live with each function).
 */
export interface RoutedFunction {
  name: string;
  /** "image" goes to the image API; text functions to chat completions */
  kind?: "text" | "image";
  /** the offline engine first in the default route */
  preferLocal?: boolean;
  result: TSchema;
  // biome-ignore-start lint/suspicious/noExplicitAny: each function declares its own request and result types
  resultSchemaFor?: (request: any) => TSchema;
  prompt: (request: any) => ChatMessage[];
  check?: (request: any, result: any) => string[];
  postprocess?: (request: any, result: any) => any;
  local?: (
    request: any,
    ctx: {
      accountId: string;
      signal?: AbortSignal;
      outbound?: (text: string) => string;
      allowModel?: (model: string) => boolean;
    },
  ) => unknown;
  /** a request the offline engine answers: run once, unbudgeted, before the function's first budgeted call */
  example?: { request: any };
  // biome-ignore-end lint/suspicious/noExplicitAny: each function declares its own request and result types
}
