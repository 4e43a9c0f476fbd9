import { GPT_IMAGE_SIZES } from "../../image-sizes";
import type { VendorDescriptor } from "../descriptor";
import type * as Sdk from "./sdk";

/** Type `openai`: OpenAI's API (function calls and /v1 over plain HTTP; images and embeddings through the openai SDK). */
export const openai: VendorDescriptor = {
  type: "openai",
  baseUrl: { default: "https://api.openai.com/v1", required: false },
  env: { apiKey: "OPENAI_API_KEY", baseUrl: "OPENAI_BASE_URL" },
  models: { function: "gpt-4o-mini", image: "gpt-image-1", embedding: "text-embedding-3-small" },
  features: {
    always: ["tools", "images", "audio", "files", "structured_output", "responses", "embeddings"],
    ownHost: "api.openai.com",
  },
  catalog: "vendor",
  families: [
    "gpt-*",
    "chatgpt-*",
    "o1",
    "o1-*",
    "o3",
    "o3-*",
    "o4-*",
    "text-embedding-3-*",
    "text-embedding-ada-*",
    "dall-e-*",
    "gpt-image-*",
    "omni-moderation-*",
    "codex-*",
    "computer-use-*",
  ],
  // another model than a known family's: the gpt-image sizes (the default image model's; square is safe everywhere)
  imageSizes: GPT_IMAGE_SIZES,
  genAiSystem: "openai",
  // the SDK (about 20 MB and 60 ms to load) only when an entry of the type is configured
  build: (config, opts) => (require("./sdk") as typeof Sdk).openAiSdkProvider(config, opts, openai),
};
