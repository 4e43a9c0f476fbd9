import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { API_FN } from "../../providers/chat";
import type { ProxyApi } from "../../providers/types";
import type { AppDeps } from "../deps";
import type { Edge } from "../edge";
import { edgePlugin } from "../edge-plugin";
import { ProxyPipeline } from "../proxy-pipeline";
import type { RequestState } from "../state";

export const CHAT_COMPLETIONS = API_FN["chat/completions"];

const Loose = (description: string) => T.Object({}, { additionalProperties: true, description });

/** What a route over the /v1 pipeline finds in its context (the edge's `key` credential with `body: true`). */
export type ProxyRouteContext = { request: Request; state: RequestState } & Pick<Edge, "auth"> & { payload: Edge["body"] };

/** The options of a POST route over the /v1 pipeline: its edge (usage name `fn`, the body read), a loose OpenAPI body. */
export const proxyPostOptions = (fn: string, summary: string, description: string) => ({
  key: { fn, body: true },
  parse: "none" as const,
  detail: {
    tags: ["Conversation"],
    summary,
    requestBody: {
      required: true,
      content: { "application/json": { schema: Loose(description) as unknown as Record<string, never> } },
    },
  },
});

/**
 * POST /v1/chat/completions, /v1/embeddings and /v1/responses as a faithful proxy (the body goes
 * to the provider as sent, only `model` resolved: http/proxy-pipeline.ts), with the keys, credits
 * (per token: docs/pricing.md), limits, cache and fallback of the function endpoints; GET
 * /v1/models and /v1/models/{id}. A refusal is thrown: the app's one error handler answers it in
 * OpenAI's shape.
 */
export function openAiCompatRoutes(deps: AppDeps) {
  const { router, providers } = deps;
  const proxy = new ProxyPipeline(deps);

  // `created` of the models the gateway lists: when it loaded its config (an upstream's own date is not known)
  const loadedAt = Math.floor(Date.now() / 1000);
  const PROXY_APIS = Object.keys(API_FN) as ProxyApi[];
  const modelEntry = (id: string, owner: string) => ({ id, object: "model" as const, created: loadedAt, owned_by: owner });
  /** The providers of the /v1 routes, in route order. */
  const proxyProviders = () => [...new Set(PROXY_APIS.flatMap((api) => router.proxyRoute(api)))];

  /** The models the /v1 routes' providers name, as `provider/model` and as the plain id (docs/openai-compatible.md). */
  const modelList = () => {
    // the model groups first (docs/routing.md): a public name, whatever deployment serves it
    const out: ReturnType<typeof modelEntry>[] = (router.groups?.names() ?? []).map((g) => modelEntry(g, "textai"));
    const plain = new Set<string>(router.groups?.names());
    for (const name of proxyProviders()) {
      for (const m of providers.get(name)?.listModels?.() ?? []) {
        out.push(modelEntry(`${name}/${m}`, name));
        if (!plain.has(m)) out.push(modelEntry(m, name));
        plain.add(m);
      }
    }
    return out;
  };

  /** One model: listed, or matched by a provider's pattern and in that provider's own catalog (router.modelOwner). */
  const modelById = async (id: string) => {
    const listed = modelList().find((m) => m.id === id);
    if (listed) return listed;
    if (!PROXY_APIS.some((api) => router.servesModel(api, id))) return undefined;
    const owner = await router.modelOwner(id);
    return owner === undefined ? undefined : modelEntry(id, owner);
  };

  const handler =
    (api: ProxyApi) =>
    ({ request, state, auth, payload }: ProxyRouteContext) =>
      proxy.handle(api, request, state, { auth, body: payload });
  const post = (api: ProxyApi, summary: string, description: string) => proxyPostOptions(API_FN[api], summary, description);
  // the same edge as every authenticated route (the edge plugin): authentication, then the key's rate limit
  const listing = async (state: RequestState, rawId?: string): Promise<Response> => {
    const id = rawId === undefined ? undefined : decodeURIComponent(rawId); // the edge refused a path that does not decode;
    const body = id === undefined ? { object: "list", data: modelList() } : await modelById(id);
    // no provider at all: 503 saying what to configure; else 404 naming GET /v1/models and model_patterns
    if (!body) throw router.unservedModel(id ?? "", PROXY_APIS);
    state.status = 200;
    return new Response(JSON.stringify(body), { headers: { "content-type": "application/json", ...state.headers } });
  };

  const MODELS = { fn: "models", body: false };
  return new Elysia({ name: "openai-compat" })
    .use(edgePlugin(deps))
    .post(
      "/v1/chat/completions",
      handler("chat/completions"),
      post(
        "chat/completions",
        "OpenAI-compatible chat completions (plain and stream: true), forwarded as sent; priced per token (docs/pricing.md)",
        "An OpenAI Chat Completions request: every field is forwarded to the provider as sent",
      ),
    )
    .post(
      "/v1/embeddings",
      handler("embeddings"),
      post(
        "embeddings",
        "OpenAI-compatible embeddings, forwarded as sent; priced per token (docs/pricing.md)",
        "An OpenAI Embeddings request",
      ),
    )
    .post(
      "/v1/responses",
      handler("responses"),
      post(
        "responses",
        "OpenAI Responses API, passed through to providers that implement it; priced per token (docs/pricing.md)",
        "An OpenAI Responses request: forwarded as sent to a provider with the responses feature",
      ),
    )
    .get("/v1/models", ({ state }) => listing(state), {
      key: MODELS,
      detail: { tags: ["Conversation"], summary: "Models of the configured providers, as provider/model and plain ids" },
    })
    .get("/v1/models/*", ({ state, params }) => listing(state, params["*"]), {
      key: MODELS,
      detail: { tags: ["Conversation"], summary: "One model" },
    });
}
