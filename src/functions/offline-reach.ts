/**
 * Why the offline engine declined a request. A local implementation that cannot answer because
 * of one field or option ("tone", "custom_instructions", a language) says so with `decline`;
 * when no other provider answers either, the pipeline's 503 no_provider names that field (in
 * the message and as `param`), so a caller knows what to drop or which provider to add.
 */
import { GatewayError } from "../errors";

export interface Decline {
  /** the request field that took the request out of offline reach */
  param: string;
  /** what about it, in words: "tone \"formal\" needs a model" */
  reason: string;
}

const declines = new WeakMap<object, Decline>();

/** Records why the engine declines `req` and returns null (the local implementation's "not this one"). */
export function decline(req: object, param: string, reason: string): null {
  declines.set(req, { param, reason });
  return null;
}

export interface OfflineNotes {
  /** options the offline engine accepted but did not use: the answer is what it would be without them */
  ignored?: Decline[];
  /** schema fields the engine looked for by pattern and did not find (null in the result) */
  not_found?: string[];
  /** result fields the engine guessed (a text in a language its cues do not cover): read them as low confidence */
  low_confidence?: string[];
}

const notes = new WeakMap<object, OfflineNotes>();

/** Records that the offline engine answered `req` without using `param` (reported as meta.ignored). */
export function ignoreOption(req: object, param: string, reason: string): void {
  const n = notes.get(req) ?? {};
  n.ignored = [...(n.ignored ?? []), { param, reason }];
  notes.set(req, n);
}

/** Records schema fields the offline engine did not find (reported as meta.not_found). */
export function noteNotFound(req: object, fields: readonly string[]): void {
  if (!fields.length) return;
  const n = notes.get(req) ?? {};
  n.not_found = [...(n.not_found ?? []), ...fields];
  notes.set(req, n);
}

/** Records result fields the offline engine could only guess (reported as meta.low_confidence). */
export function noteLowConfidence(req: object, fields: readonly string[]): void {
  const n = notes.get(req) ?? {};
  n.low_confidence = [...new Set([...(n.low_confidence ?? []), ...fields])];
  notes.set(req, n);
}

/** What the offline engine noted about its answer to `req`, if anything. */
export function offlineNotes(req: unknown): OfflineNotes | undefined {
  return typeof req === "object" && req !== null ? notes.get(req) : undefined;
}

/** The router's no_provider error with the recorded reason added; any other error unchanged. */
export function withDeclineReason(req: unknown, err: unknown): unknown {
  if (!(err instanceof GatewayError) || err.code !== "no_provider" || typeof req !== "object" || req === null) return err;
  const why = declines.get(req);
  if (!why) return err;
  return new GatewayError("no_provider", `${err.message} (offline, ${why.param}: ${why.reason})`, {
    param: why.param,
    headers: err.headers,
    attempts: err.attempts,
  });
}
