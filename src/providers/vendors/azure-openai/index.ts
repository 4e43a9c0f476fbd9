import type { ProviderConfig } from "../../../config";
import type { VendorDescriptor } from "../descriptor";
import type * as Provider from "./provider";

/** An api-version in Azure's form: a date, perhaps a preview's */
const API_VERSION = /^\d{4}-\d{2}-\d{2}(-preview)?$/;

/** What an azure-openai entry must hold beyond the schema (docs/providers.md#azure-openai). */
function check(c: ProviderConfig): { field: string; message: string } | undefined {
  const endpoint = c.endpoint ?? c.base_url;
  if (!endpoint)
    return {
      field: "endpoint",
      message: "required for type azure-openai: the resource's https://NAME.openai.azure.com (or AZURE_OPENAI_ENDPOINT)",
    };
  if (c.endpoint && c.base_url && c.endpoint !== c.base_url)
    return { field: "endpoint", message: "endpoint and base_url are one setting for type azure-openai: give one" };
  if (!/^https?:\/\/[^/]/.test(endpoint)) return { field: c.endpoint ? "endpoint" : "base_url", message: "an http(s) URL" };
  if (c.api_version !== undefined && c.api_version !== "v1" && !API_VERSION.test(c.api_version))
    return { field: "api_version", message: 'a date such as "2024-10-21" or "2025-04-01-preview", or "v1" for the v1 API' };
  if (c.azure_ad_token && c.api_key) return { field: "azure_ad_token", message: "an api_key or an azure_ad_token, not both" };
  if (!c.azure_ad_token && !c.api_key)
    return {
      field: "api_key",
      message: "required for type azure-openai (or AZURE_OPENAI_API_KEY, api_key_env, or an azure_ad_token)",
    };
  return undefined;
}

/**
 * Type `azure-openai`: Azure OpenAI, a resource's deployments (`{endpoint}/openai/deployments/{deployment}/...?api-version=`)
 * or its v1 API (`{endpoint}/openai/v1/...`, `api_version = "v1"`), the key in `api-key` or an Entra
 * token as `Authorization: Bearer`. OpenAI's API otherwise: its adapter (./provider.ts) names the
 * deployment in the URL, and the gateway maps Azure's content filter (fallback.ts, openai-like.ts).
 */
export const azureOpenai: VendorDescriptor = {
  type: "azure-openai",
  // every resource has its own endpoint (check: endpoint or base_url)
  baseUrl: { required: false },
  env: { apiKey: "AZURE_OPENAI_API_KEY", baseUrl: "AZURE_OPENAI_ENDPOINT" },
  ownKeys: ["endpoint", "api_version", "deployments", "azure_ad_token"],
  check,
  authHeaders: (apiKey) => ({ "api-key": apiKey }),
  // a deployment of this name, unless `deployments` or `default_model` say otherwise; images and
  // embeddings only with a configured model (`models."image-generation"`, `embedding_model`)
  models: { function: "gpt-4o-mini" },
  features: { always: ["tools", "images", "structured_output"] },
  // the resource's deployments: the ids its entry names (deployments, default_model, models)
  catalog: "operator",
  genAiSystem: "az.ai.openai",
  build: (config, opts) => (require("./provider") as typeof Provider).azureProvider(config, opts, azureOpenai),
};
