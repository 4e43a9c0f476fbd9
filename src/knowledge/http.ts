/**
 * What every knowledge resource route does before its own logic: authenticate, rate-limit as a
 * "standard" call, validate the body against its TypeBox schema and read paging parameters.
 */
import type { Static, TObject } from "@sinclair/typebox";
import type { AppDeps } from "../deps";
import { validateAgainst } from "../functions/validate";
import { type AuthedContext, authedContext } from "../http/context";
import { limitOffset } from "../http/query";
import { stateOf } from "../http/state";
import type { Page } from "./interface";
import { ListQuery } from "./schemas";

export type Deps = Pick<AppDeps, "keys" | "config" | "limiter">;

export async function resourceContext(
  deps: Deps,
  resource: string,
  request: Request,
  params: Record<string, string> = {},
  query: Record<string, string | undefined> = {},
): Promise<AuthedContext> {
  return authedContext(deps, resource, request, stateOf(request), params, query);
}

export function validBody<S extends TObject>(deps: Deps, schema: S, ctx: AuthedContext): Static<S> {
  const { api_key: _key, ...body } = ctx.body;
  return validateAgainst<Static<S>>(schema, body, deps.config.limits.maxTextChars);
}

/** `?limit=&offset=`; limit defaults to 20, at most 100. */
export function pageOf(query: Record<string, string | undefined>): Page {
  return limitOffset(query, ListQuery.defaultLimit, ListQuery.maxLimit);
}

/** OpenAPI detail of a resource route (cost 0). */
export function resourceDoc(summary: string, opts: { body?: TObject; description?: string } = {}) {
  return {
    tags: ["Knowledge"],
    summary,
    description: `${opts.description ?? summary}\n\nCost: 0 credits. Scoped to the calling account: another account's id answers 404 not_found.`,
    ...(opts.body ? { requestBody: { required: true, content: { "application/json": { schema: opts.body } } } } : {}),
  };
}
