import Groq, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "groq-sdk";
import type { ProviderConfig } from "../../../config";
import { DEFAULT_TIMEOUT_MS, OpenAILikeProvider, type SdkBinding } from "../../openai-like";
import { type AdapterOptions, baseUrlOf, type VendorDescriptor } from "../descriptor";
import { proxyTransport } from "../transport";

/** Type `groq`: the official groq-sdk. Groq generates no images; embeddings only with a configured model. */
export function groqSdkProvider(config: ProviderConfig, opts: AdapterOptions, vendor: VendorDescriptor): OpenAILikeProvider {
  // Accept ".../openai/v1" too (what OpenAI-style clients are given): the SDK appends it itself.
  const baseURL = baseUrlOf(config, vendor).replace(/\/openai\/v1\/?$/, "");
  const sdk = new Groq({
    apiKey: config.api_key || "not-needed",
    baseURL,
    // The router owns retries and fallback.
    maxRetries: 0,
    timeout: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const binding: SdkBinding = {
    complete: (body, o) => sdk.chat.completions.create({ ...body, stream: false }, o),
    post: (path, body, o) => sdk.post(`/openai/v1${path}`, { body, stream: o.stream, signal: o.signal, headers: o.headers }),
    embed: async (texts, model, o) => {
      const res = await sdk.embeddings.create({ model, input: texts, encoding_format: "float" }, o);
      return [...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding as number[]);
    },
    retrieveModel: (id, o) => sdk.models.retrieve(id, o),
    listModelIds: async (o) => (await sdk.models.list(o)).data.map((m) => m.id),
    errors: { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError },
  };
  const transport = proxyTransport(config, vendor, `${baseURL.replace(/\/$/, "")}/openai/v1`, opts);
  return new OpenAILikeProvider(config, binding, vendor, transport);
}
