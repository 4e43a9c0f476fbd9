import { ConfigError, parseGuardrails } from "../config";
import { credits } from "../credits/amount";
import type { KeyBudget } from "../credits/interface";
import { GatewayError, invalidRequest } from "../errors";
import type { KeyGuardrails } from "../providers/guardrails";

/**
 * What a key may do, narrower than its plan (CONTRACT section 13, docs/key-policies.md). Every
 * field is optional; an unset one does not narrow anything.
 */
export interface KeyPolicy {
  /** usage names (`sentiment-analysis`, `chat-completions`, …) */
  allowed_functions?: string[];
  /** model names; `*` matches any run of characters */
  allowed_models?: string[];
  rate_limit_per_minute?: number;
  monthly_credit_limit?: number;
  /** ISO 8601, normalized to UTC */
  expires_at?: string;
  /** added to the plan's guardrails (CONTRACT section 14): a key can only add protection */
  guardrails?: KeyGuardrails;
  /** residency and routing tags (`{ "region": "eu" }`): a model group's deployments are restricted by them (docs/routing.md) */
  tags?: Record<string, string>;
}

export const POLICY_FIELDS = [
  "allowed_functions",
  "allowed_models",
  "rate_limit_per_minute",
  "monthly_credit_limit",
  "expires_at",
  "guardrails",
  "tags",
] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];

/** A change to a policy: a field set replaces it, a field null clears it, a field absent stays. */
export type PolicyPatch = { [F in PolicyField]?: KeyPolicy[F] | null };

/** Fields every policy answer shows, unset ones as null (the API's form). */
export type PolicyView = { [F in PolicyField]: KeyPolicy[F] | null };

/** Routes no allowed_functions list refuses: the account's own figures, and the model list. */
export const ALWAYS_ALLOWED = new Set(["account", "models"]);

/**
 * The usage name of `GET /api/v1/account/audit` (limits, request log, a key's allowed_functions):
 * not one of ALWAYS_ALLOWED, since the trail holds members' emails, roles and client addresses,
 * more than the account's own figures.
 */
export const AUDIT_FN = "audit";

const MAX_LIST = 200;
const MAX_NAME = 200;

/**
 * A list of 1 to 200 names, each 1 to 200 characters once trimmed. An empty item is refused, never
 * dropped: `--models gpt-4o,,gpt-4o-mini` (or a trailing comma) is a slip, and the list meant is not
 * known.
 */
function nameList(v: unknown, param: string): string[] {
  if (!Array.isArray(v) || v.length === 0)
    throw invalidRequest(`${param} must be a non-empty list of names (null clears it)`, param);
  if (v.length > MAX_LIST) throw invalidRequest(`${param} holds at most ${MAX_LIST} names`, param);
  const out: string[] = [];
  for (const [i, n] of v.entries()) {
    if (typeof n !== "string" || n.trim() === "" || n.length > MAX_NAME)
      throw invalidRequest(
        `${param} must hold names of 1 to ${MAX_NAME} characters, none empty (item ${i + 1} of ${v.length} is ${
          typeof n !== "string" ? "not text" : n.trim() === "" ? "empty" : "too long"
        })`,
        param,
      );
    if (!out.includes(n.trim())) out.push(n.trim());
  }
  return out;
}

function wholeNumber(v: unknown, param: string, min: number): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > 1_000_000_000)
    throw invalidRequest(`${param} must be a whole number from ${min} to 1000000000 (null clears it)`, param);
  return v;
}

/** The names `allowed_functions` may hold: the gateway's usage names (http/routes/usage-names.ts). */
export type KnownFunctions = ReadonlySet<string>;

/** A typo would lock the key out of the function meant: an unknown name is refused, named. */
function functionList(v: unknown, param: string, known: KnownFunctions): string[] {
  const names = nameList(v, param);
  const unknown = names.find((n) => !known.has(n));
  if (unknown !== undefined)
    throw invalidRequest(`${param} names an unknown function "${unknown}"; known: ${[...known].sort().join(", ")}`, param);
  return names;
}

/**
 * Validates a policy object from a request (`param` prefixes the field names in errors);
 * `known`: the function names `allowed_functions` may hold.
 */
export function parsePolicyPatch(input: unknown, known: KnownFunctions, param = "policy"): PolicyPatch {
  if (input === null || input === undefined) return {};
  if (typeof input !== "object" || Array.isArray(input)) throw invalidRequest(`${param} must be an object`, param);
  const raw = input as Record<string, unknown>;
  for (const k of Object.keys(raw))
    if (!(POLICY_FIELDS as readonly string[]).includes(k))
      throw invalidRequest(`${param}.${k} is not a policy field (${POLICY_FIELDS.join(", ")})`, `${param}.${k}`);
  const patch: PolicyPatch = {};
  for (const f of POLICY_FIELDS) {
    if (!(f in raw)) continue;
    const v = raw[f];
    const p = `${param}.${f}`;
    if (v === null) {
      patch[f] = null;
      continue;
    }
    switch (f) {
      case "allowed_functions":
        patch[f] = functionList(v, p, known);
        break;
      case "allowed_models":
        patch[f] = nameList(v, p);
        break;
      case "rate_limit_per_minute":
        patch[f] = wholeNumber(v, p, 1);
        break;
      case "monthly_credit_limit":
        patch[f] = wholeNumber(v, p, 0);
        break;
      case "expires_at":
        patch[f] = isoTime(v, p);
        break;
      case "guardrails":
        patch[f] = keyGuardrails(v, p);
        break;
      case "tags":
        patch[f] = tagMap(v, p);
        break;
    }
  }
  return patch;
}

/**
 * An ISO 8601 time (a date alone is its midnight UTC), normalised to UTC. A day the calendar does not
 * have is refused: JavaScript reads 2027-02-31 as 3 March. So is a time of day without its zone
 * (`2027-01-01T10:00`), which JavaScript reads in the server's own time zone: one machine's expiry
 * would be another's. (Whether it is to come is the caller's question: a new key's expiry must be, a
 * key that exists may be given a time past, which ends it.)
 */
function isoTime(v: unknown, p: string): string {
  const text = typeof v === "string" ? v.trim() : "";
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  const t = m ? Date.parse(text) : Number.NaN;
  const [y, mo, d] = (m ?? []).slice(1).map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (Number.isNaN(t) || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d)
    throw invalidRequest(`${p} must be an ISO 8601 time on a day the calendar has, e.g. 2027-01-31T00:00:00Z`, p);
  if (text.length > 10 && !ZONED.test(text))
    throw invalidRequest(
      `${p} ${text} has a time of day but no time zone: write it in UTC (${text}Z) or with its offset (${text}+02:00)`,
      p,
    );
  return new Date(t).toISOString();
}
/** the end of a time of day with its zone: Z, or an offset (+02:00, -0500, +05) */
const ZONED = /(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;

/**
 * A patch from text fields (CLI flags, dashboard form), by policy field: absent (undefined)
 * leaves a field, empty clears it, lists are comma-separated (an empty item is refused, as in a
 * JSON list). Validated as parsePolicyPatch does. `opts.creating`: the fields of a key being made,
 * which has nothing to clear: an empty one is refused (`keys create --models ''` made a key that
 * may use every model, from what was most likely an empty shell variable).
 */
export function policyPatchFromText(
  fields: { [F in PolicyField]?: string },
  known: KnownFunctions,
  opts: { creating?: boolean } = {},
): PolicyPatch {
  const raw: Record<string, unknown> = {};
  for (const f of POLICY_FIELDS) {
    const v = fields[f];
    if (v === undefined) continue;
    const t = v.trim();
    if (t === "" && opts.creating)
      throw invalidRequest(
        `policy.${f} is empty: an empty value clears the field of a key that exists, and a new key has none to clear (leave it out for no limit)`,
        `policy.${f}`,
      );
    if (t === "") raw[f] = null;
    else if (f === "allowed_functions" || f === "allowed_models") raw[f] = t.split(",").map((x) => x.trim());
    else if (f === "rate_limit_per_minute" || f === "monthly_credit_limit") raw[f] = /^\d+$/.test(t) ? Number(t) : t;
    else if (f === "guardrails") raw[f] = jsonOrText(t);
    else if (f === "tags") raw[f] = tagsFromText(t);
    else raw[f] = t;
  }
  return parsePolicyPatch(raw, known);
}

/** `region=eu,tier=gold` (or a JSON object) as a tag map; anything else is left for tagMap to refuse. */
function tagsFromText(t: string): unknown {
  if (t.startsWith("{")) return jsonOrText(t);
  const out: Record<string, string> = {};
  for (const pair of t.split(",")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) return t;
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

/**
 * An account's `tags` as given to the admin API or the CLI (an object, or `region=eu,tier=gold`
 * text): validated as a key policy's tags are; null (or empty text) clears them.
 */
export function parseAccountTags(v: unknown): Record<string, string> | null {
  if (v === null || (typeof v === "string" && v.trim() === "")) return null;
  return tagMap(typeof v === "string" ? tagsFromText(v.trim()) : v, "tags");
}

/** An account's tags column (JSON text) as a tag map; undefined for none. */
export function tagsFromColumn(col: string | null): Record<string, string> | undefined {
  return col ? (JSON.parse(col) as Record<string, string>) : undefined;
}

/**
 * Tags: an object of 1 to 20 string values, names and values of 1 to 100 characters, neither empty
 * nor spaces only (`region=` made a tag no deployment carries, so every call to a group with region
 * tags was refused).
 */
function tagMap(v: unknown, p: string): Record<string, string> {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw invalidRequest(`${p} must be an object of string values, e.g. {"region": "eu"} (null clears it)`, p);
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length === 0 || entries.length > 20) throw invalidRequest(`${p} must hold from 1 to 20 tags`, p);
  for (const [k, val] of entries) {
    if (k.trim() === "" || k.length > 100) throw invalidRequest(`${p} must name each tag with 1 to 100 characters`, p);
    if (typeof val !== "string" || val.trim() === "" || val.length > 100)
      throw invalidRequest(`${p}.${k} must be a string of 1 to 100 characters, not empty`, `${p}.${k}`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

const jsonOrText = (t: string): unknown => {
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
};

/** A key's guardrails as given (the plan table's fields), checked like the config file's; kept in the API's form. */
function keyGuardrails(v: unknown, p: string): KeyGuardrails {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw invalidRequest(`${p} must be an object`, p);
  const raw = v as Record<string, unknown>;
  for (const k of Object.keys(raw))
    if (!["redact_pii", "restore_pii", "block_pii", "block_moderation"].includes(k))
      throw invalidRequest(
        `${p}.${k} is not a guardrail field (redact_pii, restore_pii, block_pii, block_moderation)`,
        `${p}.${k}`,
      );
  try {
    const g = parseGuardrails(p, raw);
    const out: KeyGuardrails = {};
    if (g.redactPii.length) out.redact_pii = g.redactPii;
    if (raw.restore_pii !== undefined) out.restore_pii = g.restorePii;
    if (g.blockPii.length) out.block_pii = g.blockPii;
    if (g.blockModeration.length) out.block_moderation = g.blockModeration;
    return out;
  } catch (err) {
    if (err instanceof ConfigError) throw invalidRequest(err.message, p);
    throw err;
  }
}

/** A policy in one short line ("-" for none), as `keys list` and the dashboard show it. */
export function policySummary(p: PolicyView): string {
  const parts = [
    p.allowed_functions && `functions=${p.allowed_functions.join(",")}`,
    p.allowed_models && `models=${p.allowed_models.join(",")}`,
    p.rate_limit_per_minute !== null && `rpm=${p.rate_limit_per_minute}`,
    p.monthly_credit_limit !== null && `monthly-credits=${p.monthly_credit_limit}`,
    p.expires_at && `expires=${p.expires_at}`,
    p.guardrails && `guardrails=${JSON.stringify(p.guardrails)}`,
    p.tags &&
      `tags=${Object.entries(p.tags)
        .map(([k, v]) => `${k}=${v}`)
        .join(",")}`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(" ") : "-";
}

/** A patch that clears every field. */
export const clearAll = (): PolicyPatch => Object.fromEntries(POLICY_FIELDS.map((f) => [f, null])) as PolicyPatch;

/** The policy after a patch; undefined when no field is left set. */
export function applyPolicyPatch(current: KeyPolicy | undefined, patch: PolicyPatch): KeyPolicy | undefined {
  const next: Record<string, unknown> = { ...(current ?? {}) };
  for (const f of POLICY_FIELDS) {
    if (!(f in patch)) continue;
    const v = patch[f];
    if (v === null || v === undefined) delete next[f];
    else next[f] = v;
  }
  return Object.keys(next).length > 0 ? (next as KeyPolicy) : undefined;
}

/** The stored form (JSON text, null for none) and back. */
export const policyToColumn = (p: KeyPolicy | undefined): string | null => (p ? JSON.stringify(p) : null);
export function policyFromColumn(text: string | null): KeyPolicy | undefined {
  if (!text) return undefined;
  try {
    const p = JSON.parse(text) as KeyPolicy;
    return typeof p === "object" && p !== null && Object.keys(p).length > 0 ? p : undefined;
  } catch {
    return undefined;
  }
}

export function policyView(p: KeyPolicy | undefined): PolicyView {
  return {
    allowed_functions: p?.allowed_functions ?? null,
    allowed_models: p?.allowed_models ?? null,
    rate_limit_per_minute: p?.rate_limit_per_minute ?? null,
    monthly_credit_limit: p?.monthly_credit_limit ?? null,
    expires_at: p?.expires_at ?? null,
    guardrails: p?.guardrails ?? null,
    tags: p?.tags ?? null,
  };
}

/** `*` matches any run of characters; everything else literally, case-sensitive. */
export function modelPatternMatches(pattern: string, model: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === model;
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!model.startsWith(first) || model.length < first.length + last.length || !model.endsWith(last)) return false;
  let at = first.length;
  const end = model.length - last.length;
  for (const mid of parts.slice(1, -1)) {
    const i = model.indexOf(mid, at);
    if (i < 0 || i + mid.length > end) return false;
    at = i + mid.length;
  }
  return true;
}

export function expired(p: KeyPolicy | undefined, now = Date.now()): boolean {
  return p?.expires_at !== undefined && Date.parse(p.expires_at) <= now;
}

/** 403 unless the policy lets the key call `fn`. */
export function checkFunction(p: KeyPolicy | undefined, fn: string): void {
  const allowed = p?.allowed_functions;
  if (!allowed || ALWAYS_ALLOWED.has(fn) || allowed.includes(fn)) return;
  throw new GatewayError("forbidden", `this key may not call ${fn}; it may call: ${allowed.join(", ")}`);
}

/** 403 unless the policy lets the key use `model` (`param`: where the request named it, if it did). */
export function checkModel(p: KeyPolicy | undefined, model: string, param: string | null = "model"): void {
  const allowed = p?.allowed_models;
  // "provider/model" names the model after the provider; the route's own check sees the bare model
  const bare = model.includes("/") ? model.slice(model.indexOf("/") + 1) : model;
  if (!allowed || allowed.some((pat) => modelPatternMatches(pat, model) || modelPatternMatches(pat, bare))) return;
  throw new GatewayError("forbidden", `this key may not use the model ${model}; its allowed models: ${allowed.join(", ")}`, {
    param,
  });
}

/**
 * A key's policy under its plan's ceiling (`plans.NAME.policy`, set by the operator): the policy a
 * call runs under, so a key (or the playground, which has none) can only narrow the ceiling.
 * Functions: those both allow. Models: the key's patterns the ceiling contains, and the ceiling's
 * patterns the key's contain (a pattern contains another when it matches it taken literally, as in
 * widenedField), so a call must pass both lists; none left refuses every model. Rate limit and
 * monthly credits: the lower. The key's other fields (expiry, guardrails) stay as they are.
 */
export function underCeiling(ceiling: CeilingPolicy | undefined, p: KeyPolicy | undefined): KeyPolicy | undefined {
  if (!ceiling) return p;
  const out: KeyPolicy = { ...p };
  const c = ceiling;
  if (c.allowed_functions)
    out.allowed_functions = p?.allowed_functions
      ? p.allowed_functions.filter((f) => c.allowed_functions!.includes(f))
      : [...c.allowed_functions];
  if (c.allowed_models) {
    const key = p?.allowed_models;
    out.allowed_models = key
      ? [
          ...new Set([
            ...key.filter((m) => c.allowed_models!.some((cm) => modelPatternMatches(cm, m))),
            ...c.allowed_models.filter((cm) => key.some((m) => modelPatternMatches(m, cm))),
          ]),
        ]
      : [...c.allowed_models];
  }
  const lower = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));
  const rpm = lower(c.rate_limit_per_minute, p?.rate_limit_per_minute);
  if (rpm !== undefined) out.rate_limit_per_minute = rpm;
  const monthly = lower(c.monthly_credit_limit, p?.monthly_credit_limit);
  if (monthly !== undefined) out.monthly_credit_limit = monthly;
  return out;
}

/** The fields of a policy a plan's ceiling may set (config's PlanPolicy). */
export type CeilingPolicy = Pick<
  KeyPolicy,
  "allowed_functions" | "allowed_models" | "rate_limit_per_minute" | "monthly_credit_limit"
>;

/** The models a policy lets a route pick (undefined: any). */
export function modelFilter(p: KeyPolicy | undefined): ((model: string) => boolean) | undefined {
  const allowed = p?.allowed_models;
  return allowed ? (model) => allowed.some((pat) => modelPatternMatches(pat, model)) : undefined;
}

/**
 * 403 when the policy leaves a route none of the models it would pick (`any`: the route had some).
 * `routed`: a model route sent the model asked for to another group (docs/routing.md), which is
 * what the key may not use: the message names it and why the call went there.
 */
export function noAllowedModel(
  p: KeyPolicy | undefined,
  what: string,
  routed?: { asked: string; group: string; why: string },
): GatewayError {
  const allowed = (p?.allowed_models ?? []).join(", ");
  return new GatewayError(
    "forbidden",
    routed
      ? `this key may not use the model group "${routed.group}", where a [[model_routes]] rule sends "${routed.asked}" (${routed.why}); its allowed models: ${allowed}`
      : `this key may not use any model that serves ${what}; its allowed models: ${allowed}`,
  );
}

/**
 * Whether `next` narrows `current` or keeps it (an account holder's change from the dashboard):
 * no field cleared or widened. Returns the first field that widens, or null.
 */
export function widenedField(current: KeyPolicy | undefined, next: KeyPolicy | undefined): PolicyField | null {
  const c = current ?? {};
  const n = next ?? {};
  if (c.allowed_functions && (!n.allowed_functions || n.allowed_functions.some((f) => !c.allowed_functions!.includes(f))))
    return "allowed_functions";
  // a pattern is within the old list if an old pattern matches it taken literally: every model it matches is matched
  if (
    c.allowed_models &&
    (!n.allowed_models || n.allowed_models.some((m) => !c.allowed_models!.some((old) => modelPatternMatches(old, m))))
  )
    return "allowed_models";
  if (c.rate_limit_per_minute !== undefined && (n.rate_limit_per_minute ?? Infinity) > c.rate_limit_per_minute)
    return "rate_limit_per_minute";
  if (c.monthly_credit_limit !== undefined && (n.monthly_credit_limit ?? Infinity) > c.monthly_credit_limit)
    return "monthly_credit_limit";
  if (c.expires_at !== undefined && (n.expires_at === undefined || Date.parse(n.expires_at) > Date.parse(c.expires_at)))
    return "expires_at";
  // guardrails narrow a key by adding protection: dropping a guarded kind (or turning restore off) widens it
  const lists = ["redact_pii", "block_pii", "block_moderation"] as const;
  const cg = c.guardrails;
  if (
    cg &&
    (!n.guardrails ||
      lists.some((l) => (cg[l] ?? []).some((k) => !(n.guardrails?.[l] ?? []).includes(k))) ||
      (cg.restore_pii === false && n.guardrails.restore_pii !== false))
  )
    return "guardrails";
  // tags keep a key's calls where its data may go: dropping or changing one widens it
  if (c.tags && Object.entries(c.tags).some(([k, v]) => n.tags?.[k] !== v)) return "tags";
  return null;
}

/** What a call of this key is held against besides the balance: its monthly_credit_limit, if any. */
export function keyBudget(auth: { keyId: string; policy?: KeyPolicy }): KeyBudget | undefined {
  const limit = auth.policy?.monthly_credit_limit;
  // a limit that is not credits (amount.ts) is refused here, before a comparison could admit past it
  return limit === undefined ? undefined : { keyId: auth.keyId, limit: credits(limit, "a key's monthly_credit_limit") };
}
