import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type { ProviderConfig } from "../config";
import { type FetchLike, HttpTransport } from "./http-transport";
import { sharedHttp1Pool, usesHttp1 } from "./http1";
import { DEFAULT_TIMEOUT_MS, imageFormat, OpenAILikeProvider, type ProxyTransport, type SdkBinding } from "./openai-like";

export type { FetchLike } from "./http-transport";

export interface AdapterOptions {
  /** replaces fetch for the SDK and the HTTP transport alike (tests count or fail calls with it) */
  fetch?: FetchLike;
  /**
   * what the `/v1` pass-through and function calls (chat completions) go through: "http"
   * (default), Bun's fetch straight to the API, or "sdk", the official SDK; images and embeddings
   * always use the SDK
   */
  transport?: "http" | "sdk";
}

/** The lean transport for a provider whose API answers at `baseUrl`, or undefined for the SDK's own. */
export function proxyTransport(config: ProviderConfig, baseUrl: string, opts: AdapterOptions): ProxyTransport | undefined {
  if (opts.transport === "sdk") return undefined;
  return new HttpTransport({
    baseUrl,
    apiKey: config.api_key || "not-needed",
    timeoutMs: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    // a plain-http upstream: the HTTP/1.1 client on the event loop (http1.ts); else Bun's fetch
    fetch: opts.fetch ?? (usesHttp1(baseUrl) ? sharedHttp1Pool().fetch : undefined),
  });
}

const OPENAI_BASE_URL = "https://api.openai.com/v1";

/** Builds a client with the router in charge of retries: the SDK must not retry behind its back. */
function client(config: ProviderConfig, opts: AdapterOptions): OpenAI {
  return new OpenAI({
    // Local OpenAI-compatible servers (Ollama, llama.cpp) need no key, but the SDK insists on one.
    apiKey: config.api_key || "not-needed",
    // Explicit so the SDK never falls back to OPENAI_* environment variables for a differently named provider.
    baseURL: config.base_url ?? OPENAI_BASE_URL,
    maxRetries: 0,
    timeout: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    organization: null,
    project: null,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

/** Types `openai` and `openai-compatible`: the official openai SDK, optionally against another base URL. */
export function createOpenAIProvider(config: ProviderConfig, opts: AdapterOptions = {}): OpenAILikeProvider {
  const sdk = client(config, opts);
  const binding: SdkBinding = {
    complete: (body, o) => sdk.chat.completions.create({ ...body, stream: false }, o),
    post: (path, body, o) => sdk.post(path, { body, stream: o.stream, signal: o.signal, headers: o.headers }),
    image: async (req, o) => {
      // gpt-image models always answer base64 and reject response_format; dall-e defaults to URLs.
      const extra = req.model.startsWith("dall-e") ? { response_format: "b64_json" as const } : {};
      const res = await sdk.images.generate({ prompt: req.prompt, size: req.size, model: req.model, n: req.n, ...extra }, o);
      const format = imageFormat(res.output_format);
      return (res.data ?? []).map((d) => ({ b64_json: d.b64_json, url: d.url, format }));
    },
    embed: async (texts, model, o) => {
      const res = await sdk.embeddings.create({ model, input: texts, encoding_format: "float" }, o);
      return [...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
    },
    retrieveModel: (id, o) => sdk.models.retrieve(id, o),
    listModelIds: async (o) => (await sdk.models.list(o)).data.map((m) => m.id),
    errors: { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError },
  };
  // Generic OpenAI-compatible servers rarely generate images; only offer it when a model is configured.
  const imageModel = config.type === "openai" ? "gpt-image-1" : config.models?.["image-generation"];
  const embeddingModel = config.type === "openai" ? "text-embedding-3-small" : config.embedding_model;
  const transport = proxyTransport(config, config.base_url ?? OPENAI_BASE_URL, opts);
  return new OpenAILikeProvider(config, binding, { model: "gpt-4o-mini", imageModel, embeddingModel }, transport);
}
