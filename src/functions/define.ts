import type { Static, TObject, TSchema } from "@sinclair/typebox";
import type { ChatMessage } from "../providers/types";
import type { RateClass } from "../ratelimit/interface";
import { type Lists, pinned } from "./constrain";
import { buildPrompt, type PromptSpec, pinTo } from "./prompt";

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

/** What buildPrompt lays out besides the role: rules, the caller's instructions, the inputs. */
export interface Brief extends Omit<PromptSpec, "role" | "result"> {
  /** the answer format; default: the request's result schema (`resultSchemaFor`, else `result`) */
  result?: TSchema;
}

/** A function's prompt: `role` and `brief` laid out by buildPrompt (prompt.ts), or `prompt` written out. */
type PromptOf<Req extends TObject> =
  | {
      /** who the model is and what it does, in one or two sentences */
      role: string;
      /** the rest of the prompt for one request */
      brief: (req: Static<Req>) => Brief;
      /**
       * Result fields pinned to the caller's lists (`{ category: req.allowed_categories }`): each is a
       * rule ahead of the brief's (prompt.ts pinTo), and the answer is held to it (constrain.ts pinned:
       * spelling drift mapped to the caller's spelling, a value outside the list a problem to repair).
       */
      pins?: (req: Static<Req>) => Lists;
      prompt?: never;
    }
  | { prompt: (req: Static<Req>) => ChatMessage[]; role?: never; brief?: never; pins?: never };

/** What the gateway assumes when a definition does not say otherwise. */
export const FUNCTION_DEFAULTS = {
  /** `/api/v1/ai/<name>` */
  pathOf: (name: string) => `/api/v1/ai/${name}`,
  tags: ["text"],
  cost: 1,
  rateClass: "standard",
  promptVersion: 1,
} as const satisfies Partial<Record<keyof FunctionDef, unknown>> & { pathOf: (name: string) => string };

/**
 * What a function file states: its own fields only. path, tags, cost, rateClass and promptVersion
 * default to FUNCTION_DEFAULTS; the prompt is a role and a brief (or a `prompt` written out).
 */
export type FunctionSpec<Req extends TObject, Res extends TSchema> = Omit<
  FunctionDef<Req, Res>,
  "path" | "tags" | "cost" | "rateClass" | "promptVersion" | "prompt"
> &
  Partial<Pick<FunctionDef<Req, Res>, "path" | "tags" | "cost" | "rateClass" | "promptVersion">> &
  PromptOf<Req>;

/** A definition from its file's own fields, the defaults filled in and the prompt built. */
export function defineFunction<Req extends TObject, Res extends TSchema>(spec: FunctionSpec<Req, Res>): FunctionDef<Req, Res> {
  const { role, brief, pins, prompt, ...own } = spec;
  if (pins && (own.postprocess || own.check)) throw new Error(`${spec.name}: pins makes postprocess and check`);
  return {
    path: FUNCTION_DEFAULTS.pathOf(spec.name),
    tags: [...FUNCTION_DEFAULTS.tags],
    cost: FUNCTION_DEFAULTS.cost,
    rateClass: FUNCTION_DEFAULTS.rateClass,
    promptVersion: FUNCTION_DEFAULTS.promptVersion,
    ...own,
    ...(pins && (pinned<Static<Req>, Static<Res> & object>(pins) as Pick<FunctionDef<Req, Res>, "postprocess" | "check">)),
    prompt: prompt ?? briefPrompt(role, brief, pins, spec),
  };
}

function briefPrompt<Req extends TObject>(
  role: string,
  brief: (req: Static<Req>) => Brief,
  pins: ((req: Static<Req>) => Lists) | undefined,
  def: Pick<FunctionDef<Req>, "result" | "resultSchemaFor">,
): (req: Static<Req>) => ChatMessage[] {
  const { result, resultSchemaFor } = def;
  return (req) => {
    const parts = brief(req);
    const pinRules = pins ? Object.entries(pins(req)).map(([field, allowed]) => pinTo(field, allowed)) : [];
    const rules = pins ? [...pinRules, ...(parts.rules ?? [])] : parts.rules;
    return buildPrompt({ role, ...parts, rules, result: parts.result ?? resultSchemaFor?.(req) ?? result });
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds definitions of every request/result type
export type AnyFunctionDef = FunctionDef<any, any>;
