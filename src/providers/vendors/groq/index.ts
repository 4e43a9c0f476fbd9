import type { VendorDescriptor } from "../descriptor";
import type * as Sdk from "./sdk";

/** Type `groq`: Groq's OpenAI-style API (function calls and /v1 over plain HTTP; embeddings through groq-sdk). */
export const groq: VendorDescriptor = {
  type: "groq",
  // Groq's SDK adds /openai/v1 to this itself (an entry may name ".../openai/v1" too)
  baseUrl: { default: "https://api.groq.com", required: false },
  env: { apiKey: "GROQ_API_KEY", baseUrl: "GROQ_BASE_URL" },
  models: { function: "llama-3.3-70b-versatile" },
  // Groq serves the Responses API at /openai/v1/responses (console.groq.com/docs/openai)
  features: { always: ["tools", "images", "structured_output", "responses"], ownHost: "api.groq.com" },
  catalog: "vendor",
  // Groq's last stream chunk carries the usage in x_groq
  usageIn: (answer) =>
    typeof answer.x_groq === "object" && answer.x_groq !== null ? (answer.x_groq as { usage?: unknown }).usage : undefined,
  genAiSystem: "groq",
  build: (config, opts) => (require("./sdk") as typeof Sdk).groqSdkProvider(config, opts, groq),
};
