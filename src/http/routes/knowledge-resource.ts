/**
 * What every knowledge resource route does before its own logic: authenticate, rate-limit as a
 * "standard" call, validate the body against its TypeBox schema and read paging parameters.
 */
import type { Static, TObject } from "@sinclair/typebox";
import type { AppDeps } from "../../deps";
import { validateAgainst } from "../../functions/validate";
import type { Page } from "../../knowledge/interface";
import { ListQuery } from "../../knowledge/schemas";
import { type AuthedContext, authedContext } from "../context";
import { limitOffset } from "../query";
import { stateOf } from "../state";

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

/** OpenAPI detail of a resource route (cost 0 unless `cost` says otherwise). */
export function resourceDoc(summary: string, opts: { body?: TObject; description?: string; cost?: string } = {}) {
  return {
    tags: ["Knowledge"],
    summary,
    description: `${opts.description ?? summary}\n\n${opts.cost ?? "Cost: 0 credits."} Scoped to the calling account: another account's id answers 404 not_found.`,
    ...(opts.body ? { requestBody: { required: true, content: { "application/json": { schema: opts.body } } } } : {}),
  };
}
