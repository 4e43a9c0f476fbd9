/**
 * What knowledge resource routes share after the edge plugin (authentication, a "standard" rate
 * limit under the resource's name): the body validated against its schema, paging, OpenAPI detail.
 */
import type { Static, TObject } from "@sinclair/typebox";
import { validateAgainst } from "../../functions/validate";
import type { Page } from "../../knowledge/interface";
import { ListQuery } from "../../knowledge/schemas";
import type { AppDeps } from "../deps";
import { limitOffset } from "../query";

export type Deps = Pick<AppDeps, "keys" | "config" | "limiter" | "signIns" | "dashboard" | "idempotency" | "ledger">;

/** The body validated against its TypeBox schema (api_key, which may ride in it, left out). */
export function validBody<S extends TObject>(deps: Deps, schema: S, payload: Record<string, unknown>): Static<S> {
  const { api_key: _key, ...body } = payload;
  // strict, as the function routes are: a misspelled field ("knowledge_base_id", "metdata") is a 400
  // naming it, never dropped from an upload or a chatbot that is then charged for
  return validateAgainst<Static<S>>(schema, body, deps.config.limits.maxTextChars, { strict: true });
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
