import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type { ProviderConfig } from "../../../config";
import { DEFAULT_TIMEOUT_MS, imageFormat, OpenAILikeProvider, type SdkBinding } from "../../openai-like";
import { type AdapterOptions, baseUrlOf, type VendorDescriptor } from "../descriptor";
import { proxyTransport } from "../transport";

/** Builds a client with the router in charge of retries: the SDK must not retry behind its back. */
function client(config: ProviderConfig, baseURL: string, opts: AdapterOptions): OpenAI {
  return new OpenAI({
    // Local OpenAI-compatible servers (Ollama, llama.cpp) need no key, but the SDK insists on one.
    apiKey: config.api_key || "not-needed",
    // Explicit so the SDK never falls back to OPENAI_* environment variables for a differently named provider.
    baseURL,
    maxRetries: 0,
    timeout: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    organization: null,
    project: null,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

/**
 * An entry of an API shaped like OpenAI's, through the official openai SDK at the entry's base URL
 * (else the vendor's default): types `openai` and `openai-compatible`, and any vendor whose API is
 * OpenAI's at another address. What differs by vendor (models, features, catalog) is `vendor`'s.
 */
export function openAiSdkProvider(config: ProviderConfig, opts: AdapterOptions, vendor: VendorDescriptor): OpenAILikeProvider {
  const baseUrl = baseUrlOf(config, vendor);
  return new OpenAILikeProvider(
    config,
    openAiBinding(config, baseUrl, opts),
    vendor,
    proxyTransport(config, vendor, baseUrl, opts),
  );
}

/** The openai SDK at `baseUrl` bound to what OpenAILikeProvider uses (another vendor's adapter may build on it). */
export function openAiBinding(config: ProviderConfig, baseUrl: string, opts: AdapterOptions): SdkBinding {
  return bindingOf(client(config, baseUrl, opts));
}

/** An openai SDK client (OpenAI, or AzureOpenAI) bound to what OpenAILikeProvider uses. */
export function bindingOf(sdk: OpenAI): SdkBinding {
  return {
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
}
