import { ConfigError, type ProviderConfig } from "../../config";
import { anthropic } from "./anthropic";
import { azureOpenai } from "./azure-openai";
import { bedrock } from "./bedrock";
import type { VendorDescriptor } from "./descriptor";
import { gemini } from "./gemini";
import { groq } from "./groq";
import { local } from "./local";
import { mistral } from "./mistral";
import { mock } from "./mock";
import { openai } from "./openai";
import { openaiCompatible } from "./openai-compatible";

/**
 * The provider vendor types the gateway knows: one line per type, its descriptor in its own folder
 * (ARCHITECTURE.md, "Where to add ... a provider vendor"). The order is the docs' and the setup
 * messages' (OPENAI_API_KEY, GROQ_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, MISTRAL_API_KEY, AZURE_OPENAI_API_KEY).
 */
const DESCRIPTORS: readonly VendorDescriptor[] = [
  openai,
  groq,
  anthropic,
  gemini,
  mistral,
  azureOpenai,
  bedrock,
  openaiCompatible,
  local,
  mock,
];

const BY_TYPE = new Map(DESCRIPTORS.map((v) => [v.type, v]));

/** every type a `[[providers]]` entry may name, in registry order */
export const PROVIDER_TYPES: readonly string[] = DESCRIPTORS.map((v) => v.type);

/** The descriptor of a provider type; undefined for a type no entry can have (checkProviderEntries refuses it). */
export function vendorOf(type: string): VendorDescriptor | undefined {
  return BY_TYPE.get(type);
}

/**
 * The model families (VendorDescriptor.families) of every vendor but `type`, less its own: the ids
 * a provider of `type` does not take through its default `model_patterns`.
 */
export function otherVendorsModels(type: string): readonly string[] {
  const own = new Set(vendorOf(type)?.families ?? []);
  return DESCRIPTORS.filter((v) => v.type !== type).flatMap((v) => (v.families ?? []).filter((f) => !own.has(f)));
}

/** every descriptor, in registry order */
export function vendors(): readonly VendorDescriptor[] {
  return DESCRIPTORS;
}

/**
 * The descriptor of a `[[providers]]` entry, checking what config.ts cannot, being below
 * providers/: that its type is one of the registry's, and that it has the base URL its type
 * requires. `at` names the entry in the error, as config.ts's errors do.
 */
export function vendorOfEntry(p: ProviderConfig, at = `provider "${p.name}"`): VendorDescriptor {
  const vendor = vendorOf(p.type);
  if (!vendor) throw new ConfigError(`${at}.type: unknown provider type "${p.type}" (one of ${PROVIDER_TYPES.join(", ")})`);
  if (vendor.baseUrl.required && !p.base_url) throw new ConfigError(`${at}.base_url: required for type ${vendor.type}`);
  if (p.base_url !== undefined) checkBaseUrl(p.base_url, `${at}.base_url`);
  for (const key of Object.keys(p)) {
    const owners = KEY_OWNERS.get(key);
    if (owners && !owners.includes(vendor.type))
      throw new ConfigError(`${at}.${key}: only for type ${either(owners)}, not ${vendor.type}`);
  }
  const problem = vendor.check?.(p);
  if (problem) throw new ConfigError(`${at}.${problem.field}: ${problem.message}`);
  return vendor;
}

/**
 * A base URL every call would fail on is refused at start, not at the first call: it must be an
 * http(s) URL with a host ("localhost:11434/v1", Ollama's address without its scheme, reads as a URL
 * of scheme "localhost:"; "file:///..." is no server).
 */
function checkBaseUrl(raw: string, field: string): void {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {}
  if (url && (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "") return;
  const bare = !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw);
  throw new ConfigError(`${field}: "${raw}" is not an http(s) URL${bare ? ` (with its scheme: "http://${raw}")` : ""}`);
}

/** each config key some types own (`ownKeys`), with those types */
const KEY_OWNERS = new Map<string, string[]>();
for (const v of DESCRIPTORS) for (const key of v.ownKeys ?? []) KEY_OWNERS.set(key, [...(KEY_OWNERS.get(key) ?? []), v.type]);

/** Every entry checked (vendorOfEntry), before any is built: at start (buildProviders). */
export function checkProviderEntries(entries: readonly ProviderConfig[]): void {
  for (const [i, p] of entries.entries()) vendorOfEntry(p, `providers[${i}]`);
}

/** "a", "a or b", "a, b or c" */
function either(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

/** What the "no provider" messages tell an operator to set (the environment variables of the types that have them). */
export function setupAdvice(): { keys: string; hint: string | undefined; imageKeys: string; imageTypes: string } {
  // the vendors that generate images with no model configured (not a test double)
  const imaging = DESCRIPTORS.filter((v) => v.models.image !== undefined && v.catalog === "vendor");
  return {
    keys: either(DESCRIPTORS.flatMap((v) => (v.env ? [v.env.apiKey] : []))),
    hint: DESCRIPTORS.find((v) => v.setupHint)?.setupHint,
    imageKeys: either(imaging.flatMap((v) => (v.env ? [v.env.apiKey] : []))),
    imageTypes: either(imaging.map((v) => `"${v.type}"`)),
  };
}
