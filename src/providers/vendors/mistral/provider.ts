import type { ProviderConfig } from "../../../config";
import { OpenAILikeProvider } from "../../openai-like";
import type { ProxyRequest } from "../../types";
import { type AdapterOptions, baseUrlOf, type VendorDescriptor } from "../descriptor";
import { openAiBinding } from "../openai/sdk";
import { proxyTransport } from "../transport";
import { fromMistral, toMistral } from "./wire";

/**
 * Mistral's API through the OpenAI-shaped adapter: function calls go as OpenAI's (Mistral takes
 * `response_format` json_schema as OpenAI sends it), the `/v1` pass-through's bodies and answers are
 * translated by wire.ts. Embeddings and model lookups through the openai SDK at Mistral's base URL.
 */
class MistralProvider extends OpenAILikeProvider {
  override async proxy(req: ProxyRequest): Promise<unknown> {
    const out = toMistral(req.api, req.body);
    const answer = await super.proxy(out.changed ? { ...req, body: out.body, text: undefined } : req);
    return fromMistral(answer, out.ids);
  }

  override async *proxyStream(req: ProxyRequest): AsyncIterable<unknown> {
    const out = toMistral(req.api, req.body);
    for await (const event of super.proxyStream(out.changed ? { ...req, body: out.body, text: undefined } : req))
      yield fromMistral(event, out.ids);
  }
}

export function mistralProvider(config: ProviderConfig, opts: AdapterOptions, vendor: VendorDescriptor): OpenAILikeProvider {
  const baseUrl = baseUrlOf(config, vendor);
  return new MistralProvider(config, openAiBinding(config, baseUrl, opts), vendor, proxyTransport(config, vendor, baseUrl, opts));
}
