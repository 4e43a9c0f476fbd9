import type { ProviderConfig } from "../../../config";
import { HttpTransport } from "../../http-transport";
import { sharedHttp1Pool, usesHttp1 } from "../../http1";
import { DEFAULT_TIMEOUT_MS } from "../../openai-like";
import {
  type CompletionRequest,
  type CompletionResult,
  isObject,
  ProviderError,
  type ProxyApi,
  type ProxyRequest,
} from "../../types";
import { type AdapterOptions, baseUrlOf, type VendorDescriptor } from "../descriptor";
import { type EmbedCall, embeddingInputs, embeddingsAnswer, OwnApiProvider, upstreamMessage } from "../own-api";
import { geminiError } from "./errors";
import { functionRequest, toGenerateContent, untranslatable } from "./request";
import { blockedPrompt, chatChunksOf, chatCompletionOf, contentFiltered, finishReasonOf, textOf } from "./response";

/** Gemini's batchEmbedContents takes at most this many texts a call. */
const EMBED_BATCH = 100;

/**
 * A `gemini` entry: Google's Gemini API (`v1beta`), over the gateway's plain HTTP transport (no
 * SDK), the key in `x-goog-api-key`. Function calls ask for native structured output
 * (`responseMimeType: application/json` and the result schema); `/v1/chat/completions` and
 * `/v1/embeddings` are translated both ways (request.ts, response.ts), `/v1/responses` through
 * chat completions (the routes do that: no `responses` feature). docs/providers.md, "gemini".
 */
export class GeminiProvider extends OwnApiProvider {
  protected readonly vendorName = "Gemini";
  private readonly http: HttpTransport;

  constructor(config: ProviderConfig, vendor: VendorDescriptor, opts: AdapterOptions) {
    super(config, vendor);
    // written as Google's SDK takes it (no version); a base URL given with /v1beta is taken too
    const base = baseUrlOf(config, vendor)
      .replace(/\/+$/, "")
      .replace(/\/v1beta$/, "");
    const apiKey = config.api_key || "not-needed";
    this.http = new HttpTransport({
      baseUrl: `${base}/v1beta/models`,
      apiKey,
      authHeaders: vendor.authHeaders?.(apiKey),
      timeoutMs: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      fetch: opts.fetch ?? (usesHttp1(base) ? sharedHttp1Pool().fetch : undefined),
    });
  }

  untranslatable(api: ProxyApi, body: Record<string, unknown>): string | null {
    return untranslatable(api, body);
  }

  /** POST `models/{model}:{method}`: the parsed answer, or a stream's parsed events. */
  private async post(
    model: string,
    method: string,
    body: Record<string, unknown>,
    req: { signal?: AbortSignal; headers?: Record<string, string> },
  ) {
    const name = encodeURIComponent(model.replace(/^models\//, ""));
    const stream = method === "streamGenerateContent";
    const path = `/${name}:${method}${stream ? "?alt=sse" : ""}`;
    try {
      return await this.http.post(path, body, { signal: req.signal, headers: req.headers, stream });
    } catch (err) {
      throw this.error(err, req.signal);
    }
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const model = req.model ?? this.modelFor(req.fn);
    const body = functionRequest(req.messages, {
      temperature: req.temperature,
      maxTokens: req.maxTokens,
      schema: req.schema?.schema,
    });
    const answer = await this.post(model, "generateContent", body, req);
    if (!isObject(answer)) throw new ProviderError("connection", "upstream sent a malformed response");
    const blocked = blockedPrompt(answer, this.name);
    if (blocked) throw blocked;
    const candidate = Array.isArray(answer.candidates) && isObject(answer.candidates[0]) ? answer.candidates[0] : null;
    if (!candidate) throw new ProviderError("connection", "upstream sent a malformed response");
    const finishReason = finishReasonOf(candidate.finishReason);
    if (finishReason === "content_filter")
      throw contentFiltered(this.name, `withheld the answer (${String(candidate.finishReason)})`);
    const content = isObject(candidate.content) ? candidate.content : {};
    const parts = Array.isArray(content.parts) ? content.parts.filter(isObject) : [];
    const meta = isObject(answer.usageMetadata) ? answer.usageMetadata : null;
    const n = (v: unknown) => (typeof v === "number" ? v : 0);
    return {
      text: textOf(parts),
      model: typeof answer.modelVersion === "string" ? answer.modelVersion : model,
      usage: meta
        ? {
            prompt_tokens: n(meta.promptTokenCount) + n(meta.toolUsePromptTokenCount),
            completion_tokens: n(meta.candidatesTokenCount) + n(meta.thoughtsTokenCount),
          }
        : undefined,
      finishReason,
    };
  }

  protected async chat(req: ProxyRequest, model: string): Promise<unknown> {
    const answer = await this.post(model, "generateContent", toGenerateContent(req.body), req);
    return chatCompletionOf(answer, model, this.name);
  }

  protected async chatStream(req: ProxyRequest, model: string): Promise<AsyncIterable<unknown>> {
    return (await this.post(model, "streamGenerateContent", toGenerateContent(req.body), req)) as AsyncIterable<unknown>;
  }

  protected chatChunks(events: AsyncIterable<unknown>, _req: ProxyRequest, model: string, includeUsage: boolean) {
    return chatChunksOf(events, model, this.name, includeUsage);
  }

  /** A failure as a ProviderError; Google's 4xx message withheld when the entry says so (own-api.ts). */
  protected error(err: unknown, signal?: AbortSignal): ProviderError {
    return upstreamMessage(geminiError(err, this.name, signal), this.config);
  }

  protected async embeddings(req: ProxyRequest, model: string): Promise<unknown> {
    const { texts, dims } = embeddingInputs(req.body);
    return embeddingsAnswer(
      req.body,
      await this.embedTexts(texts, model, { dims, signal: req.signal, headers: req.headers }),
      model,
    );
  }

  protected async embedTexts(texts: string[], model: string, { dims, signal, headers }: EmbedCall): Promise<number[][]> {
    const name = `models/${model.replace(/^models\//, "")}`;
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += EMBED_BATCH) {
      const requests = texts.slice(i, i + EMBED_BATCH).map((text) => ({
        model: name,
        content: { parts: [{ text }] },
        ...(dims !== undefined ? { outputDimensionality: dims } : {}),
      }));
      const answer = await this.post(model, "batchEmbedContents", { requests }, { signal, headers });
      const embeddings = isObject(answer) && Array.isArray(answer.embeddings) ? answer.embeddings : null;
      if (!embeddings || embeddings.length !== requests.length)
        throw new ProviderError("connection", "upstream sent a malformed response");
      for (const e of embeddings) {
        const values = isObject(e) && Array.isArray(e.values) ? e.values : null;
        if (!values?.every((x) => typeof x === "number"))
          throw new ProviderError("connection", "upstream sent a malformed response");
        out.push(values as number[]);
      }
    }
    return out;
  }
}

export function geminiProvider(config: ProviderConfig, opts: AdapterOptions, vendor: VendorDescriptor): GeminiProvider {
  return new GeminiProvider(config, vendor, opts);
}
