/**
 * What every route that takes an `Idempotency-Key` shares (docs/credits-limits-cache.md,
 * "Idempotency"): the key's check, the refusals of a repeat that cannot be replayed, and a replay
 * of the stored answer under the repeat's own request id, saying nothing was charged this time.
 * The function pipeline (http/pipeline.ts) and the resource routes that make something
 * (`idempotentResource`: uploads, FAQ collections, chatbots, knowledge bases) use them alike.
 */
import { canonicalJson, digest } from "../cache/canonical";
import type { CreditLedger } from "../credits/interface";
import { GatewayError } from "../errors";
import type { IdempotencyBegin, IdempotencyStore, StoredResponse } from "../idempotency/interface";
import { mark, type RequestState, serverTiming } from "./state";

/** The request's `Idempotency-Key`, checked (1 to 255 characters); null without one. */
export function idempotencyKeyOf(request: Request): string | null {
  const key = request.headers.get("idempotency-key");
  if (key !== null && (key.length === 0 || key.length > 255))
    throw new GatewayError("invalid_request", "Idempotency-Key must be 1 to 255 characters", { param: "Idempotency-Key" });
  return key;
}

/** A repeat that is neither new nor a replay (a mismatch, one in flight, an answer not kept): refused. */
export function refuseRepeat(
  begun: IdempotencyBegin,
  what = "another function or another body",
): asserts begun is Extract<IdempotencyBegin, { state: "new" | "replay" }> {
  if (begun.state === "mismatch")
    throw new GatewayError(
      "idempotency_mismatch",
      `this Idempotency-Key was already used for a different request (${what}); use a new key for a new request`,
    );
  if (begun.state === "in_flight") throw new GatewayError("conflict", "a request with this Idempotency-Key is still in progress");
  if (begun.state === "gone")
    throw new GatewayError(
      "conflict",
      "a request with this Idempotency-Key already completed, and its answer was too large to keep; use a new key",
    );
}

/** The stored answer under this request's id, saying that nothing was charged this time. */
export function replayStored(stored: StoredResponse, state: RequestState, balance: number): Response {
  state.credits = 0;
  state.replayed = true;
  state.status = stored.status;
  let body = stored.body;
  try {
    const env = JSON.parse(stored.body) as { request_id?: string; meta?: Record<string, unknown> };
    env.request_id = state.requestId;
    if (env.meta) {
      env.meta.credits_deducted = 0;
      env.meta.credits_remaining = balance;
      env.meta.timestamp = new Date().toISOString();
      // the replay's own time, not the first answer's
      if ("execution_time_ms" in env.meta) env.meta.execution_time_ms = Math.round(performance.now() - state.startedPerf);
    }
    body = JSON.stringify(env);
  } catch {
    // not an envelope: replayed as it was
  }
  mark(state, "total", state.startedPerf);
  return new Response(body, {
    status: stored.status,
    headers: {
      "content-type": "application/json",
      "Server-Timing": serverTiming(state),
      ...stored.headers,
      ...state.headers,
      "idempotent-replayed": "true",
    },
  });
}

export interface ResourceCall {
  idempotency: IdempotencyStore;
  ledger: Pick<CreditLedger, "balance">;
  request: Request;
  state: RequestState;
  accountId: string;
  /** the route, so that a key reused on another route is a mismatch ("POST /api/v1/chatbots") */
  route: string;
  /** the validated body: a repeat with another body is a mismatch */
  body: unknown;
}

/**
 * A resource route's work under the request's `Idempotency-Key`, if it has one: the first request
 * runs `make` and its answer (a success; a refusal frees the key) is kept for the key's lifetime;
 * a repeat with the same body gets that answer again, nothing made or charged twice. Before
 * (2026-12-06) the key was refused on these routes. A repeat whose first request died before its
 * answer was kept (a process killed mid-call) is refused with 409: whether it made the resource
 * cannot be known from the key alone, and the message says to look before making it again.
 */
export async function idempotentResource(call: ResourceCall, make: () => Promise<Response>): Promise<Response> {
  const key = idempotencyKeyOf(call.request);
  if (key === null) return make();
  const { idempotency, state, accountId } = call;
  const begun = await idempotency.begin(accountId, key, digest(call.route, canonicalJson(call.body)), state.requestId);
  refuseRepeat(begun, "another route or another body");
  if (begun.state === "replay") return replayStored(begun.response, state, await call.ledger.balance(accountId));
  if (begun.state === "new" && begun.earlier !== undefined && begun.earlier.length > 0) {
    await idempotency.abandon(accountId, key);
    throw new GatewayError(
      "conflict",
      `an earlier request with this Idempotency-Key (${begun.earlier.join(", ")}) stopped before its answer was kept, and may have made what it asked for: list what exists before you make it again, with a new key`,
    );
  }
  let res: Response;
  try {
    res = await make();
  } catch (err) {
    await idempotency.abandon(accountId, key);
    throw err;
  }
  const body = await res.clone().text();
  await idempotency.complete(accountId, key, { status: res.status, body, headers: {} });
  return res;
}
