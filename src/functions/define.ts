import type { Static, TObject, TSchema } from "@sinclair/typebox";
import type { ChatMessage } from "../providers/types";
import type { RateClass } from "../ratelimit/interface";

/** What a function's local (offline) implementation gets besides the request. */
export interface LocalContext {
  /** the account calling, for functions that read stored resources (FAQ collections, knowledge bases) */
  accountId: string;
  signal?: AbortSignal;
  /** a secret the gateway keeps in its database, made on first use (given to `prepare` only) */
  secret?: (name: string) => Promise<string>;
  /**
   * A text the implementation sends to a provider outside the gateway itself (a query to embed),
   * as the request's guardrails let it go (docs/guardrails.md); absent: nothing is guarded.
   */
  outbound?: (text: string) => string;
  /**
   * The caller's key policy (allowed_models): every provider call the implementation makes itself
   * (a query to embed) runs under it (knowledge/embeddings.ts embedderFor); absent: any model.
   */
  allowModel?: (model: string) => boolean;
}

/**
 * The offline engine's answer for a request, or `null` when this particular request
 * is beyond it (the router then tries the next provider, or answers 503 no_provider).
 */
export type LocalImpl<Req, Res> = (req: Req, ctx: LocalContext) => Res | null | Promise<Res | null>;

export interface FunctionDef<Req extends TObject = TObject, Res extends TSchema = TSchema> {
  /** last segment of the endpoint path: "sentiment-analysis" */
  name: string;
  /** canonical path, e.g. "/api/v1/ai/sentiment-analysis" */
  path: string;
  /** further paths that run the same function */
  aliases?: string[];
  summary: string;
  description?: string;
  tags?: string[];
  /** TypeBox request schema; validation, static types and OpenAPI all come from it */
  request: Req;
  /** TypeBox result schema (what goes in data.result); providers' output is validated against it */
  result: Res;
  /** default credits per call (config `costs` overrides) */
  cost: number;
  rateClass: RateClass;
  /** bump when the prompt changes: part of the cache key */
  promptVersion: number;
  /**
   * Turns a validated request into one shape (merges variants such as chat `messages[]` vs
   * `message`+`conversation[]`). Throw `invalidRequest(...)` for cross-field rules the schema cannot say.
   */
  normalize?: (req: Static<Req>) => Static<Req>;
  /**
   * Async step after validation and before the cache and providers, with the caller's account:
   * load stored resources the request names (404 `not_found` for another account's id), retrieve
   * passages for grounding. Whatever it returns is what the cache key and the providers see.
   */
  prepare?: (req: Static<Req>, ctx: LocalContext) => Static<Req> | Promise<Static<Req>>;
  /** result schema specialised to this request (allowed_categories -> enum, extract_schema, ...) */
  resultSchemaFor?: (req: Static<Req>) => TSchema;
  /** chat messages for a generative provider */
  prompt: (req: Static<Req>) => ChatMessage[];
  /** semantic checks beyond the schema; each string is one problem (empty = valid) */
  check?: (req: Static<Req>, result: Static<Res>) => string[];
  /** turns a provider's parsed answer into the final result (fill defaults, clamp) before validation */
  postprocess?: (req: Static<Req>, result: Static<Res>) => Static<Res>;
  /** the offline engine's implementation, when it has one */
  local?: LocalImpl<Static<Req>, Static<Res>>;
  /** put the local engine first in the default route (it matches a model on this function) */
  preferLocal?: boolean;
  /** "text" (chat-completion based, the default) or "image" (image API) */
  kind?: "text" | "image";
  /** for docs and the README table */
  example: { request: Static<Req>; result: Static<Res> };
}

/** Identity helper that keeps the request/result types of a definition. */
export function defineFunction<Req extends TObject, Res extends TSchema>(def: FunctionDef<Req, Res>): FunctionDef<Req, Res> {
  return def;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds definitions of every request/result type
export type AnyFunctionDef = FunctionDef<any, any>;
