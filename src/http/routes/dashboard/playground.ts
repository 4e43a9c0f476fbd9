/**
 * What the playground offers: every function the gateway serves, from the registry (the app's
 * functions, then the knowledge functions with the app's services), so a new one appears by itself.
 * Each with the name the playground knows it by (its own, or its OpenAPI operation id when its name
 * is another's: the inline knowledge-base search), the path its curl shows, the fields its path
 * carries (a form field here, put into the curl's path), and the form's schema: its request without
 * the fields the gateway sets. Its example is the function's own, with the id of one of the
 * account's own knowledge bases, FAQ collections or chatbots where it reads one (the account has
 * none: the example's id, which the call answers 404 for, saying so).
 */
import { type TObject, Type } from "@sinclair/typebox";
import { GatewayError } from "../../../errors";
import type { AnyFunctionDef } from "../../../functions/define";
import type { AppDeps } from "../../deps";
import { appKnowledgeFunctions, KNOWLEDGE_FUNCTION_ROUTES } from "../knowledge";

export interface PlaygroundFunction {
  /** the name the playground knows it by (`?fn=`, `/dashboard/api/playground/:fn`) */
  id: string;
  def: AnyFunctionDef;
  /** its API path, `:id` where its path carries a field */
  path: string;
  inPath: string[];
  /** the form's fields: the request's, without those the gateway sets */
  schema: unknown;
  /** the stored resource whose id it reads, if any */
  reads?: "knowledge-base" | "faq-collection" | "chatbot";
}

const READS: Record<string, PlaygroundFunction["reads"]> = {
  search: "knowledge-base",
  faqMatch: "faq-collection",
  chat: "chatbot",
};

const cache = new WeakMap<object, PlaygroundFunction[]>();

/** Every function the playground offers, in the registry's order, the knowledge functions last. */
export function playgroundFunctions(deps: Pick<AppDeps, "functions" | "knowledge" | "providers">): PlaygroundFunction[] {
  // per app: the knowledge functions are bound to its stores (several apps share one FUNCTIONS array)
  const known = cache.get(deps.knowledge);
  if (known) return known;
  const list: PlaygroundFunction[] = deps.functions.map((def) => ({
    id: def.name,
    def,
    path: def.path,
    inPath: [],
    schema: def.request,
  }));
  const fns = appKnowledgeFunctions(deps);
  for (const which of Object.keys(KNOWLEDGE_FUNCTION_ROUTES) as (keyof typeof KNOWLEDGE_FUNCTION_ROUTES)[]) {
    const r = KNOWLEDGE_FUNCTION_ROUTES[which];
    const def = fns[which];
    list.push({
      id: r.operationId ?? def.name,
      def,
      path: r.path,
      inPath: r.inPath,
      schema: r.gatewaySet.length ? Type.Omit(def.request as TObject, r.gatewaySet) : def.request,
      reads: READS[which],
    });
  }
  cache.set(deps.knowledge, list);
  return list;
}

/** The function the playground runs by that name: 404 for a name none has. */
export function playgroundFunction(deps: Pick<AppDeps, "functions" | "knowledge" | "providers">, id: string | undefined) {
  const f = playgroundFunctions(deps).find((p) => p.id === id);
  if (!f) throw new GatewayError("not_found", `no function ${id}`);
  return f;
}

/** The function's example, with one of the account's own resources where it reads one. */
export async function playgroundExample(
  deps: Pick<AppDeps, "knowledge">,
  f: PlaygroundFunction,
  accountId: string,
): Promise<Record<string, unknown>> {
  const example = { ...(f.def.example.request as Record<string, unknown>) };
  const first = { limit: 1, offset: 0 };
  const k = deps.knowledge;
  const own =
    f.reads === "knowledge-base"
      ? (await k.bases.list(accountId, first)).data[0]?.id
      : f.reads === "faq-collection"
        ? (await k.faqs.list(accountId, first)).data[0]?.id
        : f.reads === "chatbot"
          ? (await k.chatbots.list(accountId, first)).data[0]?.id
          : undefined;
  if (own) example[f.reads === "faq-collection" ? "collection_id" : "id"] = own;
  return example;
}
