import { AzureOpenAI, OpenAI } from "openai";
import type { ProviderConfig } from "../../../config";
import { HttpTransport } from "../../http-transport";
import { sharedHttp1Pool, usesHttp1 } from "../../http1";
import { type ChatBody, DEFAULT_TIMEOUT_MS, OpenAILikeProvider, type SdkBinding } from "../../openai-like";
import type { ProxyRequest } from "../../types";
import type { AdapterOptions, VendorDescriptor } from "../descriptor";
import { bindingOf } from "../openai/sdk";

/** the api-version of an entry that names none: Azure OpenAI's latest GA data-plane version */
export const DEFAULT_API_VERSION = "2024-10-21";

/** The resource's endpoint: the entry's `endpoint` or `base_url`, without a trailing `/openai[/v1]` or slash. */
function endpointOf(config: ProviderConfig): string {
  return (config.endpoint ?? config.base_url ?? "").replace(/\/+$/, "").replace(/\/openai(\/v1)?$/, "");
}

/** An entry's deployments: the names its `deployments` map gives, else the model's own. */
class AzureOpenAIProvider extends OpenAILikeProvider {
  private readonly ids: readonly string[];
  constructor(
    config: ProviderConfig,
    binding: SdkBinding,
    vendor: VendorDescriptor,
    transport: HttpTransport | undefined,
    /** the v1 API: the body's model is the deployment's name */
    private readonly deploymentOf: ((model: string) => string) | undefined,
  ) {
    super(config, binding, vendor, transport);
    this.ids = [...new Set([...super.listModels(), ...Object.keys(config.deployments ?? {})])];
  }

  override listModels(): readonly string[] {
    return this.ids;
  }

  override proxy(req: ProxyRequest): Promise<unknown> {
    return super.proxy(this.named(req));
  }

  override proxyStream(req: ProxyRequest): AsyncIterable<unknown> {
    return super.proxyStream(this.named(req));
  }

  /** For the v1 API, the body names the deployment (the deployment URLs name it themselves). */
  private named(req: ProxyRequest): ProxyRequest {
    const model = req.body.model;
    if (!this.deploymentOf || typeof model !== "string") return req;
    const deployment = this.deploymentOf(model);
    return deployment === model ? req : { ...req, body: { ...req.body, model: deployment }, text: undefined };
  }
}

export function azureProvider(config: ProviderConfig, opts: AdapterOptions, vendor: VendorDescriptor): OpenAILikeProvider {
  const endpoint = endpointOf(config);
  const v1 = config.api_version === "v1";
  const apiVersion = config.api_version ?? DEFAULT_API_VERSION;
  const deployments = config.deployments ?? {};
  const deploymentOf = (model: string) => deployments[model] ?? model;
  const token = config.azure_ad_token;
  const key = config.api_key ?? "";
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : { "api-key": key };
  const timeout = config.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  const fetchFn = opts.fetch ?? (usesHttp1(endpoint) ? sharedHttp1Pool().fetch : undefined);
  const defaultModel = config.default_model ?? vendor.models.function;
  const query = `?api-version=${encodeURIComponent(apiVersion)}`;
  const transport =
    opts.transport === "sdk"
      ? undefined
      : new HttpTransport({
          baseUrl: v1 ? `${endpoint}/openai/v1` : `${endpoint}/openai`,
          apiKey: key,
          authHeaders: auth,
          timeoutMs: timeout,
          fetch: fetchFn,
          url: v1
            ? undefined
            : (path, model) =>
                `${endpoint}/openai/deployments/${encodeURIComponent(deploymentOf(model ?? defaultModel))}${path}${query}`,
        });
  const common = { maxRetries: 0, timeout, ...(opts.fetch ? { fetch: opts.fetch } : {}) };
  const sdk = v1
    ? new OpenAI({
        apiKey: token ?? key,
        baseURL: `${endpoint}/openai/v1`,
        defaultHeaders: token ? {} : { "api-key": key },
        organization: null,
        project: null,
        ...common,
      })
    : new AzureOpenAI({
        ...(token ? { azureADTokenProvider: async () => token } : { apiKey: key }),
        endpoint,
        apiVersion,
        ...common,
      });
  return new AzureOpenAIProvider(
    config,
    deploymentBinding(bindingOf(sdk), deploymentOf),
    vendor,
    transport,
    v1 ? deploymentOf : undefined,
  );
}

/** The SDK's calls with the model as its deployment's name (the SDK puts it in the URL, or the v1 API reads it from the body). */
function deploymentBinding(b: SdkBinding, deploymentOf: (model: string) => string): SdkBinding {
  const named = <T extends { model?: unknown }>(body: T): T =>
    typeof body.model === "string" ? { ...body, model: deploymentOf(body.model) } : body;
  return {
    ...b,
    complete: (body: ChatBody, o) => b.complete(named(body), o),
    post: (path, body, o) => b.post(path, named(body), o),
    embed: b.embed && ((texts, model, o) => (b.embed as NonNullable<SdkBinding["embed"]>)(texts, deploymentOf(model), o)),
    image: b.image && ((req, o) => (b.image as NonNullable<SdkBinding["image"]>)({ ...req, model: deploymentOf(req.model) }, o)),
  };
}
