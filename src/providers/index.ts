import type { Config, ProviderConfig } from "../config";
import { OpenAILikeProvider } from "./openai-like";
import type { Provider } from "./types";
import { checkProviderEntries, otherVendorsModels, vendorOfEntry, vendors } from "./vendors";
import type { AdapterOptions } from "./vendors/descriptor";

/** The provider of one config entry, built by its type's descriptor (vendors/). */
export function buildProvider(config: ProviderConfig, opts: AdapterOptions = {}): Provider {
  const provider = vendorOfEntry(config).build(config, opts);
  // patterns of its own say what it serves; the default ones take no other vendor's model ids
  if (config.model_patterns === undefined && provider.modelPatterns?.length)
    provider.othersModels = otherVendorsModels(config.type);
  return provider;
}

/**
 * An entry of a type whose API is OpenAI's shape (openai, openai-compatible, groq: their
 * descriptors build an OpenAILikeProvider), as that class: the adapter tests take it apart.
 */
export function buildOpenAILikeProvider(config: ProviderConfig, opts: AdapterOptions = {}): OpenAILikeProvider {
  const p = buildProvider(config, opts);
  if (!(p instanceof OpenAILikeProvider)) throw new TypeError(`provider type "${config.type}" is not OpenAI-shaped`);
  return p;
}

/**
 * One provider per configured entry, in config order (the default route order); a type that is
 * `always` there (the offline engine, `local`) has an entry named after it even when the config
 * names none. Entries of an unknown type, or without a base URL their type requires, are a ConfigError.
 */
export function buildProviders(config: Config, options: AdapterOptions = {}): Map<string, Provider> {
  checkProviderEntries(config.providers);
  const opts = { env: config.providerEnv, ...options };
  const map = new Map<string, Provider>();
  for (const p of config.providers) map.set(p.name, buildProvider(p, opts));
  for (const v of vendors()) if (v.always && !map.has(v.type)) map.set(v.type, v.build({ name: v.type, type: v.type }, opts));
  return map;
}

export type { ProxyCall, ProxyOutcome, ProxyStreamOutcome } from "./chat";
export { LocalProvider } from "./local";
export { ProviderRouter, type RouteCall, type RouteOutcome } from "./router";
