/**
 * Routes of knowledge bases, FAQ collections and chatbots. Resource management (cost 0) answers
 * through `ok`; search, FAQ match and chat are functions run by the pipeline.
 */
import { type TObject, Type } from "@sinclair/typebox";
import { type DocumentDecoration, Elysia } from "elysia";
import type { AuthInfo } from "../../auth/interface";
import { keyBudget, modelFilter } from "../../auth/policy";
import { type KnowledgeQuota, knowledgeQuotaFor } from "../../config";
import { invalidRequest } from "../../errors";
import type { AnyFunctionDef } from "../../functions/define";
import { knowledgeFunctions } from "../../functions/registry";
import { type Embedder, embedderFor, pickEmbedder, VectorCache } from "../../knowledge/embeddings";
import type { Chatbots, FaqCollections, KnowledgeBases } from "../../knowledge/interface";
import {
  AddDocuments,
  CreateChatbot,
  CreateFaqCollection,
  CreateKnowledgeBase,
  UpdateKnowledgeBase,
} from "../../knowledge/schemas";
import {
  CHATBOT_STORAGE_FN,
  chargedStore,
  FAQ_STORAGE_FN,
  faqStoragePrice,
  type StorageCall,
  storageCostOf,
} from "../../knowledge/storage-charge";
import { uploadDocuments } from "../../knowledge/upload";
import type { MaybePromise } from "../../maybe";
import type { AppDeps } from "../deps";
import { edgePlugin, functionEdge } from "../edge-plugin";
import { idempotentResource } from "../idempotent";
import type { FunctionPipeline } from "../pipeline";
import { ok } from "../respond";
import type { RequestState } from "../state";
import { functionDoc } from "./functions";
import { collectionRoutes } from "./knowledge-collections";
import { type Deps, pageOf, resourceDoc, validBody } from "./knowledge-resource";

type Params = Record<string, string>;
type Query = Record<string, string | undefined>;
/** a function route's context, after the edge plugin */
type Routed = { request: Request; params: Params; state: RequestState; auth: AuthInfo; payload: Record<string, unknown> };

/** The function's OpenAPI detail, with the body clients send (no path or gateway-set fields). */
function chargedDoc(
  pipeline: FunctionPipeline,
  def: AnyFunctionDef,
  hidden: string[],
  operationId = def.name,
): DocumentDecoration {
  const doc = functionDoc(def, pipeline.costOf(def));
  const body = Type.Omit(def.request as TObject, hidden);
  const content = { "application/json": { schema: body, example: def.example.request } };
  // functionDoc builds a plain OpenAPI operation; Elysia's type for it is narrower than what it accepts.
  return { ...doc, operationId, requestBody: { required: true, content } } as DocumentDecoration;
}

type KnowledgeFns = ReturnType<typeof knowledgeFunctions>;

/**
 * Where each knowledge function is mounted: its path, the request fields its path carries, those the
 * gateway sets from the stored resource (no client sends them: left out of the docs' body and the
 * playground's form), and its OpenAPI operation id when its name is another's (the inline search).
 */
export const KNOWLEDGE_FUNCTION_ROUTES: Record<
  keyof KnowledgeFns,
  { path: string; inPath: string[]; gatewaySet: string[]; operationId?: string }
> = {
  search: { path: "/api/v1/knowledge-bases/:id/search", inPath: ["id"], gatewaySet: ["revision"] },
  inlineSearch: { path: "/api/v1/ai/knowledge-bases", inPath: [], gatewaySet: [], operationId: "knowledge-base-search-inline" },
  faqMatch: { path: "/api/v1/ai/faq-match", inPath: [], gatewaySet: ["faqs"] },
  chat: { path: "/api/v1/chatbots/:id/chat", inPath: ["id"], gatewaySet: ["chatbot", "passages"] },
};

const builtFns = new WeakMap<object, KnowledgeFns>();
/** The app's knowledge functions with its services: built once per app, for its routes and the dashboard's playground. */
export function appKnowledgeFunctions(deps: Pick<AppDeps, "knowledge" | "providers">): KnowledgeFns {
  let fns = builtFns.get(deps.knowledge);
  if (!fns) {
    fns = knowledgeFunctions({ index: deps.knowledge, embedder: pickEmbedder(deps.providers), vectors: new VectorCache() });
    builtFns.set(deps.knowledge, fns);
  }
  return fns;
}

const docOf = (pipeline: FunctionPipeline, fns: KnowledgeFns, which: keyof KnowledgeFns) => {
  const r = KNOWLEDGE_FUNCTION_ROUTES[which];
  return chargedDoc(pipeline, fns[which], [...r.inPath, ...r.gatewaySet], r.operationId);
};

/** The knowledge resources (bases, FAQ collections, chatbots) and their functions, mounted last by app.ts. */
export function knowledgeRoutes(deps: AppDeps & { pipeline: FunctionPipeline }): Elysia {
  const { bases: kbs, faqs, chatbots: bots } = deps.knowledge;
  const embedder = pickEmbedder(deps.providers);
  const fns = appKnowledgeFunctions(deps);
  const R = KNOWLEDGE_FUNCTION_ROUTES;
  const { pipeline } = deps;
  const run =
    (def: AnyFunctionDef) =>
    ({ request, params, state, auth, payload }: Routed) =>
      pipeline.handle(def, request, state, { auth, body: payload }, params);

  const app = new Elysia({ name: "knowledge" })
    .use(edgePlugin(deps))
    .use(knowledgeBaseRoutes(deps, kbs, embedder))
    .use(faqRoutes(deps, faqs))
    .use(chatbotRoutes(deps, bots))
    .post(R.search.path, run(fns.search), {
      key: functionEdge(fns.search),
      parse: "none",
      detail: docOf(pipeline, fns, "search"),
    })
    .post(R.inlineSearch.path, run(fns.inlineSearch), {
      key: functionEdge(fns.inlineSearch),
      parse: "none",
      detail: docOf(pipeline, fns, "inlineSearch"),
    })
    .post(R.faqMatch.path, run(fns.faqMatch), {
      key: functionEdge(fns.faqMatch),
      parse: "none",
      detail: docOf(pipeline, fns, "faqMatch"),
    })
    .post(R.chat.path, run(fns.chat), {
      key: functionEdge(fns.chat),
      parse: "none",
      detail: docOf(pipeline, fns, "chat"),
    });
  // app.ts mounts it last; its route-level types matter to no caller (and would only weigh on the App type).
  return app as unknown as Elysia;
}

/** The account's plan (its knowledge quota), as the account row holds it. */
async function planOf(deps: Pick<AppDeps, "keys">, accountId: string): Promise<string> {
  return (await deps.keys.getAccount(accountId))?.plan ?? "free";
}

function knowledgeBaseRoutes(deps: Deps & Pick<AppDeps, "ledger" | "metrics">, kbs: KnowledgeBases, embedder: Embedder | null) {
  const R = "knowledge-bases";
  return new Elysia({ name: "knowledge-bases" })
    .use(edgePlugin(deps))
    .use(
      collectionRoutes(deps, {
        resource: R,
        path: "/api/v1/knowledge-bases",
        noun: "knowledge base",
        plural: "knowledge bases",
        createSchema: CreateKnowledgeBase,
        docs: {
          create: "Create a knowledge base",
          createDescription:
            "status is active (default) or inactive; chatbots skip inactive knowledge bases, direct search still works.",
          get: "Get a knowledge base with its document and chunk counts",
          delete: "Delete a knowledge base with its documents and their index entries",
        },
        // the plan's knowledge_bases quota
        create: async (accountId, body) =>
          kbs.create(accountId, body, knowledgeQuotaFor(deps.config, await planOf(deps, accountId)).bases),
        store: kbs,
      }),
    )
    .patch(
      "/api/v1/knowledge-bases/:id",
      async ({ state, auth, payload, params }) => {
        const body = validBody(deps, UpdateKnowledgeBase, payload);
        return ok(state, "knowledge base updated", await kbs.update(auth.accountId, params.id, body));
      },
      {
        key: { fn: R },
        parse: "none",
        detail: resourceDoc("Update a knowledge base's name, description or status", { body: UpdateKnowledgeBase }),
      },
    )
    .post(
      "/api/v1/knowledge-bases/:id/documents",
      async ({ request, state, auth, payload, params }) => {
        const body = validBody(deps, AddDocuments, payload);
        const docs =
          body.documents ??
          (body.content !== undefined ? [{ title: body.title, content: body.content, metadata: body.metadata }] : null);
        if (!docs) throw invalidRequest("documents is required (or content, for a single document)", "documents");
        // a retry with the same Idempotency-Key gets the first answer: uploaded and charged once
        return idempotentResource(
          {
            ...deps,
            request,
            state,
            accountId: auth.accountId,
            route: "POST /api/v1/knowledge-bases/:id/documents",
            body: { id: params.id, docs },
          },
          async () => {
            const upload = await uploadDocuments(
              {
                bases: kbs,
                ledger: deps.ledger,
                // the key's allowed_models bind the embeddings too: a model it may not use is not called or charged
                embedder: embedderFor(embedder, modelFilter(auth.policy)),
                config: deps.config,
                accountId: auth.accountId,
                plan: await planOf(deps, auth.accountId),
                keyId: auth.keyId,
                budget: keyBudget(auth),
                requestId: state.requestId,
                signal: request.signal,
              },
              params.id,
              docs,
            );
            for (const { fn, amount } of upload.charges)
              deps.metrics.inc("textai_credits_charged_total", "Credits charged", { function: fn }, amount);
            state.credits = upload.charged;
            state.creditsRemaining = upload.remaining;
            return ok(state, "documents added", { data: upload.added, count: upload.added.length }, 201);
          },
        );
      },
      {
        key: { fn: R },
        parse: "none",
        detail: resourceDoc("Add documents (texts or {title, content, metadata}); they are chunked and indexed", {
          body: AddDocuments,
          description:
            "Send documents[] (1 to 100 texts or {title, content, metadata} objects, each up to 100,000 characters) or one document as {title, content, metadata}. A knowledge base holds up to 10,000 documents and 100,000 chunks; the account's plan caps its documents and bytes over all its bases (403 forbidden past them).",
          cost: "Cost: knowledge-indexing (default 1) per started 10,000 characters of content, plus knowledge-embedding (default 1) per started 10,000 characters sent to the embedding provider when hybrid search is on; held before any work (402 insufficient_credits, nothing stored), charged once stored.",
        }),
      },
    )
    .get(
      "/api/v1/knowledge-bases/:id/documents",
      async ({ state, auth, params, query }) =>
        ok(state, "documents", await kbs.listDocuments(auth.accountId, params.id, pageOf(query as Query))),
      { key: { fn: R }, detail: resourceDoc("List a knowledge base's documents (oldest first; ?limit=&offset=)") },
    )
    .delete(
      "/api/v1/knowledge-bases/:id/documents/:doc_id",
      async ({ state, auth, params }) => {
        await kbs.deleteDocument(auth.accountId, params.id, params.doc_id);
        return ok(state, "document deleted", { id: params.doc_id, deleted: true });
      },
      { key: { fn: R }, detail: resourceDoc("Delete a document and its chunks from the index") },
    );
}

type StoreDeps = Deps & Pick<AppDeps, "ledger" | "metrics">;

/** What storing needs of a call: its ledger, key, budget and request (storage-charge.ts). */
const storageCall = (deps: StoreDeps, auth: AuthInfo, state: RequestState): StorageCall => ({
  ledger: deps.ledger,
  config: deps.config,
  accountId: auth.accountId,
  keyId: auth.keyId,
  budget: keyBudget(auth),
  requestId: state.requestId,
});

/** Notes a storage charge on the answer (meta.credits_deducted, the balance) and in the metrics. */
function noteCharge<V>(deps: StoreDeps, state: RequestState, fn: string, r: { view: V; charged: number; remaining: number }): V {
  if (r.charged > 0) deps.metrics.inc("textai_credits_charged_total", "Credits charged", { function: fn }, r.charged);
  state.credits = r.charged;
  state.creditsRemaining = r.remaining;
  return r.view;
}

/**
 * A collection stored under its storage charge (storage-charge.ts: held before it is stored, charged
 * once it is) within the plan's knowledge quota, the charge noted on the answer.
 */
async function chargedCreate<V>(
  deps: StoreDeps,
  { auth, state }: { auth: AuthInfo; state: RequestState },
  accountId: string,
  fn: string,
  price: number,
  what: string,
  store: (quota: KnowledgeQuota) => MaybePromise<V>,
): Promise<V> {
  const quota = knowledgeQuotaFor(deps.config, await planOf(deps, accountId));
  const r = await chargedStore(storageCall(deps, auth, state), fn, price, what, () => store(quota));
  return noteCharge(deps, state, fn, r);
}

const faqRoutes = (deps: StoreDeps, faqs: FaqCollections) =>
  collectionRoutes(deps, {
    resource: "faq-collections",
    path: "/api/v1/ai/faq-collections",
    noun: "FAQ collection",
    plural: "FAQ collections",
    createSchema: CreateFaqCollection,
    docs: {
      create: "Create a FAQ collection (name, faqs[] of {question, answer}; up to 1,000)",
      createCost:
        "Cost: faq-storage (default 1) per started 10,000 characters of questions and answers; held before it is stored (402 insufficient_credits, nothing stored), charged once stored. The plan's knowledge_faq_collections and knowledge_bytes quotas apply (403 forbidden past them).",
      get: "Get a FAQ collection with its FAQs",
      delete: "Delete a FAQ collection",
    },
    create: (accountId, body, call) =>
      chargedCreate(
        deps,
        call,
        accountId,
        FAQ_STORAGE_FN,
        faqStoragePrice(deps.config, body.faqs),
        "this FAQ collection",
        (quota) => faqs.create(accountId, body, quota),
      ),
    store: faqs,
  });

const chatbotRoutes = (deps: StoreDeps, bots: Chatbots) =>
  collectionRoutes(deps, {
    resource: "chatbots",
    path: "/api/v1/chatbots",
    noun: "chatbot",
    plural: "chatbots",
    createSchema: CreateChatbot,
    docs: {
      create: "Create a chatbot (mode support or assistant; knowledge_base_ids of the account)",
      createCost:
        "Cost: chatbot-storage (default 1) per chatbot; held before it is stored (402 insufficient_credits, nothing stored), charged once stored. The plan's knowledge_chatbots quota applies (403 forbidden past it).",
      get: "Get a chatbot",
      delete: "Delete a chatbot",
    },
    create: (accountId, body, call) =>
      chargedCreate(
        deps,
        call,
        accountId,
        CHATBOT_STORAGE_FN,
        storageCostOf(deps.config, CHATBOT_STORAGE_FN),
        "a chatbot",
        (quota) => bots.create(accountId, body, quota),
      ),
    store: bots,
  });
