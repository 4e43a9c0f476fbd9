import type { VendorDescriptor } from "../descriptor";
import type * as Sdk from "../openai/sdk";

/**
 * Type `openai-compatible`: a server of the operator's that speaks OpenAI's API (Ollama, vLLM,
 * llama.cpp, LM Studio) at the entry's `base_url`, through the same adapter as `openai`.
 */
export const openaiCompatible: VendorDescriptor = {
  type: "openai-compatible",
  baseUrl: { required: true },
  // images only with a configured "image-generation" model, embeddings only with `embedding_model`
  models: { function: "gpt-4o-mini" },
  features: { always: ["tools", "images", "structured_output"] },
  catalog: "operator",
  setupHint: "an openai-compatible base_url such as Ollama",
  build: (config, opts) => (require("../openai/sdk") as typeof Sdk).openAiSdkProvider(config, opts, openaiCompatible),
};
