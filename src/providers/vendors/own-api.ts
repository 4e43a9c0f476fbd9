/**
 * What the adapters to a vendor's own API over the gateway's HTTP transport (bedrock, gemini) do
 * alike: their names, features, models and patterns, the `/v1` calls' steps (the model, the refusal
 * of a body that does not translate, embeddings or chat, a stream's usage chunk asked for), a 4xx's
 * message withheld when the entry says so, and the `/v1/embeddings` body read and answered in
 * OpenAI's shape. The translation both ways is each vendor's own.
 */
import type { ProviderConfig, ProviderFeature } from "../../config";
import { defaultFeatures } from "../openai-like";
import {
  type CompletionRequest,
  type CompletionResult,
  isObject,
  type Provider,
  ProviderError,
  type ProxyApi,
  type ProxyRequest,
} from "../types";
import { type VendorDescriptor, vendorModelFor, vendorModels } from "./descriptor";

/** An embedding call's options: the dimensions a body asks for, its signal and headers. */
export interface EmbedCall {
  dims?: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export abstract class OwnApiProvider implements Provider {
  readonly name: string;
  readonly type: string;
  readonly features: ReadonlySet<ProviderFeature>;
  readonly modelPatterns: readonly string[];
  readonly embed: (texts: string[], signal?: AbortSignal) => Promise<number[][]>;
  private readonly models: readonly string[];
  /** the vendor as a refusal names it ("Bedrock") */
  protected abstract readonly vendorName: string;

  constructor(
    protected readonly config: ProviderConfig,
    protected readonly vendor: VendorDescriptor,
  ) {
    this.name = config.name;
    this.type = config.type;
    this.features = defaultFeatures(config, vendor);
    this.modelPatterns = config.model_patterns ?? ["*"];
    this.embed = (texts, signal) => this.embedTexts(texts, this.modelFor("embeddings"), { signal });
    this.models = vendorModels(config, vendor);
  }

  abstract untranslatable(api: ProxyApi, body: Record<string, unknown>): string | null;
  abstract complete(req: CompletionRequest): Promise<CompletionResult>;
  /** A failure as the ProviderError the routes see. */
  protected abstract error(err: unknown, signal?: AbortSignal): ProviderError;
  /** Texts' vectors from `model`. */
  protected abstract embedTexts(texts: string[], model: string, call: EmbedCall): Promise<number[][]>;
  /** A `/v1/embeddings` call, in OpenAI's shape (embeddingsAnswer). */
  protected abstract embeddings(req: ProxyRequest, model: string): Promise<unknown>;
  /** A chat completions call, translated both ways. */
  protected abstract chat(req: ProxyRequest, model: string): Promise<unknown>;
  /** A streamed one: the vendor's events, then them as chat chunks (with the usage chunk when `includeUsage`). */
  protected abstract chatStream(req: ProxyRequest, model: string): Promise<AsyncIterable<unknown>>;
  protected abstract chatChunks(
    events: AsyncIterable<unknown>,
    req: ProxyRequest,
    model: string,
    includeUsage: boolean,
  ): AsyncIterable<unknown>;

  modelFor(fn: string): string {
    return vendorModelFor(this.config, this.vendor, fn);
  }

  listModels(): readonly string[] {
    return this.models;
  }

  async proxy(req: ProxyRequest): Promise<unknown> {
    const model = String(req.body.model ?? this.modelFor(req.api === "embeddings" ? "embeddings" : "chat-completions"));
    this.refuseUntranslatable(req);
    if (req.api === "embeddings") return this.embeddings(req, model);
    return this.chat(req, model);
  }

  async *proxyStream(req: ProxyRequest): AsyncIterable<unknown> {
    const model = String(req.body.model ?? this.modelFor("chat-completions"));
    this.refuseUntranslatable(req);
    const events = await this.chatStream(req, model);
    const options = req.body.stream_options;
    const includeUsage = isObject(options) && options.include_usage === true;
    try {
      yield* this.chatChunks(events, req, model, includeUsage);
    } catch (err) {
      throw this.error(err, req.signal);
    }
  }

  /** The routes skip this provider for such a request (Provider.untranslatable); a caller that did not is refused, never served with a field dropped. */
  private refuseUntranslatable(req: ProxyRequest): void {
    const field = this.untranslatable(req.api, req.body);
    if (field)
      throw new ProviderError("unsupported", `provider "${this.name}" cannot translate "${field}" for ${this.vendorName}`);
  }
}

/** A failure as the client sees it: the vendor's 4xx message (or stream error event's) withheld when the entry says so (`pass_upstream_messages = false`). */
export function upstreamMessage(e: ProviderError, config: ProviderConfig): ProviderError {
  if (config.pass_upstream_messages !== false || !e.upstream || (e.kind !== "status" && e.kind !== "upstream_error")) return e;
  const code = e.upstream.code ? ` ${e.upstream.code}` : "";
  const message =
    e.kind === "upstream_error"
      ? `provider "${config.name}" sent an error event (${e.upstream.type ?? "error"}${code})`
      : `provider "${config.name}" rejected the request (${e.status ?? "error"}${code})`;
  return new ProviderError(e.kind, message, e.status, e.retryAfterMs, { ...e.upstream, message });
}

/** An embeddings body's texts (one or many) and the dimensions it asks for. */
export function embeddingInputs(body: Record<string, unknown>): { texts: string[]; dims: number | undefined } {
  const input = body.input;
  const texts = typeof input === "string" ? [input] : (input as string[]);
  return { texts, dims: typeof body.dimensions === "number" ? body.dimensions : undefined };
}

/** Vectors as OpenAI's embeddings answer: float arrays, or base64 of their float32 bytes when the body asks; the usage when known. */
export function embeddingsAnswer(
  body: Record<string, unknown>,
  vectors: number[][],
  model: string,
  usage?: { prompt_tokens: number; total_tokens: number },
): Record<string, unknown> {
  const base64 = body.encoding_format === "base64";
  return {
    object: "list",
    data: vectors.map((v, index) => ({
      object: "embedding",
      index,
      embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v,
    })),
    model,
    ...(usage ? { usage } : {}),
  };
}
