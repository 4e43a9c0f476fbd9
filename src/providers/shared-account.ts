import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { invalidRequest } from "../errors";
import { isObject, type ProxyApi } from "./types";

/**
 * Every tenant's `/v1` call reaches the upstream through the operator's one account, so what the
 * upstream stores under that account is shared by all tenants. These checks keep a tenant from
 * reaching another tenant's stored objects, and from making a self-hosted backend fetch URLs
 * inside the operator's network (docs/shared-upstream.md).
 */

const SHARED =
  "the upstream account is shared by every tenant of this gateway, so objects stored in it cannot be used through it; send the content itself";

/** 400 for any field that stores an object in the upstream account or names one stored there. */
export function refuseSharedObjects(api: ProxyApi, body: Record<string, unknown>): void {
  if (api === "embeddings") return;
  if (body.store === true) throw invalidRequest(`store: true is not served: ${SHARED}`, "store");
  if (api === "responses") {
    for (const f of ["previous_response_id", "conversation"]) {
      if (body[f] !== undefined && body[f] !== null) throw invalidRequest(`${f} is not served: ${SHARED}`, f);
    }
    if (body.background === true) throw invalidRequest(`background: true is not served: ${SHARED}`, "background");
    const input = Array.isArray(body.input) ? body.input : [];
    input.forEach((item, i) => {
      if (!isObject(item)) return;
      if (item.type === "item_reference")
        throw invalidRequest(`input[${i}]: item references are not served: ${SHARED}`, `input[${i}]`);
      // message content and tool outputs (a function_call_output's parts) alike
      for (const field of ["content", "output"]) {
        const parts = Array.isArray(item[field]) ? (item[field] as unknown[]) : [];
        parts.forEach((p, j) => {
          if (isObject(p) && typeof p.file_id === "string")
            throw invalidRequest(
              `input[${i}].${field}[${j}].file_id is not served: ${SHARED}`,
              `input[${i}].${field}[${j}].file_id`,
            );
        });
      }
    });
  }
  if (api === "chat/completions") {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    messages.forEach((m, i) => {
      const parts = isObject(m) && Array.isArray(m.content) ? m.content : [];
      parts.forEach((p, j) => {
        if (isObject(p) && isObject(p.file) && typeof p.file.file_id === "string")
          throw invalidRequest(
            `messages[${i}].content[${j}].file.file_id is not served: ${SHARED}`,
            `messages[${i}].content[${j}]`,
          );
      });
    });
  }
  const tools = Array.isArray(body.tools) ? body.tools : [];
  tools.forEach((t, i) => {
    if (!isObject(t)) return;
    if (t.vector_store_ids !== undefined)
      throw invalidRequest(`tools[${i}].vector_store_ids is not served: ${SHARED}`, `tools[${i}]`);
    if (t.type === "code_interpreter" && typeof t.container === "string")
      throw invalidRequest(`tools[${i}].container is not served: ${SHARED}`, `tools[${i}]`);
  });
}

/**
 * What the provider could fetch, with the field that holds it (`param`): a URL string (`url`), or
 * a content part of a type not known to carry none (no `url`).
 */
export interface RemoteUrl {
  url?: string;
  param: string;
}

/**
 * Keys whose strings are text the model reads, never a fetch instruction: a message's `content`,
 * a part's `text` or `refusal`, a tool call's `arguments`, a tool's `output` or `description`,
 * Responses' `input` and `instructions`, embeddings' `input`, `stop`. A URL there is text ("see
 * https://..."); strings directly in an array under one of them are text too.
 */
const TEXT_KEYS = new Set(["text", "content", "input", "instructions", "arguments", "output", "refusal", "description", "stop"]);
/** Subtrees never fetched from: stored key-values, and JSON Schemas (where only `$ref` can name something to load). */
const SCHEMA_KEYS = new Set(["parameters", "schema"]);
const REF_KEYS = new Set(["$ref", "$dynamicRef", "$recursiveRef"]);
/** identifiers of a schema's dialect or itself: validators name them, never load them */
const ID_KEYS = new Set(["$schema", "$id"]);
/** Where content parts sit: the items of these arrays (and an object `output`, as a computer screenshot). */
const PART_KEYS = new Set(["content", "output"]);
/**
 * Part types known to carry nothing the provider fetches but what a URL string in them says (which
 * the walk finds) or inline data: any other type (`video_url`, `audio_url`, a part without a type)
 * may name media in a form of its own, so it goes only to a provider with `remote_urls`.
 */
export const URL_FREE_PARTS = new Set([
  "text",
  "image_url",
  "input_audio",
  "file",
  "refusal",
  "input_text",
  "input_image",
  "input_file",
  "output_text",
  "summary_text",
  "reasoning_text",
  "computer_screenshot",
]);

/** Schemes that parse with an authority even without `//` (WHATWG's special schemes: `http:host` is `http://host/`). */
const SPECIAL = new Set(["http", "https", "ws", "wss", "ftp", "file"]);
const SCHEME = /^([a-z][a-z0-9+.-]*):([/\\]{2})?/i;
/** what URL parsers drop anywhere: tab and newlines */
const DROPPED = /[\t\n\r]/g;
/** and at either end: C0 controls and spaces (any Unicode space, to be safe) */
const blank = (ch: string) => ch <= " " || /\s/.test(ch);

function asParsed(value: string): string {
  const v = value.replace(DROPPED, "");
  let start = 0;
  let end = v.length;
  while (start < end && blank(v[start] as string)) start++;
  while (end > start && blank(v[end - 1] as string)) end--;
  return v.slice(start, end);
}

/**
 * The URL a string is, as a fetcher would read it, or null: after dropping what URL parsers drop,
 * a scheme followed by `//` (any scheme: `gopher://`, `s3://`), or a special scheme (`http:`,
 * `file:`, ...) with or without it. `data:` URLs are inline content, not a fetch.
 */
export function fetchedUrl(value: string): string | null {
  // cheap refusal first: nearly every string has no ':' early on
  const colon = value.indexOf(":");
  if (colon < 0) return null;
  const v = asParsed(value);
  const m = SCHEME.exec(v);
  if (!m) return null;
  const scheme = (m[1] as string).toLowerCase();
  if (scheme === "data") return null;
  return m[2] !== undefined || SPECIAL.has(scheme) ? v : null;
}

/**
 * Every value in the request that the provider could fetch, by one walk of the whole body: each
 * string that is a URL (fetchedUrl) outside text (TEXT_KEYS), stored metadata and JSON Schemas
 * (but a schema's `$ref`), and each content part whose type is not in URL_FREE_PARTS. Each comes
 * with the path of its field ("messages[0].content[1].image_url.url"). docs/shared-upstream.md.
 */
export function remoteUrls(_api: ProxyApi, body: Record<string, unknown>): RemoteUrl[] {
  const cached = found.get(body);
  if (cached) return cached;
  const out: RemoteUrl[] = [];
  walk(body, "", "", false, out);
  found.set(body, out);
  return out;
}

/** each body is walked once, however many times routing and the URL check ask */
const found = new WeakMap<object, RemoteUrl[]>();

function walk(value: unknown, path: string, key: string, inSchema: boolean, out: RemoteUrl[]): void {
  if (typeof value === "string") {
    if (ID_KEYS.has(key) || (inSchema ? !REF_KEYS.has(key) : TEXT_KEYS.has(key))) return;
    const url = fetchedUrl(value);
    if (url !== null) out.push({ url, param: path });
    return;
  }
  if (typeof value !== "object" || value === null) return;
  if (Array.isArray(value)) {
    const parts = !inSchema && PART_KEYS.has(key);
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const at = `${path}[${i}]`;
      // strings right in a text array (embeddings input, stop sequences) are text
      if (typeof item === "string") walk(item, at, TEXT_KEYS.has(key) ? key : "", inSchema, out);
      else {
        walk(item, at, "", inSchema, out);
        if (parts) part(item, at, out);
      }
    }
    return;
  }
  for (const k in value) {
    if (!inSchema && k === "metadata") continue;
    const child = (value as Record<string, unknown>)[k];
    walk(child, path ? `${path}.${k}` : k, k, inSchema || SCHEMA_KEYS.has(k), out);
  }
  if (!inSchema && key === "output") part(value, path, out);
}

/** A content part of a type not known to be URL-free (or with none) is something the provider could fetch. */
function part(value: unknown, path: string, out: RemoteUrl[]): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return;
  const type = (value as Record<string, unknown>).type;
  if (typeof type !== "string" || !URL_FREE_PARTS.has(type)) out.push({ param: `${path}.type` });
}

/** Loopback, private, link-local, carrier-grade NAT, unspecified, multicast and reserved ranges (IPv4 and IPv6). */
export function privateAddress(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) {
    const [a, b] = ip.split(".").map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  if (v === 6) {
    const g = ipv6Groups(ip.toLowerCase());
    const embedded = `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
    // IPv4-mapped (::ffff:a.b.c.d, also written ::ffff:7f00:1), IPv4-compatible and NAT64 addresses carry an IPv4 address
    if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
      if (g[5] === 0 && g[6] === 0) return true; // :: and ::1
      return privateAddress(embedded);
    }
    if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return privateAddress(embedded);
    return (g[0] & 0xfe00) === 0xfc00 || (g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xff00) === 0xff00;
  }
  return true;
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function ipv6Groups(ip: string): number[] {
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  const text = tail
    ? `${ip.slice(0, tail.index)}${((+tail[1] << 8) | +tail[2]).toString(16)}:${((+tail[3] << 8) | +tail[4]).toString(16)}`
    : ip;
  const [head, rest] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = rest ? rest.split(":") : [];
  const zeros = rest === undefined ? [] : Array(8 - left.length - right.length).fill("0");
  return [...left, ...zeros, ...right].map((x) => Number.parseInt(x, 16));
}

/**
 * 400 when a URL the provider would fetch points at a private, loopback or link-local address,
 * named directly or through DNS (every address a name resolves to is checked).
 */
export async function refusePrivateUrls(urls: RemoteUrl[], refused = "are not forwarded"): Promise<void> {
  for (const { url, param } of urls) {
    if (url === undefined) continue;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidRequest(`${param} is not a valid URL`, param);
    }
    // file:, ftp:, gopher:, s3:, ...: no provider is sent one to fetch
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      throw invalidRequest(`${param}: only http(s) and data: URLs are forwarded, not ${parsed.protocol}`, param);
    const host = parsed.hostname.replace(/^\[|\]$/g, "");
    const addresses = isIP(host)
      ? [host]
      : await lookup(host, { all: true, verbatim: true }).then(
          (r) => r.map((a) => a.address),
          () => [] as string[],
        );
    if (addresses.length === 0) throw invalidRequest(`${param}: the host ${host} does not resolve`, param);
    if (addresses.some(privateAddress))
      throw invalidRequest(`${param}: URLs of private, loopback or link-local addresses ${refused}`, param);
  }
}
