import { connect, type Socket } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One HTTP/1.1 connection driven by hand (node:net): keep-alive, pipelining and unfinished bodies
 * exactly as written, which fetch() cannot do. Responses are parsed as they arrive: Content-Length
 * bodies, and chunked ones (streamed answers, lingering ones) once their last chunk has come.
 */
export class RawConnection {
  readonly socket: Socket;
  private buf = Buffer.alloc(0);
  private parsed: RawResponse[] = [];
  private waiters: (() => void)[] = [];
  /** "open" until the server closes ("closed") or resets ("reset") the connection */
  state: "connecting" | "open" | "closed" | "reset" | "refused" = "connecting";
  readonly ready: Promise<void>;

  /** `localAddress`: the source address to connect from (any 127.x.y.z works on Linux loopback) */
  constructor(port: number, host = "127.0.0.1", localAddress?: string) {
    this.socket = connect({ port, host, localAddress });
    this.ready = new Promise((resolve) => {
      this.socket.once("connect", () => {
        this.state = "open";
        resolve();
      });
      this.socket.once("error", (err: NodeJS.ErrnoException) => {
        this.state = err.code === "ECONNREFUSED" ? "refused" : "reset";
        resolve();
        this.wake();
      });
    });
    this.socket.on("data", (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.parse();
      this.wake();
    });
    this.socket.on("close", () => {
      if (this.state === "open" || this.state === "connecting") this.state = "closed";
      this.wake();
    });
  }

  write(data: string): void {
    this.socket.write(data);
  }

  /** Sends one request; `body` as JSON with its Content-Length unless `raw` gives the bytes as they are. */
  send(method: string, path: string, opts: { body?: unknown; headers?: Record<string, string>; raw?: string } = {}): void {
    this.write(request(method, path, opts));
  }

  /** The next response on this connection, or null if the connection ended first (or `timeoutMs` passed). */
  async next(timeoutMs = 10_000): Promise<RawResponse | null> {
    await this.until(() => this.parsed.length > 0 || !this.live(), timeoutMs);
    return this.parsed.shift() ?? null;
  }

  /** Resolves once the server has closed the connection (true), or after `timeoutMs` (false). */
  async closed(timeoutMs = 5000): Promise<boolean> {
    await this.until(() => !this.live(), timeoutMs);
    return !this.live();
  }

  private live(): boolean {
    return this.state === "open" || this.state === "connecting";
  }

  /** Waits until `done()` holds, re-checking on every socket event, or until `timeoutMs` passed. */
  private async until(done: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private parse(): void {
    for (;;) {
      const end = this.buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = this.buf.subarray(0, end).toString("latin1").split("\r\n");
      const status = Number(head[0].split(" ")[1]);
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(":");
        const name = line.slice(0, i).trim().toLowerCase();
        const value = line.slice(i + 1).trim();
        // several Set-Cookie lines (a session and a flash) joined as fetch's Headers.get joins them
        headers[name] = name === "set-cookie" && headers[name] ? `${headers[name]}, ${value}` : value;
      }
      if (headers["transfer-encoding"] === "chunked") {
        const chunked = dechunk(this.buf.subarray(end + 4));
        if (!chunked) return;
        this.buf = this.buf.subarray(end + 4 + chunked.length);
        this.parsed.push({ status, headers, body: chunked.body.toString("utf8") });
        continue;
      }
      const len = Number(headers["content-length"] ?? 0);
      if (this.buf.length < end + 4 + len) return;
      const body = this.buf.subarray(end + 4, end + 4 + len).toString("utf8");
      this.buf = this.buf.subarray(end + 4 + len);
      this.parsed.push({ status, headers, body });
    }
  }
}

/** A whole chunked body at the start of `buf` (no trailers): its bytes and how many bytes of `buf` it took; null if it is not all there yet. */
function dechunk(buf: Buffer): { body: Buffer; length: number } | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = buf.indexOf("\r\n", at);
    if (eol < 0) return null;
    const size = Number.parseInt(buf.subarray(at, eol).toString("latin1"), 16);
    if (size === 0) {
      if (buf.length < eol + 4) return null;
      return { body: Buffer.concat(parts), length: eol + 4 };
    }
    if (buf.length < eol + 2 + size + 2) return null;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** The bytes of one HTTP/1.1 request. */
export function request(
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): string {
  const body = opts.raw ?? (opts.body === undefined ? "" : JSON.stringify(opts.body));
  const headers: Record<string, string> = { host: "127.0.0.1", ...opts.headers };
  if (opts.body !== undefined && !headers["content-type"]) headers["content-type"] = "application/json";
  if (body && opts.raw === undefined) headers["content-length"] = String(Buffer.byteLength(body));
  let out = `${method} ${path} HTTP/1.1\r\n`;
  for (const [k, v] of Object.entries(headers)) out += `${k}: ${v}\r\n`;
  return `${out}\r\n${body}`;
}

/**
 * One request from the source address `from` (a client address of its own, as the gateway sees it:
 * 127.0.0.2, 127.0.0.3, ... on loopback), on a connection of its own. `form` is sent as
 * application/x-www-form-urlencoded with the gateway's own Origin; the answer, or null if none came.
 */
export async function requestFrom(
  url: string,
  from: string,
  method: string,
  path: string,
  opts: { form?: Record<string, string> | URLSearchParams; body?: unknown; headers?: Record<string, string> } = {},
): Promise<RawResponse | null> {
  const u = new URL(url);
  const conn = new RawConnection(Number(u.port), u.hostname, from);
  await conn.ready;
  try {
    const headers: Record<string, string> = { host: u.host, connection: "close", ...opts.headers };
    if (opts.form) {
      const raw = new URLSearchParams(opts.form).toString();
      headers.origin ??= u.origin;
      headers["content-type"] = "application/x-www-form-urlencoded";
      headers["content-length"] = String(Buffer.byteLength(raw));
      conn.send(method, path, { headers, raw });
    } else conn.send(method, path, { headers, body: opts.body });
    return await conn.next();
  } finally {
    conn.destroy();
  }
}
