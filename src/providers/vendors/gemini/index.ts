import type { VendorDescriptor } from "../descriptor";
import type * as Adapter from "./provider";

/**
 * Type `gemini`: Google's Gemini API (generateContent, streamGenerateContent, batchEmbedContents),
 * translated to and from the gateway's calls and OpenAI's shapes by its own adapter (provider.ts).
 */
export const gemini: VendorDescriptor = {
  type: "gemini",
  // as Google's SDK takes it: the adapter adds /v1beta/models/{model}:{method}
  baseUrl: { default: "https://generativelanguage.googleapis.com", required: false },
  authHeaders: (apiKey) => ({ "x-goog-api-key": apiKey }),
  env: { apiKey: "GEMINI_API_KEY", baseUrl: "GEMINI_BASE_URL" },
  models: { function: "gemini-2.5-flash", embedding: "gemini-embedding-001" },
  // inline images, audio and files (data: URLs); Gemini fetches no URL it is given (no remote_urls),
  // and has no Responses API (answered through chat completions)
  features: { always: ["tools", "images", "audio", "files", "structured_output", "embeddings"] },
  catalog: "vendor",
  families: ["gemini-*", "models/gemini-*"],
  genAiSystem: "gcp.gemini",
  build: (config, opts) => (require("./provider") as typeof Adapter).geminiProvider(config, opts, gemini),
};
