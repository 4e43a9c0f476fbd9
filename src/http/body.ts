import { clientClosed, GatewayError } from "../errors";

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

/** 413 for a body over `max` bytes; the rest of it is not read, so the connection closes after the answer. */
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
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const reading = declared !== null ? request.arrayBuffer().then((b) => new Uint8Array(b)) : readLimited(request, max);
    if (!timeoutMs) bytes = await reading;
    else {
      // a body trickling in (slowloris) or never ending: answered 408, and the connection closed
      reading.catch(() => {});
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new GatewayError("request_timeout", `the request body did not arrive within ${timeoutMs} ms`, {
                headers: { connection: "close" },
              }),
            ),
          timeoutMs,
        );
      });
      bytes = await Promise.race([reading, late]);
    }
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    // the client dropped the connection mid-body
    if (request.signal.aborted) throw clientClosed("the client closed the connection before sending the whole body");
    throw err;
  } finally {
    clearTimeout(timer);
  }
  if (bytes.byteLength > max) throw payloadTooLarge(max);
  return bytes;
}

/** Reads a JSON object body, within the size limit and the body timeout (see readBytes). */
export async function readJsonBody(request: Request, limits: BodyLimits): Promise<Record<string, unknown>> {
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
  if (!checkedAndStripped(value, 1, limits.maxJsonDepth)) {
    throw new GatewayError("invalid_request", `request body nests deeper than ${limits.maxJsonDepth} levels`);
  }
  return value as Record<string, unknown>;
}

async function readLimited(request: Request, max: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(max);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

const FORBIDDEN = ["__proto__", "constructor", "prototype"];

/**
 * One walk of a parsed body: false when it nests deeper than `max` levels (the forbidden keys'
 * values counted too); otherwise every "__proto__", "constructor" and "prototype" key is gone
 * (JSON.parse makes "__proto__" an own data property: none is left for a later merge to pollute a
 * prototype with). Recursion is bounded by `max`.
 */
function checkedAndStripped(v: object, depth: number, max: number): boolean {
  if (depth > max) return false;
  if (Array.isArray(v)) {
    for (const c of v) if (c && typeof c === "object" && !checkedAndStripped(c, depth + 1, max)) return false;
    return true;
  }
  const obj = v as Record<string, unknown>;
  for (const k in obj) {
    const c = obj[k];
    if (c && typeof c === "object" && !checkedAndStripped(c, depth + 1, max)) return false;
  }
  for (const k of FORBIDDEN) if (Object.hasOwn(obj, k)) delete obj[k];
  return true;
}
