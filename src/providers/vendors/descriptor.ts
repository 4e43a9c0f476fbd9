import { ConfigError, type ProviderConfig, type ProviderFeature } from "../../config";
import type { FetchLike, Provider } from "../types";

/**
 * What one provider vendor type is, as data (ARCHITECTURE.md, "Where to add ... a provider
 * vendor"). Each type has a folder under `providers/vendors/` whose `index.ts` exports one of these,
 * listed once in `vendors/index.ts`; nothing outside that folder compares a provider's `type`
 * (test/providers/vendor-branches.test.ts). Whatever in the gateway differs by vendor reads it here.
 */
export interface VendorDescriptor {
  /** the config's `type` (`[[providers]] type = "..."`) */
  readonly type: string;
  /**
   * Its base URL: `default` when the entry names none; an entry of a type with `required` and no
   * `base_url` is refused at start (`checkProviderEntries`)
   */
  readonly baseUrl: { readonly default?: string; readonly required: boolean };
  /**
   * The headers that carry the key on the plain-HTTP transport (http-transport.ts); without it
   * `Authorization: Bearer <key>` (OpenAI's scheme, and Groq's)
   */
  readonly authHeaders?: (apiKey: string) => Record<string, string>;
  /**
   * The environment variables that enable a provider of this type named after it, without a config
   * file (docs/configuration.md); config.ts reads them (it is below providers/), and the
   * vendor-branches test checks that it reads exactly these
   */
  readonly env?: { readonly apiKey: string; readonly baseUrl: string };
  /**
   * The config keys of `[[providers]]` that only this type takes (Azure's `deployments`): an entry
   * of another type naming one is refused at start (`checkProviderEntries`)
   */
  readonly ownKeys?: readonly (keyof ProviderConfig)[];
  /** What else an entry of this type must satisfy, checked at start: the field at fault and why, or undefined */
  readonly check?: (config: ProviderConfig) => { field: string; message: string } | undefined;
  /**
   * Every gateway has an entry of this type named after it, configured or not (the offline engine:
   * config.ts adds it, being below providers/, and buildProviders does for a config built without
   * config.ts; the vendor-branches test checks the two agree)
   */
  readonly always?: boolean;
  /** models when the entry names none: for functions, for image generation, for embeddings */
  readonly models: { readonly function: string; readonly image?: string; readonly embedding?: string };
  /**
   * What its API serves beyond plain text chat when the entry names no `features`: `always`, plus
   * `remote_urls` when it is the vendor's own cloud (no `base_url`, or one on `ownHost`: a
   * self-hosted server would fetch inside the operator's network) and `embeddings` when an embedding
   * model is known
   */
  readonly features?: { readonly always: readonly ProviderFeature[]; readonly ownHost?: string };
  /**
   * Whose model catalog it serves: "vendor" (any id is the vendor's to answer, with its own 404:
   * `model_patterns` default ["*"], and its 4xx messages, written for clients, pass to /v1 clients),
   * "operator" (a self-hosted server: only the ids its entry names, unless `model_patterns` opens
   * it; the 404 for another id says so), "engine" (the offline engine: functions only)
   */
  readonly catalog: "vendor" | "operator" | "engine";
  /**
   * The model ids that are this vendor's alone (`claude-*`: no other vendor's API serves them),
   * as patterns: a provider of another type whose `model_patterns` are its default takes none of
   * them (an Anthropic entry's `*` does not send a `gpt-4o-mini` request, and its texts, to Anthropic)
   */
  readonly families?: readonly string[];
  /**
   * Where an answer or stream event carries its token usage beside OpenAI's `usage` and
   * `response.usage` (Groq: `x_groq.usage` in the last stream chunk); read by usage.ts for pricing
   * and traces
   */
  readonly usageIn?: (answer: Record<string, unknown>) => unknown;
  /** the image sizes its API takes for a model outside the known families (image-sizes.ts); none: any size */
  readonly imageSizes?: readonly string[];
  /** `gen_ai.system` of its attempt spans (tracing/otel.ts); none: the provider's configured name */
  readonly genAiSystem?: string;
  /** how the "no provider" messages suggest configuring one of this type, when they do */
  readonly setupHint?: string;
  /**
   * Its adapter for one config entry: the request and answer translation between the gateway's
   * calls (types.ts `Provider`) and the vendor's API, and its error mapping (status, retryable,
   * Retry-After into ProviderError). OpenAI-shaped APIs use openai-like.ts's OpenAILikeProvider,
   * which sends OpenAI's shape unchanged. An SDK is `require`d here, so it loads only when an entry
   * of the type is configured.
   */
  build(config: ProviderConfig, opts: AdapterOptions): Provider;
}

export interface AdapterOptions {
  /** replaces fetch for the SDK and the HTTP transport alike (tests count or fail calls with it) */
  fetch?: FetchLike;
  /**
   * what the `/v1` pass-through and function calls (chat completions) go through: "http"
   * (default), Bun's fetch straight to the API, or "sdk", the official SDK; images and embeddings
   * always use the SDK
   */
  transport?: "http" | "sdk";
  /**
   * the environment an adapter reads credentials from when its entry names none (a `bedrock`
   * entry: the AWS SDKs' AWS_* variables): config.ts reads them (Config.providerEnv) and
   * buildProviders passes them; none: an entry's own settings only
   */
  env?: Record<string, string | undefined>;
}

/** The base URL an entry's calls go to: its own, else its vendor's default. */
export function baseUrlOf(config: ProviderConfig, vendor: VendorDescriptor): string {
  const url = config.base_url ?? vendor.baseUrl.default;
  // (vendorOfEntry refuses such an entry before it is built)
  if (url === undefined) throw new ConfigError(`provider "${config.name}".base_url: required for type ${vendor.type}`);
  return url;
}

/**
 * The model a native vendor's adapter sends a function to: the entry's `models` for it, else (for
 * embeddings) its `embedding_model`, else its `default_model`, else the vendor's defaults.
 */
export function vendorModelFor(config: ProviderConfig, vendor: VendorDescriptor, fn: string): string {
  if (fn === "embeddings") return config.models?.[fn] ?? config.embedding_model ?? (vendor.models.embedding as string);
  return config.models?.[fn] ?? config.default_model ?? vendor.models.function;
}

/** Every model such an adapter may send (what /v1/models lists for it), each once. */
export function vendorModels(config: ProviderConfig, vendor: VendorDescriptor): string[] {
  return [
    ...new Set([
      config.default_model ?? vendor.models.function,
      ...Object.values(config.models ?? {}),
      config.embedding_model ?? (vendor.models.embedding as string),
    ]),
  ];
}
