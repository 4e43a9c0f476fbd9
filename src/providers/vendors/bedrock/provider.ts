import { AwsV4Signer } from "aws4fetch";
import { ConfigError, type ProviderConfig } from "../../../config";
import { HttpTransport } from "../../http-transport";
import { sharedHttp1Pool, usesHttp1 } from "../../http1";
import { DEFAULT_TIMEOUT_MS } from "../../openai-like";
import {
  type CompletionRequest,
  type CompletionResult,
  type FetchLike,
  isObject,
  ProviderError,
  type ProxyApi,
  type ProxyRequest,
} from "../../types";
import type { AdapterOptions, VendorDescriptor } from "../descriptor";
import { type EmbedCall, embeddingInputs, embeddingsAnswer, OwnApiProvider, upstreamMessage } from "../own-api";
import { isFormatted, toolName, toolSchema } from "../translating";
import { bedrockError } from "./errors";
import { converseEvents } from "./eventstream";
import { chatChunks } from "./stream";
import {
  chatFromConverse,
  conversation,
  converseFromChat,
  finishReason,
  forcedTool,
  readBlocks,
  untranslatable,
} from "./translate";

type Json = Record<string, unknown>;

/** The credentials and region an entry signs with: its own, else the AWS SDKs' environment variables. */
export function credentialsOf(config: ProviderConfig, env: Record<string, string | undefined>) {
  const region = config.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined);
  const accessKeyId = config.aws_access_key_id ?? (env.AWS_ACCESS_KEY_ID || undefined);
  const secretAccessKey = config.aws_secret_access_key ?? (env.AWS_SECRET_ACCESS_KEY || undefined);
  // a session token belongs to the key it came with: the environment's only with the environment's key
  const sessionToken = config.aws_session_token ?? (config.aws_access_key_id ? undefined : env.AWS_SESSION_TOKEN || undefined);
  const at = `provider "${config.name}"`;
  if (!region) throw new ConfigError(`${at}.region: required for type bedrock (or AWS_REGION)`);
  if (!accessKeyId || !secretAccessKey)
    throw new ConfigError(
      `${at}.aws_access_key_id: type bedrock signs with an access key id and a secret access key (aws_access_key_id and aws_secret_access_key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)`,
    );
  return { region, accessKeyId, secretAccessKey, sessionToken };
}

/**
 * A fetch that signs each request with SigV4 (service `bedrock`, the entry's region) by aws4fetch
 * before `inner` sends it; the signature covers the body, the host and every header but the few
 * AWS leaves out (user-agent, content-type...).
 */
function signingFetch(creds: ReturnType<typeof credentialsOf>, inner: FetchLike): FetchLike {
  const cache = new Map<string, ArrayBuffer>();
  return async (input, init = {}) => {
    const signer = new AwsV4Signer({
      url: String(input),
      method: init.method ?? "POST",
      headers: init.headers as Record<string, string>,
      body: init.body as string,
      ...creds,
      service: "bedrock",
      cache,
    });
    const signed = await signer.sign();
    return inner(signed.url.toString(), {
      method: signed.method,
      headers: Object.fromEntries(signed.headers),
      body: init.body,
      signal: init.signal,
    });
  };
}

const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/**
 * A `bedrock` entry: Amazon Bedrock Runtime's Converse and ConverseStream APIs (chat and function
 * calls) and InvokeModel (Titan text embeddings), signed with SigV4, over the gateway's plain HTTP
 * transport (its binary event stream read by eventstream.ts). Function calls ask for their
 * structured answer by a forced tool (`toolConfig`); `/v1/chat/completions` and `/v1/embeddings`
 * are translated both ways (translate.ts, stream.ts), `/v1/responses` and `/v1/messages` through
 * chat completions. docs/providers.md, "bedrock".
 */
export class BedrockProvider extends OwnApiProvider {
  protected readonly vendorName = "Bedrock";
  private readonly http: HttpTransport;

  constructor(config: ProviderConfig, vendor: VendorDescriptor, opts: AdapterOptions) {
    super(config, vendor);
    const creds = credentialsOf(config, opts.env ?? {});
    const base = (config.base_url ?? `https://bedrock-runtime.${creds.region}.amazonaws.com`).replace(/\/+$/, "");
    const inner = opts.fetch ?? (usesHttp1(base) ? sharedHttp1Pool().fetch : fetch);
    this.http = new HttpTransport({
      baseUrl: `${base}/model`,
      apiKey: "",
      // no key header: the signature is the Authorization (signingFetch)
      authHeaders: {},
      timeoutMs: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      fetch: signingFetch(creds, inner),
      streamEvents: converseEvents,
    });
  }

  untranslatable(api: ProxyApi, body: Record<string, unknown>): string | null {
    return untranslatable(api, body);
  }

  /** POST `/model/{modelId}/{action}` (the id URL-encoded: `:` and an inference profile's ARN `/` alike): the parsed answer, or a stream's events. */
  private async post(model: string, action: string, body: Json, req: { signal?: AbortSignal; headers?: Record<string, string> }) {
    const stream = action === "converse-stream";
    const headers = stream ? { ...req.headers, accept: "application/vnd.amazon.eventstream" } : req.headers;
    try {
      return await this.http.post(`/${encodeURIComponent(model)}/${action}`, body, { signal: req.signal, headers, stream });
    } catch (err) {
      throw this.error(err, req.signal);
    }
  }

  /** A failure as a ProviderError; Bedrock's 4xx message withheld when the entry says so (own-api.ts). */
  protected error(err: unknown, signal?: AbortSignal): ProviderError {
    return upstreamMessage(bedrockError(err, this.name, signal), this.config);
  }

  private static answer(answer: unknown): Json {
    if (!isObject(answer) || !isObject(answer.output) || !isObject(answer.output.message))
      throw new ProviderError("connection", "upstream sent a malformed response");
    return answer;
  }

  protected async chat(req: ProxyRequest, model: string): Promise<unknown> {
    const answer = BedrockProvider.answer(await this.post(model, "converse", converseFromChat(req.body), req));
    return chatFromConverse(answer, model, isFormatted(req.body));
  }

  protected async chatStream(req: ProxyRequest, model: string): Promise<AsyncIterable<unknown>> {
    return (await this.post(model, "converse-stream", converseFromChat(req.body), req)) as AsyncIterable<unknown>;
  }

  protected chatChunks(events: AsyncIterable<unknown>, req: ProxyRequest, model: string, includeUsage: boolean) {
    return chatChunks(events, { model, formatted: isFormatted(req.body), includeUsage });
  }

  /** A function call: its result schema as the inputSchema of a tool the model is made to use. */
  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const model = req.model ?? this.modelFor(req.fn);
    const { system, messages } = conversation(req.messages);
    const body: Json = { messages };
    if (system.length > 0) body.system = system;
    const inference: Json = {};
    if (req.maxTokens !== undefined) inference.maxTokens = req.maxTokens;
    if (req.temperature !== undefined) inference.temperature = req.temperature;
    if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
    const tool = req.schema ? { name: toolName(req.schema.name), ...toolSchema(req.schema.schema) } : undefined;
    if (tool) body.toolConfig = forcedTool(tool.name, tool.schema);
    const answer = BedrockProvider.answer(await this.post(model, "converse", body, req));
    const finish = finishReason(answer.stopReason, tool !== undefined);
    if (finish === "content_filter") throw contentFiltered(this.name, String(answer.stopReason));
    const content = (answer.output as { message: Json }).message.content;
    const blocks = Array.isArray(content) ? content.filter(isObject) : [];
    const use = tool && blocks.map((b) => b.toolUse).find((u) => isObject(u) && u.name === tool.name);
    const input = isObject(use) ? (tool?.wrapped && isObject(use.input) ? use.input.value : use.input) : undefined;
    // no tool use (cut at maxTokens): its text, which the function's validation then judges
    const text = isObject(use) ? JSON.stringify(input ?? null) : readBlocks(blocks, false).text;
    const usage = isObject(answer.usage) ? answer.usage : {};
    return {
      text,
      model,
      usage: {
        prompt_tokens: n(usage.inputTokens) + n(usage.cacheReadInputTokens) + n(usage.cacheWriteInputTokens),
        completion_tokens: n(usage.outputTokens),
      },
      finishReason: finish,
    };
  }

  protected async embeddings(req: ProxyRequest, model: string): Promise<unknown> {
    const { texts, dims } = embeddingInputs(req.body);
    let tokens = 0;
    const vectors = await this.embedTexts(texts, model, {
      dims,
      signal: req.signal,
      headers: req.headers,
      counted: (t) => (tokens += t),
    });
    return embeddingsAnswer(req.body, vectors, model, { prompt_tokens: tokens, total_tokens: tokens });
  }

  /** Titan Text Embeddings through InvokeModel: one call per text (the model takes one `inputText`). */
  protected async embedTexts(
    texts: string[],
    model: string,
    call: EmbedCall & { counted?: (tokens: number) => void },
  ): Promise<number[][]> {
    const { dims, signal, headers, counted } = call;
    const out: number[][] = [];
    for (const inputText of texts) {
      const body = { inputText, ...(dims !== undefined ? { dimensions: dims } : {}) };
      const answer = await this.post(model, "invoke", body, { signal, headers });
      const values = isObject(answer) && Array.isArray(answer.embedding) ? answer.embedding : null;
      if (!values?.every((x) => typeof x === "number"))
        throw new ProviderError("connection", "upstream sent a malformed response");
      counted?.(n((answer as Json).inputTextTokenCount));
      out.push(values as number[]);
    }
    return out;
  }
}

/** An answer Bedrock's guardrail or the model's content filter withheld (CONTRACT section 4: 422 content_filtered). */
export function contentFiltered(provider: string, why: string): ProviderError {
  const message = `provider "${provider}" refused the request: its content filter withheld the answer (${why})`;
  return new ProviderError("content_filter", message, 422, undefined, {
    message,
    type: "invalid_request_error",
    code: "content_filtered",
    param: null,
  });
}

export function bedrockProvider(config: ProviderConfig, opts: AdapterOptions, vendor: VendorDescriptor): BedrockProvider {
  return new BedrockProvider(config, vendor, opts);
}
