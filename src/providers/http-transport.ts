/**
 * The lean transport of the `/v1` pass-through: a POST to an OpenAI-style HTTP API with Bun's
 * `fetch` (kept-alive), its URL prefix and constant headers built once per provider. It behaves
 * as the official SDKs' raw `post` does with `maxRetries: 0` (what the pass-through used before):
 * the same timeout (until the answer's headers; a plain answer's body too), the caller's abort,
 * no retries, errors of the same four kinds with the same fields and messages (so `mapSdkError`
 * maps both alike), plain answers parsed by content type, streams read as server-sent events with
 * the SDK's rules ([DONE], error events, malformed JSON). Function calls (chat completions with a
 * response_format) go through it too (`postText`), as the SDK's `chat.completions.create` sent
 * them. The contract suite (test/providers/transport-contract.test.ts) runs every case against both.
 */
import { readAtMost } from "../bytes";
import type { ProxyTransport, RequestOpts, SdkErrorClasses } from "./openai-like";
import { type FetchLike, ProviderError } from "./types";

/**
 * The most the gateway reads of one upstream answer: a plain answer's body, an error's body, one
 * server-sent event of a stream (64 MiB; a stream as a whole has no bound, its events are relayed
 * as they come). More is a failure of kind `connection`, not memory held until the timeout.
 */
export const MAX_UPSTREAM_BODY = 64 * 1024 * 1024;

/** An upstream answer over `max` bytes (the failure the router falls back from, as a broken connection). */
export function answerTooLarge(max: number): ProviderError {
  const size = max % 1048576 === 0 ? `${max / 1048576} MiB` : `${max} bytes`;
  return new ProviderError("connection", `upstream answer larger than ${size}, not read`);
}

export type { FetchLike } from "./types";

/** An answer outside 2xx (status and headers set), or an error event inside a stream (neither set): the SDKs' APIError. */
export class HttpStatusError extends Error {
  readonly code: string | null;
  readonly param: string | null;
  readonly type: string | null;
  constructor(
    readonly status: number | undefined,
    /** the body's `error` (an object as OpenAI sends it, or whatever the server put there) */
    readonly error: unknown,
    message: string | undefined,
    readonly headers: Headers | undefined,
  ) {
    super(statusMessage(status, error, message));
    this.name = "HttpStatusError";
    const fields = (typeof error === "object" && error !== null ? error : {}) as Record<string, unknown>;
    this.code = (fields.code as string | null | undefined) ?? null;
    this.param = (fields.param as string | null | undefined) ?? null;
    this.type = (fields.type as string | null | undefined) ?? null;
  }
}
export class HttpConnectionError extends Error {
  override name = "HttpConnectionError";
}
export class HttpTimeoutError extends HttpConnectionError {
  override name = "HttpTimeoutError";
}
export class HttpAbortError extends Error {
  override name = "HttpAbortError";
}

export const HTTP_ERRORS: SdkErrorClasses = {
  APIError: HttpStatusError,
  APIConnectionError: HttpConnectionError,
  APIConnectionTimeoutError: HttpTimeoutError,
  APIUserAbortError: HttpAbortError,
};

/** The SDKs' APIError.makeMessage: "<status> <error.message>", else the error as JSON, else the body's text. */
function statusMessage(status: number | undefined, error: unknown, message: string | undefined): string {
  const e = error as { message?: unknown } | null | undefined;
  const msg = e?.message
    ? typeof e.message === "string"
      ? e.message
      : JSON.stringify(e.message)
    : error
      ? JSON.stringify(error)
      : message;
  if (status && msg) return `${status} ${msg}`;
  if (status) return `${status} status code (no body)`;
  return msg || "(no status code or body)";
}

/** UTF-8, as `Response.text()` decodes (a decode without `stream` keeps no state between calls) */
const utf8 = new TextDecoder();

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/**
 * The error object of an error answer, as the openai SDK takes it: the body's `error`, or the whole
 * body when it has none (groq-sdk 1.6 always took the whole body, so its clients got the body as
 * JSON for a message and no type, code or param: this transport serves Groq as OpenAI).
 */
function errorOf(json: unknown): unknown {
  if (typeof json !== "object" || json === null) return undefined;
  const error = (json as { error?: unknown }).error;
  return error === null || error === undefined ? json : error;
}

const isAbortError = (err: unknown) =>
  typeof err === "object" && err !== null && ((err as Error).name === "AbortError" || (err as Error).name === "TimeoutError");

export interface HttpTransportOptions {
  /** the API's base URL; `path` is appended to it */
  baseUrl: string;
  /** Authorization: Bearer (a server without keys still gets the SDKs' placeholder) */
  apiKey: string;
  /** the headers that carry the key instead, for a vendor with another scheme (its descriptor's `authHeaders`) */
  authHeaders?: Record<string, string>;
  timeoutMs: number;
  fetch?: FetchLike;
  /** the most read of one answer (MAX_UPSTREAM_BODY; tests set less) */
  maxBodyBytes?: number;
  /** the URL of a call when it is not `baseUrl` + `path` (an API whose URL names the model: Azure OpenAI's deployments) */
  url?: (path: string, model: string | undefined) => string;
  /**
   * How a streamed answer's body is read, for an API whose streams are not server-sent events
   * (Bedrock's binary event stream): its events, parsed; a failure thrown as the SSE reader's are
   * (HttpStatusError for an error event, SyntaxError for malformed JSON, ProviderError)
   */
  streamEvents?: (body: ReadableStream<Uint8Array> | null, max: number) => AsyncIterable<unknown>;
}

/**
 * One in-flight call: its own AbortController, aborted by one timer (the provider's timeout) or by
 * the caller's signal (one listener, removed when the call is done).
 */
class Call {
  readonly ctrl = new AbortController();
  timedOut = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly signal: AbortSignal | undefined,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.ctrl.abort();
    }, timeoutMs);
    if (signal) {
      if (signal.aborted) this.ctrl.abort();
      else {
        this.onAbort = () => this.ctrl.abort();
        signal.addEventListener("abort", this.onAbort, { once: true });
      }
    }
  }

  /** the timeout no longer applies (a stream's body has none) */
  stopTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  done(): void {
    this.stopTimer();
    if (this.onAbort) this.signal?.removeEventListener("abort", this.onAbort);
  }

  /** What a failure of fetch or of reading the body means: the caller left, the timeout, or the connection. */
  failure(err: unknown): Error {
    if (err instanceof HttpStatusError || err instanceof SyntaxError || err instanceof ProviderError) return err;
    if (this.signal?.aborted) return new HttpAbortError("Request was aborted.");
    if (this.timedOut || isAbortError(err) || /timed? ?out/i.test(String(err))) return new HttpTimeoutError("Request timed out.");
    return new HttpConnectionError("Connection error.");
  }
}

export class HttpTransport implements ProxyTransport {
  readonly kind = "http";
  readonly errors = HTTP_ERRORS;
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly fetch: FetchLike;
  private readonly max: number;

  constructor(private readonly opts: HttpTransportOptions) {
    this.max = opts.maxBodyBytes ?? MAX_UPSTREAM_BODY;
    this.base = opts.baseUrl.endsWith("/") ? opts.baseUrl.slice(0, -1) : opts.baseUrl;
    this.headers = {
      ...(opts.authHeaders ?? { authorization: `Bearer ${opts.apiKey}` }),
      "content-type": "application/json",
      accept: "application/json",
      "user-agent": "textai-gateway",
    };
    this.fetch = opts.fetch ?? fetch;
  }

  post(path: string, body: Record<string, unknown>, o: RequestOpts & { stream: boolean }): Promise<unknown> {
    return this.send(path, JSON.stringify(body), o);
  }

  postText(path: string, body: string, o: RequestOpts & { stream?: boolean }): Promise<unknown> {
    return this.send(path, body, o.stream === undefined ? { ...o, stream: false } : (o as RequestOpts & { stream: boolean }));
  }

  private async send(path: string, body: string, o: RequestOpts & { stream: boolean }): Promise<unknown> {
    const call = new Call(o.signal, this.opts.timeoutMs);
    let response: Response;
    try {
      const send = this.fetch;
      response = await send(this.opts.url ? this.opts.url(path, o.model) : this.base + path, {
        method: "POST",
        headers: o.headers ? { ...this.headers, ...o.headers } : this.headers,
        body,
        signal: call.ctrl.signal,
      });
      if (!response.ok) {
        // the body of an error, within the same timeout (the SDK reads it as text, then tries JSON)
        const text = await readText(response, this.max).catch((e: unknown) => (e instanceof Error ? e.message : String(e)));
        const json = safeJson(text);
        throw new HttpStatusError(response.status, errorOf(json), json ? undefined : text, response.headers);
      }
      if (o.stream) {
        call.stopTimer();
        const decode = this.opts.streamEvents;
        return decode ? decodedEvents(decode(response.body, this.max), call) : sseEvents(response, call, this.max);
      }
      return await parseAnswer(response, this.max);
    } catch (err) {
      call.done();
      throw call.failure(err);
    } finally {
      if (!o.stream) call.done();
    }
  }
}

/** A plain answer as the SDKs parse it: JSON by content type (empty: undefined), else its text. */
async function parseAnswer(response: Response, max: number): Promise<unknown> {
  if (response.status === 204) return null;
  const type = response.headers.get("content-type");
  const media = type?.split(";")[0]?.trim().toLowerCase();
  const length = response.headers.get("content-length");
  if (media?.includes("application/json") || media?.endsWith("+json")) {
    if (length === "0") return undefined;
    const text = await readText(response, max, length);
    return text ? JSON.parse(text) : undefined;
  }
  return readText(response, max, length);
}

/**
 * A body as text (UTF-8, as `text()` reads it), refused past `max` bytes: at once when its
 * Content-Length says so, else as soon as that many have arrived (a chunked body, or one that
 * fetch decompresses: its Content-Length counts the compressed bytes).
 */
async function readText(response: Response, max: number, length = response.headers.get("content-length")): Promise<string> {
  if (length !== null && !response.headers.has("content-encoding")) {
    if (Number(length) > max) {
      await response.body?.cancel().catch(() => {});
      throw answerTooLarge(max);
    }
    return response.text();
  }
  return utf8.decode(await readAtMost(response.body, max, () => answerTooLarge(max)));
}

interface Sse {
  event: string | null;
  data: string;
}

/**
 * The events of a server-sent stream, parsed, as the SDKs' Stream yields them: `[DONE]` ends it,
 * an error event or a payload with `error` throws (no status), malformed JSON is a SyntaxError,
 * the caller's abort ends it quietly; a consumer that stops early aborts the request.
 */
async function* sseEvents(response: Response, call: Call, max: number): AsyncGenerator<unknown> {
  let done = false;
  let sentinel = false;
  try {
    for await (const sse of sseMessages(response, max)) {
      if (sse.data === "[DONE]") {
        sentinel = true;
        break;
      }
      let data: unknown;
      try {
        data = JSON.parse(sse.data);
      } catch {
        throw new SyntaxError("Error reading response: malformed server-sent event JSON.");
      }
      if (sse.event?.startsWith("thread.")) {
        yield { event: sse.event, data };
        continue;
      }
      const d = data as { error?: unknown } | null;
      if (sse.event === "error") throw new HttpStatusError(undefined, d?.error ?? d, undefined, response.headers);
      if (d?.error) throw new HttpStatusError(undefined, d.error, undefined, response.headers);
      yield data;
    }
    done = true;
  } catch (err) {
    if (sentinel || (isAbortError(err) && !(err instanceof HttpStatusError)) || call.ctrl.signal.aborted) return;
    throw err;
  } finally {
    if (!done && !sentinel) call.ctrl.abort();
    call.done();
  }
}

/** A stream read by the API's own decoder (HttpTransportOptions.streamEvents), ended as sseEvents ends one. */
async function* decodedEvents(events: AsyncIterable<unknown>, call: Call): AsyncGenerator<unknown> {
  let done = false;
  try {
    yield* events;
    done = true;
  } catch (err) {
    if ((isAbortError(err) && !(err instanceof HttpStatusError)) || call.ctrl.signal.aborted) return;
    throw err;
  } finally {
    if (!done) call.ctrl.abort();
    call.done();
  }
}

/**
 * SSE framing: lines split at CR, LF or CRLF; `event:` and `data:` fields; comments skipped; a
 * blank line dispatches. One event (or line) over `max` characters ends the stream as too large.
 */
async function* sseMessages(response: Response, max: number): AsyncGenerator<Sse> {
  const body = response.body;
  // as the SDK: a failure, not a stream that ended early
  if (!body) throw new Error("Attempted to iterate over a response with no body");
  const decoder = new TextDecoder();
  let event: string | null = null;
  let data: string[] = [];
  /** characters of the event being read (its data lines so far) */
  let size = 0;
  /** one line; an event when it is the blank line that ends one */
  const line = (raw: string): Sse | null => {
    if (raw === "") {
      if (!event && data.length === 0) return null;
      const out = { event, data: data.join("\n") };
      event = null;
      data = [];
      size = 0;
      return out;
    }
    if (raw.startsWith(":")) return null;
    const colon = raw.indexOf(":");
    const field = colon < 0 ? raw : raw.slice(0, colon);
    let value = colon < 0 ? "" : raw.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") {
      size += value.length;
      if (size > max) throw answerTooLarge(max);
      data.push(value);
    }
    return null;
  };
  // A line not yet ended is kept as the pieces that arrived, joined once it ends: each chunk is
  // scanned once, so a long line costs its length, not its length times the chunks it came in.
  let pending: string[] = [];
  let pendingLength = 0;
  /** the last chunk ended in CR: an LF first in the next is that CRLF's */
  let afterCr = false;
  for await (const chunk of body) {
    const text = decoder.decode(chunk as Uint8Array, { stream: true });
    if (text.length === 0) continue;
    let start = 0;
    if (afterCr) {
      afterCr = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    let cr = text.indexOf("\r", start);
    let lf = text.indexOf("\n", start);
    while (cr >= 0 || lf >= 0) {
      let end: number;
      let next: number;
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        end = cr;
        if (cr === text.length - 1) {
          next = cr + 1;
          afterCr = true;
        } else next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else {
        end = lf;
        next = lf + 1;
      }
      let raw = text.slice(start, end);
      if (pending.length > 0) {
        pending.push(raw);
        raw = pending.join("");
        pending = [];
        pendingLength = 0;
      }
      start = next;
      if (cr >= 0 && cr < start) cr = text.indexOf("\r", start);
      if (lf >= 0 && lf < start) lf = text.indexOf("\n", start);
      const sse = line(raw);
      if (sse) yield sse;
    }
    if (start < text.length) {
      pending.push(start === 0 ? text : text.slice(start));
      pendingLength += text.length - start;
      if (pendingLength > max) throw answerTooLarge(max);
    }
  }
  let tail = decoder.decode();
  if (afterCr && tail.charCodeAt(0) === 10) tail = tail.slice(1);
  for (const raw of (pending.join("") + tail).split(/\r\n|\r|\n/)) {
    const sse = line(raw);
    if (sse) yield sse;
  }
  // the SDK delivers an event the stream ended without its blank line
  const last = line("");
  if (last) yield last;
}
