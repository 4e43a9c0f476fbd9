/**
 * A small HTTP/1.1 client on the JavaScript thread, for `http://` upstreams (a self-hosted
 * OpenAI-compatible server, a sidecar, the simulator): the lean transport's `fetch` for them
 * (issue 26). Bun's `fetch` runs its requests on a separate HTTP client thread, and each call
 * crosses threads twice; over `Bun.connect` the request is written and the answer read on the
 * event loop itself: in one measurement (bench/README.md, 2026-11-27) the hop took half the CPU
 * and 30 µs less at one request at a time.
 *
 * What it does, and what it leaves to `fetch` (the transport picks it only where it applies):
 * - POST with a string body and headers; the answer as a standard `Response`. A body with a
 *   Content-Length is read whole before the Response is given (within the transport's timeout, as
 *   a plain answer's body is anyway); a chunked or close-delimited body (a stream) is given as it
 *   arrives, through a ReadableStream, and the socket is not read while 1 MiB of it waits for
 *   the stream's reader (backpressure: a fast upstream and a slow client do not fill memory).
 * - Kept-alive connections per origin, reused one request at a time; a connection idle for
 *   `idleMs` (4 s, under the usual servers' keep-alive timeouts), or for a second less than the
 *   server's own `Keep-Alive: timeout=N`, is closed rather than reused, so a request is not
 *   written onto a connection the server is closing. A request is never sent
 *   twice: a connection that fails is the call's error (the router's fallback decides what next).
 * - `accept-encoding: identity`: answers come uncompressed; one compressed anyway (gzip, deflate,
 *   br) is decoded when read whole, and refused as a stream.
 * - A body read whole is at most `maxBodyBytes` (MAX_UPSTREAM_BODY), decoded too: a longer
 *   Content-Length fails the call at the head, before its body is read (the connection is closed).
 * - The caller's AbortSignal closes the connection and rejects with an AbortError, as fetch does.
 * - No TLS, proxies or redirects: `https://` upstreams, and every upstream when an HTTP proxy is
 *   set in the environment, keep Bun's fetch (see `usesHttp1`).
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import type { Socket } from "bun";
import { answerTooLarge, type FetchLike, MAX_UPSTREAM_BODY } from "./http-transport";

const CRLF2 = Buffer.from("\r\n\r\n");
const MAX_HEAD = 64 * 1024;
/** bytes of a stream queued for its reader beyond which the socket is no longer read */
const STREAM_QUEUE = 1024 * 1024;
const textEncoder = new TextEncoder();

/**
 * Whether calls to `baseUrl` go through this client: plain http, no HTTP proxy in the environment,
 * and not turned off (`TEXTAI_UPSTREAM_CLIENT=fetch`).
 */
export function usesHttp1(baseUrl: string, env: Record<string, string | undefined> = process.env): boolean {
  if (!baseUrl.startsWith("http://") || env.TEXTAI_UPSTREAM_CLIENT === "fetch") return false;
  return !(env.HTTP_PROXY || env.http_proxy || env.ALL_PROXY || env.all_proxy);
}

let shared: Http1Pool | null = null;
/** The process's pool, made on first use. */
export function sharedHttp1Pool(): Http1Pool {
  shared ??= new Http1Pool();
  return shared;
}

interface Head {
  status: number;
  statusText: string;
  headers: Headers;
  /** the body's length, when the answer says so */
  length: number | null;
  chunked: boolean;
  /** the connection may carry another request after this answer */
  keepAlive: boolean;
  encoding: string | null;
  /** the server's `Keep-Alive: timeout=N`, in ms, when it says */
  keepAliveMs: number | null;
}

/** What the connection is reading now. */
type Reader =
  | { kind: "idle" }
  | { kind: "head"; call: PendingCall }
  | { kind: "whole"; call: PendingCall; head: Head; parts: Uint8Array[]; have: number }
  | { kind: "stream"; head: Head; ctrl: ReadableStreamDefaultController<Uint8Array>; chunk: ChunkState | null };

interface PendingCall {
  resolve: (r: Response) => void;
  reject: (e: unknown) => void;
}

/** Where a chunked body's parser is: in a chunk (bytes left), or between chunks. */
interface ChunkState {
  left: number;
  /** bytes of a chunk-size line (or of the CRLF after a chunk) kept until the line ends */
  line: string;
  afterChunk: boolean;
  trailers: boolean;
}

class Connection {
  constructor(private readonly maxBody: number) {}
  socket: Socket<Connection> | null = null;
  private buf: Uint8Array | null = null;
  reader: Reader = { kind: "idle" };
  closed = false;
  idleSince = 0;
  /**
   * How long this connection may sit idle and still be reused, by the server's word: a second
   * less than its last answer's `Keep-Alive: timeout` (as undici does), so a request is not written
   * as the server closes; no bound of its own when the server says nothing.
   */
  serverIdleMs = Number.POSITIVE_INFINITY;
  /** the socket is not being read: a stream's reader is behind (backpressure) */
  private paused = false;
  /** the pool's: told when this connection is free for another request, and when it is gone */
  owner: { idle(c: Connection): void; gone(c: Connection): void } | null = null;
  /** the current call's clean-up (its abort listener), run when the connection is released or gone */
  callDone: (() => void) | null = null;

  private endCall(): void {
    const f = this.callDone;
    this.callDone = null;
    f?.();
  }

  /** bytes of the request the socket did not take yet (Bun's sockets do not buffer writes) */
  private unsent: Uint8Array | null = null;

  write(bytes: Uint8Array): void {
    if (this.unsent) {
      this.unsent = Buffer.concat([this.unsent, bytes]);
      return;
    }
    const n = (this.socket as Socket<Connection>).write(bytes);
    if (n < bytes.length) this.unsent = bytes.subarray(Math.max(0, n));
  }

  drain(): void {
    const rest = this.unsent;
    if (!rest || !this.socket) return;
    this.unsent = null;
    this.write(rest);
  }

  data(chunk: Uint8Array): void {
    this.buf = this.buf && this.buf.length > 0 ? Buffer.concat([this.buf, chunk]) : chunk;
    this.pump();
  }

  /** Reads what the buffer holds for the current reader; loops while it advances. */
  private pump(): void {
    for (;;) {
      const buf = this.buf;
      if (!buf || buf.length === 0) return;
      const r = this.reader;
      if (r.kind === "idle") {
        // bytes nobody asked for: the connection is not reusable
        this.destroy();
        return;
      }
      if (r.kind === "head") {
        const end = indexOfCrlf2(buf);
        if (end < 0) {
          if (buf.length > MAX_HEAD) this.fail(new Error("upstream answer head too large"));
          return;
        }
        let head: Head;
        try {
          head = parseHead(Buffer.from(buf.buffer, buf.byteOffset, end).toString("latin1"));
        } catch (e) {
          this.fail(e);
          return;
        }
        this.buf = buf.subarray(end + 4);
        // 1xx: an interim answer, the real one follows
        if (head.status < 200) continue;
        this.begin(r.call, head);
        continue;
      }
      if (r.kind === "whole") {
        const need = (r.head.length ?? 0) - r.have;
        const take = Math.min(need, buf.length);
        r.parts.push(buf.subarray(0, take));
        r.have += take;
        this.buf = buf.subarray(take);
        if (r.have === r.head.length) this.finishWhole(r);
        continue;
      }
      // a stream
      if (r.chunk) {
        if (!this.readChunked(r)) return;
        continue;
      }
      // close-delimited
      this.give(r, buf.slice());
      this.buf = null;
      return;
    }
  }

  /** The head of an answer is in: read its body whole, or give it as a stream. */
  private begin(call: PendingCall, head: Head): void {
    if (head.keepAliveMs !== null) this.serverIdleMs = Math.max(0, head.keepAliveMs - 1000);
    const noBody = head.status === 204 || head.status === 304 || head.length === 0;
    if (noBody) {
      this.reader = { kind: "idle" };
      this.release(head.keepAlive);
      // as fetch gives it: no body for a null-body status, else an empty one
      call.resolve(responseOf(head, head.status === 204 || head.status === 304 ? null : new Uint8Array(0)));
      return;
    }
    if (head.length !== null && !head.chunked) {
      if (head.length > this.maxBody) {
        this.fail(answerTooLarge(this.maxBody));
        return;
      }
      this.reader = { kind: "whole", call, head, parts: [], have: 0 };
      return;
    }
    if (head.encoding) {
      this.fail(new Error(`upstream sent a ${head.encoding}-encoded stream; only identity is asked for`));
      return;
    }
    // a chunked or close-delimited body: given as it arrives
    let mine: Reader | null = null;
    const self = this;
    const body = new ReadableStream<Uint8Array>(
      {
        start(ctrl) {
          const chunk = head.chunked ? { left: 0, line: "", afterChunk: false, trailers: false } : null;
          mine = { kind: "stream", head, ctrl, chunk };
          self.reader = mine;
        },
        pull() {
          // the reader caught up: read the socket again
          if (self.reader === mine) self.goOn();
        },
        cancel() {
          // the reader stopped early: the rest of this body is not read, so the connection goes
          // (unless it has finished this body already, and may be serving another request)
          if (self.reader === mine) self.destroy();
        },
      },
      new ByteLengthQueuingStrategy({ highWaterMark: STREAM_QUEUE }),
    );
    call.resolve(responseOf(head, body));
  }

  /** Advances a chunked body; false when the buffer is used up. */
  private readChunked(r: Extract<Reader, { kind: "stream" }>): boolean {
    const st = r.chunk as ChunkState;
    let buf = this.buf as Uint8Array;
    if (st.left > 0) {
      const take = Math.min(st.left, buf.length);
      this.give(r, buf.slice(0, take));
      st.left -= take;
      this.buf = buf.subarray(take);
      if (st.left === 0) st.afterChunk = true;
      return this.buf.length > 0;
    }
    // a line: the CRLF after a chunk, a chunk-size line, or a trailer line
    const nl = buf.indexOf(10);
    if (nl < 0) {
      if (st.line.length + buf.length > 4096) {
        this.streamFailed(r, new Error("malformed chunked encoding"));
        return false;
      }
      st.line += Buffer.from(buf.buffer, buf.byteOffset, buf.length).toString("latin1");
      this.buf = null;
      return false;
    }
    const line = (st.line + Buffer.from(buf.buffer, buf.byteOffset, nl).toString("latin1")).replace(/\r$/, "");
    st.line = "";
    buf = buf.subarray(nl + 1);
    this.buf = buf;
    if (st.afterChunk) {
      st.afterChunk = false;
      if (line !== "") {
        this.streamFailed(r, new Error("malformed chunked encoding"));
        return false;
      }
      return true;
    }
    if (st.trailers) {
      if (line === "") this.endStream(r);
      return true;
    }
    const size = Number.parseInt(line.split(";")[0] as string, 16);
    if (!Number.isFinite(size) || size < 0 || !/^[0-9a-fA-F]+\s*(;.*)?$/.test(line)) {
      this.streamFailed(r, new Error("malformed chunked encoding"));
      return false;
    }
    if (size === 0) st.trailers = true;
    else st.left = size;
    return true;
  }

  private finishWhole(r: Extract<Reader, { kind: "whole" }>): void {
    this.reader = { kind: "idle" };
    let body: Uint8Array = r.parts.length === 1 ? (r.parts[0] as Uint8Array).slice() : Buffer.concat(r.parts, r.have);
    const head = r.head;
    try {
      if (head.encoding) {
        body = decode(body, head.encoding, this.maxBody);
        head.headers.delete("content-encoding");
        head.headers.delete("content-length");
      }
    } catch (e) {
      this.release(head.keepAlive);
      r.call.reject(e instanceof RangeError ? answerTooLarge(this.maxBody) : e);
      return;
    }
    this.release(head.keepAlive);
    r.call.resolve(responseOf(head, body));
  }

  /**
   * Bytes of a stream for its reader. Backpressure: once its queue holds STREAM_QUEUE bytes the
   * reader has not taken, the socket is paused (the server sees a full TCP window, not a client
   * buffering without end); the stream's pull resumes it. Bytes already received are still parsed.
   */
  private give(r: Extract<Reader, { kind: "stream" }>, bytes: Uint8Array): void {
    r.ctrl.enqueue(bytes);
    if (!this.paused && (r.ctrl.desiredSize ?? 1) <= 0) {
      this.paused = true;
      this.socket?.pause();
    }
  }

  private goOn(): void {
    if (this.paused) {
      this.paused = false;
      this.socket?.resume();
    }
  }

  private endStream(r: Extract<Reader, { kind: "stream" }>): void {
    this.reader = { kind: "idle" };
    this.release(r.head.keepAlive);
    r.ctrl.close();
  }

  private streamFailed(r: Extract<Reader, { kind: "stream" }>, err: Error): void {
    this.reader = { kind: "idle" };
    r.ctrl.error(err);
    this.destroy();
  }

  /** After a whole answer: back to the pool, or closed. */
  private release(keepAlive: boolean): void {
    // a stream that ended while its reader was behind: the next answer on this connection is read
    this.goOn();
    // an answer before the whole request went out (a 413 at the head, say) leaves the connection mid-request
    if (!keepAlive || (this.buf && this.buf.length > 0) || this.unsent) {
      this.destroy();
      return;
    }
    this.idleSince = performance.now();
    this.endCall();
    this.owner?.idle(this);
  }

  /** The connection failed or closed: whatever it was reading fails (a close-delimited body ends). */
  fail(err: unknown): void {
    const r = this.reader;
    this.reader = { kind: "idle" };
    if (r.kind === "head" || r.kind === "whole") r.call.reject(err);
    // a close-delimited body ends with the connection (unless the caller aborted it)
    else if (r.kind === "stream") {
      if (!r.chunk && !(err instanceof AbortedError)) r.ctrl.close();
      else r.ctrl.error(err);
    }
    this.destroy();
  }

  closedByPeer(): void {
    if (this.closed) return;
    this.fail(new Error("upstream closed the connection"));
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket?.terminate();
    this.socket = null;
    this.endCall();
    this.owner?.gone(this);
  }
}

class AbortedError extends Error {
  override name = "AbortError";
  constructor(reason?: unknown) {
    super(reason instanceof Error ? reason.message : "This operation was aborted");
  }
}

/** A request waiting for a connection to its origin, all of them busy. */
interface Waiter {
  resolve: (c: Connection) => void;
  reject: (e: unknown) => void;
}

/** One origin's connections. */
interface Origin {
  target: Target;
  idle: Connection[];
  /** connections open or opening, idle ones included */
  open: number;
  waiters: Waiter[];
}

/**
 * Kept-alive connections to the origins of plain-http upstreams: at most `maxConnections` per
 * origin (256 by default, a bound on the sockets one upstream can be asked to hold); a request
 * beyond waits for one to be free, within its own timeout and abort.
 */
export class Http1Pool {
  private origins = new Map<string, Origin>();
  /** connections opened, and requests sent on a reused one (tests) */
  readonly stats = { opened: 0, reused: 0, waited: 0 };

  constructor(private readonly opts: { idleMs?: number; maxConnections?: number; maxBodyBytes?: number } = {}) {}

  readonly fetch: FetchLike = (input, init) => this.request(String(input), init ?? {});

  private async request(url: string, init: RequestInit): Promise<Response> {
    const u = targetOf(url);
    if (u.protocol !== "http:") return fetch(url, init);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw new AbortedError(signal.reason);
    const text = init.body ?? null;
    if (text !== null && typeof text !== "string") throw new TypeError("http1: only string bodies");
    const message = textEncoder.encode(
      requestHead(init.method ?? "GET", u, init.headers, text === null ? null : Buffer.byteLength(text)) + (text ?? ""),
    );
    const conn = await this.acquire(u, signal);
    if (signal?.aborted) {
      conn.destroy();
      throw new AbortedError(signal.reason);
    }
    return new Promise<Response>((resolve, reject) => {
      conn.reader = { kind: "head", call: { resolve, reject } };
      if (signal) {
        // the listener stays for a stream's life: an abort mid-stream closes it
        const onAbort = () => conn.fail(new AbortedError(signal.reason));
        signal.addEventListener("abort", onAbort, { once: true });
        conn.callDone = () => signal.removeEventListener("abort", onAbort);
      }
      conn.write(message);
    });
  }

  private originOf(u: Target): Origin {
    let o = this.origins.get(u.host);
    if (!o) {
      o = { target: u, idle: [], open: 0, waiters: [] };
      this.origins.set(u.host, o);
    }
    return o;
  }

  /** An idle connection, a new one, or the next one freed when `maxConnections` are busy. */
  private acquire(u: Target, signal: AbortSignal | undefined): Promise<Connection> | Connection {
    const o = this.originOf(u);
    const idleMs = this.opts.idleMs ?? 4000;
    const now = performance.now();
    while (o.idle.length > 0) {
      const c = o.idle.pop() as Connection;
      if (now - c.idleSince > Math.min(idleMs, c.serverIdleMs)) {
        c.destroy();
        continue;
      }
      this.stats.reused++;
      c.socket?.ref();
      return c;
    }
    if (o.open < (this.opts.maxConnections ?? 256)) return this.open(o);
    this.stats.waited++;
    return new Promise<Connection>((resolve, reject) => {
      const w: Waiter = { resolve, reject };
      if (signal) {
        const onAbort = () => {
          const i = o.waiters.indexOf(w);
          if (i >= 0) o.waiters.splice(i, 1);
          reject(new AbortedError(signal.reason));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        w.resolve = (c) => {
          signal.removeEventListener("abort", onAbort);
          resolve(c);
        };
        w.reject = (e) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        };
      }
      o.waiters.push(w);
    });
  }

  private async open(o: Origin): Promise<Connection> {
    const conn = new Connection(this.opts.maxBodyBytes ?? MAX_UPSTREAM_BODY);
    o.open++;
    conn.owner = {
      idle: (c) => {
        const next = o.waiters.shift();
        if (next) {
          this.stats.reused++;
          next.resolve(c);
        } else {
          // an idle connection does not keep the process alive (a CLI command ends when its work does)
          c.socket?.unref();
          o.idle.push(c);
        }
      },
      gone: (c) => {
        o.open--;
        const i = o.idle.indexOf(c);
        if (i >= 0) o.idle.splice(i, 1);
        // a place is free: the next waiting request gets a connection of its own
        const next = o.waiters.shift();
        if (next) this.open(o).then(next.resolve, next.reject);
      },
    };
    try {
      conn.socket = await Bun.connect<Connection>({
        hostname: o.target.hostname,
        port: o.target.port,
        data: conn,
        socket: {
          data: (s, chunk) => s.data.data(chunk),
          close: (s) => s.data.closedByPeer(),
          error: (s, err) => s.data.fail(err),
          end: (s) => s.data.closedByPeer(),
          drain: (s) => s.data.drain(),
        },
      });
    } catch (e) {
      conn.destroy();
      throw new Error(`upstream connection failed: ${(e as Error).message}`);
    }
    this.stats.opened++;
    return conn;
  }

  /** Closes every idle connection. */
  close(): void {
    for (const o of this.origins.values()) for (const c of [...o.idle]) c.destroy();
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[\r\n\0]/;

/** A request's target as this client needs it, parsed once per URL (the transport's URLs are few). */
interface Target {
  protocol: string;
  host: string;
  hostname: string;
  port: number;
  /** the request line's method-less start: "<path?query> HTTP/1.1\r\nhost: <host>\r\n" */
  line: string;
}
const targets = new Map<string, Target>();

function targetOf(url: string): Target {
  let t = targets.get(url);
  if (!t) {
    const u = new URL(url);
    t = {
      protocol: u.protocol,
      host: u.host,
      hostname: u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname,
      port: Number(u.port || 80),
      line: `${u.pathname}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\n`,
    };
    if (targets.size >= 1024) targets.clear();
    targets.set(url, t);
  }
  return t;
}

/**
 * Header lines of a headers object the caller passes again and again (a provider's constant set),
 * checked once: a headers object given to this client must not change afterwards (the transport's
 * never do).
 */
const headerLines = new WeakMap<object, string>();

function requestHead(method: string, t: Target, headers: RequestInit["headers"], length: number | null): string {
  let lines = headers && typeof headers === "object" ? headerLines.get(headers) : "";
  if (lines === undefined) {
    lines = linesOf(headers);
    headerLines.set(headers as object, lines);
  }
  return `${method} ${t.line}${lines}${length !== null ? `content-length: ${length}\r\n` : ""}\r\n`;
}

function linesOf(headers: RequestInit["headers"]): string {
  let out = "";
  let hasAccept = false;
  const add = (name: string, value: string) => {
    if (!TOKEN.test(name) || BAD_VALUE.test(value)) throw new TypeError(`http1: invalid header ${JSON.stringify(name)}`);
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-length" || lower === "connection" || lower === "transfer-encoding") return;
    if (lower === "accept-encoding") hasAccept = true;
    out += `${name}: ${value}\r\n`;
  };
  if (headers instanceof Headers)
    headers.forEach((v, k) => {
      add(k, v);
    });
  else if (Array.isArray(headers)) for (const [k, v] of headers) add(k as string, v as string);
  else if (headers) for (const k in headers) add(k, (headers as Record<string, string>)[k] as string);
  return hasAccept ? out : `${out}accept-encoding: identity\r\n`;
}

/** The answer as fetch gives it. */
function responseOf(head: Head, body: Uint8Array | ReadableStream<Uint8Array> | null): Response {
  return new Response(body, { status: head.status, statusText: head.statusText, headers: head.headers });
}

function parseHead(text: string): Head {
  const lines = text.split("\r\n");
  const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0] as string);
  if (!status) throw new Error("malformed upstream answer");
  const headers = new Headers();
  let length: number | null = null;
  let chunked = false;
  let keepAlive = status[1] === "1";
  let encoding: string | null = null;
  let keepAliveMs: number | null = null;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(":");
    if (colon <= 0) throw new Error("malformed upstream answer header");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers.append(name, value);
    if (name === "content-length") {
      const n = Number(value);
      if (!/^\d+$/.test(value) || (length !== null && length !== n)) throw new Error("malformed upstream content-length");
      length = n;
    } else if (name === "transfer-encoding") {
      if (
        value
          .toLowerCase()
          .split(",")
          .map((s) => s.trim())
          .includes("chunked")
      )
        chunked = true;
      else throw new Error(`upstream transfer-encoding ${value} is not supported`);
    } else if (name === "connection") {
      const v = value.toLowerCase();
      if (v.includes("close")) keepAlive = false;
      else if (v.includes("keep-alive")) keepAlive = true;
    } else if (name === "content-encoding") {
      const v = value.toLowerCase();
      if (v !== "identity") encoding = v;
    } else if (name === "keep-alive") {
      const t = /(?:^|[,;\s])timeout\s*=\s*(\d+)/i.exec(value);
      if (t) keepAliveMs = Number(t[1]) * 1000;
    }
  }
  if (chunked) length = null;
  const code = Number(status[2]);
  // a body that runs to the close (any but an interim, 204 or 304 answer): the connection ends with it
  if (length === null && !chunked && code >= 200 && code !== 204 && code !== 304) keepAlive = false;
  return { status: code, statusText: status[3] ?? "", headers, length, chunked, keepAlive, encoding, keepAliveMs };
}

/** A compressed body decoded, to at most `max` bytes (more: a RangeError). */
function decode(body: Uint8Array, encoding: string, max: number): Uint8Array {
  const opts = { maxOutputLength: max };
  if (encoding === "gzip" || encoding === "x-gzip") return gunzipSync(body, opts);
  if (encoding === "deflate") return inflateSync(body, opts);
  if (encoding === "br") return brotliDecompressSync(body, opts);
  throw new Error(`upstream content-encoding ${encoding} is not supported`);
}

function indexOfCrlf2(buf: Uint8Array): number {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.length).indexOf(CRLF2);
}
