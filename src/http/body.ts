import type { Static, TSchema } from "@sinclair/typebox";
import { readAtMost } from "../bytes";
import { clientClosed, GatewayError } from "../errors";
import { validateAgainst } from "../functions/validate";
import { leaveUnread } from "./linger";

export interface BodyLimits {
  maxBodyBytes: number;
  maxJsonDepth: number;
  /** the whole body must arrive within this; unset: no limit */
  bodyTimeoutMs?: number;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const utf8 = new TextDecoder("utf-8", { fatal: true });

export function isJsonContentType(value: string | null): boolean {
  return value !== null && JSON_TYPE.test(value);
}

/**
 * 413 for a body over `max` bytes; the connection closes after the answer, the rest of the body read
 * and dropped meanwhile (within bounds: http/linger.ts), so that the client gets the answer.
 */
export function payloadTooLarge(max: number): GatewayError {
  return new GatewayError("payload_too_large", `request body exceeds ${max} bytes`, { headers: { connection: "close" } });
}

/**
 * Reads a whole body of at most `max` bytes. The limit holds while reading (the declared
 * Content-Length first, then a running count for chunked bodies), so an oversized body is never
 * buffered whole; with `timeoutMs`, a body that has not all arrived by then is a 408.
 */
export async function readBytes(request: Request, max: number, timeoutMs?: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > max) throw payloadTooLarge(max);
  let bytes: Uint8Array;
  try {
    let reading =
      declared !== null
        ? request.arrayBuffer().then((b) => new Uint8Array(b))
        : readAtMost(
            request.body,
            max,
            () => payloadTooLarge(max),
            (reader) => leaveUnread(request, reader),
          );
    // a body still arriving when its server's drain grace ends is not waited for (server.ts)
    const reads = bodyReadsOf.get(request);
    if (reads) reading = reads.track(reading);
    // a body trickling in (slowloris) or never ending: answered 408, and the connection closed
    bytes = timeoutMs ? await bodyDeadlines.within(reading, timeoutMs) : await reading;
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    // the client dropped the connection mid-body
    if (request.signal.aborted) throw clientClosed("the client closed the connection before sending the whole body");
    throw err;
  }
  if (bytes.byteLength > max) throw payloadTooLarge(max);
  return bytes;
}

/**
 * The body timeouts of all reads in flight, on shared timers: a read joins the bucket of reads whose
 * deadline falls in the same `slack` window, and one timer per bucket ends what is still unread
 * then (between `timeoutMs` and `timeoutMs + slack` after the read began; slack: a sixteenth of
 * the timeout, 10 to 100 ms). Under load thousands of
 * reads share a timer instead of each setting and clearing its own.
 */
class Deadlines {
  private readonly buckets = new Map<number, Set<() => void>>();

  within<T>(reading: Promise<T>, timeoutMs: number): Promise<T> {
    const slack = Math.min(100, Math.max(10, timeoutMs >> 4));
    const at = Math.ceil((Date.now() + timeoutMs) / slack) * slack;
    let bucket = this.buckets.get(at);
    if (!bucket) {
      const b = new Set<() => void>();
      this.buckets.set(at, b);
      const timer = setTimeout(() => {
        this.buckets.delete(at);
        for (const expire of b) expire();
      }, at - Date.now());
      timer.unref?.();
      bucket = b;
    }
    const pending = bucket;
    return new Promise<T>((resolve, reject) => {
      const expire = () =>
        reject(
          new GatewayError("request_timeout", `the request body did not arrive within ${timeoutMs} ms`, {
            headers: { connection: "close" },
          }),
        );
      pending.add(expire);
      reading.then(
        (v) => {
          pending.delete(expire);
          resolve(v);
        },
        (err: unknown) => {
          pending.delete(expire);
          reject(err);
        },
      );
    });
  }
}
const bodyDeadlines = new Deadlines();

/**
 * The body reads in flight on one server. When its drain's grace ends (server.ts), the bodies still
 * arriving are not waited for: each read ends with a 503 `service_unavailable` (Connection: close),
 * so that a client stalling halfway through its upload does not keep the process up until the
 * drain's deadline; a read that begins later (a request held over the end of the grace) has
 * CUT_LATE_MS for its body.
 */
export class BodyReads {
  private readonly cuts = new Set<() => void>();
  private cutAt: number | null = null;

  track<T>(reading: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const cut = () => reject(shuttingDown());
      this.cuts.add(cut);
      const timer = this.cutAt === null ? null : setTimeout(cut, CUT_LATE_MS);
      reading.then(
        (v) => {
          this.cuts.delete(cut);
          if (timer) clearTimeout(timer);
          resolve(v);
        },
        (err: unknown) => {
          this.cuts.delete(cut);
          if (timer) clearTimeout(timer);
          reject(err);
        },
      );
    });
  }

  /** Ends every read in flight with a 503; returns how many there were. */
  cutAll(): number {
    this.cutAt = Date.now();
    const n = this.cuts.size;
    for (const cut of this.cuts) cut();
    this.cuts.clear();
    return n;
  }
}

/** how long a body read that begins after the drain's grace ended may take */
const CUT_LATE_MS = 1000;

const shuttingDown = () =>
  new GatewayError("service_unavailable", "the gateway is shutting down and the request body had not all arrived", {
    headers: { connection: "close", "retry-after": "1" },
  });

const bodyReadsOf = new WeakMap<Request, BodyReads>();

/** Notes `request` as one of the server whose body reads `reads` tracks (app.ts, for requests that may carry a body). */
export function watchBody(request: Request, reads: BodyReads): void {
  bodyReadsOf.set(request, reads);
}

/** Reads a JSON object body, within the size limit and the body timeout (see readBytes). */
export async function readJsonBody(request: Request, limits: BodyLimits): Promise<Record<string, unknown>> {
  return (await readJson(request, limits)).body;
}

/**
 * The same, with the body's text as the client sent it (`sent`) when nothing was removed from
 * its parse (no forbidden key, no `api_key`): see sentBytes; and its size in bytes (`bytes`).
 */
export async function readJson(
  request: Request,
  limits: BodyLimits,
): Promise<{ body: Record<string, unknown>; sent: SentBody | undefined; bytes: number }> {
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new GatewayError("unsupported_media_type", "POST bodies must be JSON: send Content-Type: application/json");
  }
  const bytes = await readBytes(request, limits.maxBodyBytes, limits.bodyTimeoutMs);

  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new GatewayError("invalid_json", "request body is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new GatewayError("invalid_json", `request body is not valid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new GatewayError("invalid_request", "request body must be a JSON object");
  }
  // on the parsed keys: an escaped "\u0063onstructor" in the text is "constructor" once parsed
  const walk: Walk = { strings: 0, stripped: false };
  if (!checkedAndStripped(value, 1, limits.maxJsonDepth, walk)) {
    throw new GatewayError("invalid_request", `request body nests deeper than ${limits.maxJsonDepth} levels`);
  }
  // kept for forwarding as sent (sentBytes); a body with a key to remove never is
  const sent = walk.stripped || "api_key" in value ? undefined : { text, strings: walk.strings };
  return { body: value as Record<string, unknown>, sent, bytes: bytes.byteLength };
}

const FORBIDDEN = ["__proto__", "constructor", "prototype"];

/** What one walk of a parsed body found: its strings (keys and string values), and whether a forbidden key was removed. */
interface Walk {
  strings: number;
  stripped: boolean;
}

/**
 * One walk of a parsed body: false when it nests deeper than `max` levels (the forbidden keys'
 * values counted too); otherwise every "__proto__", "constructor" and "prototype" key is gone
 * (JSON.parse makes "__proto__" an own data property: none is left for a later merge to pollute a
 * prototype with). Recursion is bounded by `max`. Counts the strings it saw into `walk`.
 */
function checkedAndStripped(v: object, depth: number, max: number, walk: Walk): boolean {
  if (depth > max) return false;
  if (Array.isArray(v)) {
    for (const c of v) {
      if (typeof c === "string") walk.strings++;
      else if (c && typeof c === "object" && !checkedAndStripped(c, depth + 1, max, walk)) return false;
    }
    return true;
  }
  const obj = v as Record<string, unknown>;
  for (const k in obj) {
    walk.strings++;
    const c = obj[k];
    if (typeof c === "string") walk.strings++;
    else if (c && typeof c === "object" && !checkedAndStripped(c, depth + 1, max, walk)) return false;
  }
  for (const k of FORBIDDEN) {
    if (Object.hasOwn(obj, k)) {
      delete obj[k];
      walk.stripped = true;
    }
  }
  return true;
}

/** The text of a body as the client sent it, and the number of strings (keys and string values) its parse holds. */
export interface SentBody {
  text: string;
  strings: number;
}

/**
 * The client's own bytes of a body `readJson` returned, when they say exactly what the parsed
 * object says, so forwarding them is forwarding the object: the text has no key twice (JSON.parse
 * keeps the last of duplicates, another parser may keep the first: the text's strings are counted
 * against the parse's). Only for the object `readJson` returned, unchanged since.
 */
export function sentBytes(sent: SentBody): string | undefined {
  return stringTokens(sent.text) === sent.strings ? sent.text : undefined;
}

/** The string tokens (keys and values) of a valid JSON text; a `"` outside a string is not possible in one. */
function stringTokens(text: string): number {
  let n = 0;
  let open = text.indexOf('"');
  while (open >= 0) {
    let close = text.indexOf('"', open + 1);
    // a quote after an odd run of backslashes is escaped: inside the string
    for (;;) {
      if (close < 0) return -1;
      let slash = close - 1;
      while (text.charCodeAt(slash) === 92) slash--;
      if ((close - 1 - slash) % 2 === 0) break;
      close = text.indexOf('"', close + 1);
    }
    n++;
    open = text.indexOf('"', close + 1);
  }
  return n;
}

/**
 * A JSON body read within the limits and validated strictly against its schema: an unknown field is
 * a 400 naming it (and the known name it is nearest to), never ignored, so a misspelled or
 * unsupported field (say `policy` where none is taken) cannot make a key or account without it,
 * silently. Every JSON route that takes a body reads it so: the admin API's and the dashboard's.
 */
export function strictJsonBody(limits: BodyLimits & { maxTextChars: number }) {
  return async <S extends TSchema>(request: Request, schema: S): Promise<Static<S>> =>
    validateAgainst<Static<S>>(schema, await readJsonBody(request, limits), limits.maxTextChars, { strict: true });
}
