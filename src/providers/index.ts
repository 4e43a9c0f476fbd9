import type { Config, ProviderConfig } from "../config";
import type * as GroqAdapter from "./groq";
import { LocalProvider } from "./local";
import { MockProvider } from "./mock";
import type * as OpenAIAdapter from "./openai";
import type { AdapterOptions } from "./openai";
import type { Provider } from "./types";

// The SDKs (about 20 MB and 60 ms to load) are loaded only when a provider of their type is configured.
export function buildProvider(config: ProviderConfig, opts: AdapterOptions = {}): Provider {
  switch (config.type) {
    case "openai":
    case "openai-compatible":
      return (require("./openai") as typeof OpenAIAdapter).createOpenAIProvider(config, opts);
    case "groq":
      return (require("./groq") as typeof GroqAdapter).createGroqProvider(config, opts);
    case "mock":
      return new MockProvider(config);
    case "local":
      return new LocalProvider(config.name);
  }
}

/** One provider per configured entry, in config order (the default route order); `local` is always there. */
export function buildProviders(config: Config, opts: AdapterOptions = {}): Map<string, Provider> {
  const map = new Map<string, Provider>();
  for (const p of config.providers) map.set(p.name, buildProvider(p, opts));
  if (!map.has("local")) map.set("local", new LocalProvider("local"));
  return map;
}

export type { ProxyCall, ProxyOutcome, ProxyStreamOutcome } from "./chat";
export { LocalProvider } from "./local";
export { ProviderRouter, type RouteCall, type RouteOutcome } from "./router";
