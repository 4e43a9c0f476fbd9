import type { ProviderType } from "../config";

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
}

export interface CompletionResult {
  /** raw text of the answer (JSON text when a schema was requested) */
  text: string;
  model: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  finishReason?: string;
}

export interface StreamChunk {
  /** text delta */
  delta: string;
  finishReason?: string | null;
}

export interface ImageRequest {
  prompt: string;
  size: string;
  model?: string;
  n?: number;
  signal?: AbortSignal;
}

export interface ImageResult {
  model: string;
  images: { url?: string; b64_json?: string; format: "png" | "webp" | "jpeg" }[];
}

export type ProviderErrorKind =
  | "timeout"
  | "connection"
  | "status"
  | "invalid_output"
  | "context_length"
  | "aborted"
  | "unsupported";

/** Any failure of a provider call, normalized so the router can decide to fall back. */
export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "ProviderError";
  }

  /** Short code for meta.attempts: "timeout", "connection", "http_503", "invalid_output", ... */
  get code(): string {
    return this.kind === "status" && this.status ? `http_${this.status}` : this.kind;
  }
}

export interface Provider {
  readonly name: string;
  readonly type: ProviderType;
  /** model that serves `fn` when the request names none */
  modelFor(fn: string): string;
  complete(req: CompletionRequest): Promise<CompletionResult>;
  stream?(req: CompletionRequest): AsyncIterable<StreamChunk>;
  image?(req: ImageRequest): Promise<ImageResult>;
  embed?(texts: string[], signal?: AbortSignal): Promise<number[][]>;
  listModels?(): string[];
}
