import type { VendorDescriptor } from "../descriptor";
import type * as Provider from "./provider";

/**
 * Type `mistral`: Mistral's chat completions and embeddings (La Plateforme, api.mistral.ai). The API
 * is shaped like OpenAI's; what differs (tool call ids, `random_seed`, `tool_choice: "any"`, the
 * fields it has not) is translated by its adapter, ./provider.ts (docs/providers.md#mistral).
 */
export const mistral: VendorDescriptor = {
  type: "mistral",
  baseUrl: { default: "https://api.mistral.ai/v1", required: false },
  env: { apiKey: "MISTRAL_API_KEY", baseUrl: "MISTRAL_BASE_URL" },
  models: { function: "mistral-small-latest", embedding: "mistral-embed" },
  // no Responses API: /v1/responses goes through the chat translation (responses-via-chat.ts)
  features: { always: ["tools", "images", "structured_output", "embeddings"], ownHost: "api.mistral.ai" },
  catalog: "vendor",
  // OpenTelemetry's gen_ai.system value for Mistral
  genAiSystem: "mistral_ai",
  build: (config, opts) => (require("./provider") as typeof Provider).mistralProvider(config, opts, mistral),
};
