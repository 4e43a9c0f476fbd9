/**
 * What the guardrails read of a JSON body (CONTRACT section 14, docs/guardrails.md): everything.
 * Every string value and every object key of the body that will be forwarded is the client's text,
 * whatever the field, so a field a vendor adds to its API tomorrow is inspected, redacted and
 * refused on without a code change. Only the fields on SKIP below are passed over: fields that
 * carry no free text (the model's name, roles, types, ids, enumerations) or base64 payloads.
 * The same walk puts the values back into an answer.
 */

/**
 * The skip list: string values (or arrays of strings) under these field names are not text. A
 * name alone applies wherever the field sits; `parent.name` only inside an object held under
 * `parent` (an array's elements count as held under the array's own key). Object keys are never
 * skipped, and a skipped field's objects and arrays of objects are walked all the same.
 */
export const SKIP: readonly string[] = [
  // what the request is addressed to and how it is shaped
  "model",
  "role",
  "type",
  "object",
  // ids the API or the client's tools gave out (`id`, `call_id`, `tool_call_id`, `previous_response_id`...)
  "id",
  "*_id",
  // enumerations
  "status",
  "detail",
  "modalities",
  "include",
  "reasoning_effort",
  "service_tier",
  "verbosity",
  "encoding_format",
  "truncation",
  "tool_choice",
  "finish_reason",
  "reasoning.effort",
  "reasoning.summary",
  "audio.voice",
  "audio.format",
  "input_audio.format",
  // the Messages API's thinking block's signature
  "signature",
];

/**
 * Base64 payloads (a file, a recording, an image or document's source): skipped only when the value
 * is base64 (`isBase64`), as a base64 `data:` URL anywhere is. The same fields carry text as well
 * (an Anthropic document's `{type: "text", media_type: "text/plain", data}` source), and text is read.
 */
export const PAYLOADS: readonly string[] = ["file_data", "input_audio.data", "source.data"];

/** A list's entries as a lookup: a name alone, `parent.name`, or `*suffix`. */
function matcher(list: readonly string[]): (parent: string, key: string) => boolean {
  const byName = new Set(list.filter((s) => !s.includes(".") && !s.startsWith("*")));
  /** `parent.field` entries: field -> parents (looked up without building a string per value) */
  const byPosition = new Map<string, Set<string>>();
  for (const s of list.filter((s) => s.includes("."))) {
    const [parent, field] = s.split(".") as [string, string];
    byPosition.set(field, (byPosition.get(field) ?? new Set()).add(parent));
  }
  const suffixes = list.filter((s) => s.startsWith("*")).map((s) => s.slice(1));
  return (parent, key) => {
    if (byName.has(key)) return true;
    if (byPosition.get(key)?.has(parent)) return true;
    for (const s of suffixes) if (key.endsWith(s)) return true;
    return false;
  };
}

/**
 * Ids a client makes up for its own end users (Anthropic's `metadata.user_id`): named like an id,
 * but what goes in them is the client's choice, often an email. They are read as text (as
 * OpenAI's `user` is), the `*_id` rule notwithstanding.
 */
export const CLIENT_IDS: readonly string[] = ["user_id"];

const onSkipList = matcher(SKIP);
const clientId = new Set(CLIENT_IDS);

/** Whether a string under `key` (in an object held under `parent`) is on the skip list. */
export const skipped = (parent: string, key: string): boolean => !clientId.has(key) && onSkipList(parent, key);
/** Whether a string under `key` (in an object held under `parent`) sits where a base64 payload may. */
const payloadField = matcher(PAYLOADS);

/**
 * Base64 from `from` to the end (standard or URL-safe alphabet, line breaks allowed, padding), at
 * least 24 characters: no word, no address, no card. One character class, so one linear pass
 * (sticky, so a data: URL's payload is tested where it starts, not copied).
 */
const BASE64 = /[A-Za-z0-9+/_\-\r\n]{24,}={0,2}[\r\n]*$/y;
function base64From(s: string, from: number): boolean {
  BASE64.lastIndex = from;
  return BASE64.test(s);
}
const isBase64 = (s: string) => base64From(s, 0);

/** A base64 `data:` URL (an image or a file inline) whose data is base64: a payload, not text. */
function isDataUrl(s: string): boolean {
  if (!s.startsWith("data:")) return false;
  const at = s.indexOf(";base64,", 5);
  return at > 0 && base64From(s, at + 8);
}

/**
 * `value` with every string value and object key not on the skip list passed through `fn`. A
 * subtree `fn` leaves unchanged is returned as it is (no copy): a body with nothing to redact is
 * the client's own object.
 */
export function mapJson(value: unknown, fn: (s: string) => string, parent = "", key = ""): unknown {
  if (typeof value === "string")
    return skipped(parent, key) || (payloadField(parent, key) && isBase64(value)) || isDataUrl(value) ? value : fn(value);
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      const m = mapJson(v, fn, parent, key);
      if (m !== v && out === null) out = value.slice(0, i);
      if (out !== null) out.push(m);
    }
    return out ?? value;
  }
  if (typeof value !== "object" || value === null) return value;
  let out: Record<string, unknown> | null = null;
  const entries = Object.entries(value);
  for (let i = 0; i < entries.length; i++) {
    const [k, v] = entries[i] as [string, unknown];
    const mk = fn(k);
    const mv = mapJson(v, fn, key, k);
    if ((mk !== k || mv !== v) && out === null) {
      out = {};
      for (let j = 0; j < i; j++) {
        const [pk, pv] = entries[j] as [string, unknown];
        out[pk] = pv;
      }
    }
    if (out !== null) out[mk] = mv;
  }
  return out ?? value;
}

/** Every string value and object key of `value` that the guardrails read (mapJson's walk). */
export function textsOf(value: unknown, into: string[] = []): string[] {
  mapJson(value, (s) => {
    into.push(s);
    return s;
  });
  return into;
}
