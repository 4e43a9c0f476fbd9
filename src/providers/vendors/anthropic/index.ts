import type { VendorDescriptor } from "../descriptor";
import { AnthropicProvider } from "./provider";

/**
 * The `anthropic-version` the adapter sends: the Messages API as documented since 2023-06-01
 * (2026-10-21 removed `temperature`, `top_p` and `top_k`, which chat completions carry).
 */
export const ANTHROPIC_VERSION = "2023-06-01";

/**
 * Type `anthropic`: Anthropic's Messages API (docs/providers.md, "anthropic"), translated from and
 * to OpenAI's chat completions; function calls by forced tool use; no embeddings, no images generated.
 */
export const anthropic: VendorDescriptor = {
  type: "anthropic",
  // as Anthropic's SDK takes it: without /v1
  baseUrl: { default: "https://api.anthropic.com", required: false },
  authHeaders: (apiKey) => ({ "x-api-key": apiKey, "anthropic-version": ANTHROPIC_VERSION }),
  env: { apiKey: "ANTHROPIC_API_KEY", baseUrl: "ANTHROPIC_BASE_URL" },
  models: { function: "claude-haiku-4-5" },
  // structured_output: a response_format is asked by forced tool use (translate.ts)
  features: { always: ["tools", "images", "structured_output"], ownHost: "api.anthropic.com" },
  catalog: "vendor",
  families: ["claude-*"],
  genAiSystem: "anthropic",
  build: (config, opts) => new AnthropicProvider(config, opts, anthropic),
};
