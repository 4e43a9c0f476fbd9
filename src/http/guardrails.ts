import type { AuthInfo } from "../auth/interface";
import type { Config } from "../config";
import { fixedLabels, type Metrics } from "../metrics";
import {
  type GuardCounts,
  guardHeader,
  guardrailBlocked,
  type KeyGuardrails,
  mergeGuardrails,
  RequestGuard,
} from "../providers/guardrails";
import type { RequestState } from "./state";

/**
 * The guard of an authenticated request: its plan's guardrails (`[plans.NAME.guardrails]`) plus
 * its key's (`keyPolicy`: the `guardrails` of the key's policy, same fields; it can only add
 * protection). Null when neither guards anything.
 */
export function guardFor(config: Config, auth: AuthInfo, keyPolicy?: KeyGuardrails | null): RequestGuard | null {
  const plan = config.guardrails[auth.plan];
  // the usual request: nothing to guard, nothing to merge
  if (!plan && !keyPolicy) return null;
  const settings = mergeGuardrails(plan, keyPolicy);
  return settings ? new RequestGuard(settings) : null;
}

/**
 * Inspects the request's texts; a request that carries a blocked kind is refused here (422
 * guardrail_blocked, before anything is held, charged or sent), counted in /metrics and the request log.
 */
export function inspectOrRefuse(guard: RequestGuard, texts: Iterable<string>, state: RequestState, metrics: Metrics): void {
  const blocked = guard.inspect(texts);
  const { read, remembered } = guard.recognised;
  if (read > 0) metrics.inc(RECOGNISED_TOTAL, RECOGNISED_HELP, READ, read);
  if (remembered > 0) metrics.inc(RECOGNISED_TOTAL, RECOGNISED_HELP, REMEMBERED, remembered);
  if (!blocked) return;
  for (const kind of Object.keys(blocked))
    metrics.inc("textai_guardrail_blocks_total", "Requests refused by a guardrail, per kind that blocked them", { kind });
  state.guardrails = prefixed("blocked", blocked);
  throw guardrailBlocked(blocked);
}

const RECOGNISED_TOTAL = "textai_guardrail_texts_total";
const RECOGNISED_HELP =
  "Texts of guarded requests looked at for PII: read by the recogniser, or remembered from an earlier request (the same text and kinds: a chat's history, a repeated system prompt)";
const READ = Object.freeze({ recogniser: "read" });
const REMEMBERED = Object.freeze({ recogniser: "remembered" });

/** A fresh answer's redactions: counted in /metrics (once per request that was redacted). */
export function countRedactions(guard: RequestGuard | null, metrics: Metrics): GuardCounts | null {
  const redacted = guard?.summary() ?? null;
  if (!redacted) return null;
  for (const kind in redacted)
    metrics.inc(
      "textai_guardrail_redactions_total",
      "PII values replaced by a placeholder before a provider call, per kind",
      kindLabels(kind),
      redacted[kind],
    );
  return redacted;
}

/** `{ kind }`, frozen and kept per kind (a few PII kinds): metrics makes its series key once. */
const KIND_LABELS = new Map<string, Readonly<{ kind: string }>>();
const kindLabels = (kind: string) => fixedLabels(KIND_LABELS, kind, () => ({ kind }));

/** An answer that passed through the guardrails says so: header, request log (counts, never values). */
export function markGuarded(state: RequestState, redacted: GuardCounts | null | undefined): void {
  if (!redacted || Object.keys(redacted).length === 0) return;
  state.headers["x-textai-guardrails"] = guardHeader("redacted", redacted);
  state.guardrails = prefixed("redacted", redacted);
}

function prefixed(what: string, counts: GuardCounts): GuardCounts {
  const out: GuardCounts = {};
  for (const k in counts) out[`${what}.${k}`] = counts[k];
  return out;
}
