/**
 * The HTTP/1.1 client of plain-http upstreams (src/providers/http1.ts), byte by byte against raw
 * TCP servers: what it reads (Content-Length, chunked split anywhere, close-delimited, 1xx,
 * compressed), what it writes (a body larger than the socket takes at once), kept-alive
 * connections (reused, not past their idle time, never after the server closed them), aborts,
 * and what it refuses. The transport contract suite (transport-contract.test.ts) runs the
 * provider cases over it against the simulator.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import type { Socket, TCPSocketListener } from "bun";
import { Http1Pool, usesHttp1 } from "../../src/providers/http1";

interface Seen {
  requests: string[];
  connections: number;
}

type Handler = (req: string, socket: Socket<{ buf: string }>, seen: Seen) => void;

const servers: TCPSocketListener<{ buf: string }>[] = [];
const pools: Http1Pool[] = [];
afterEach(() => {
  for (const p of pools.splice(0)) p.close();
});
afterAll(() => {
  for (const s of servers) s.stop(true);
});

/** A raw server: `handle` gets each complete request (head and Content-Length body) and writes what it likes. */
function server(handle: Handler): { url: string; seen: Seen } {
  const seen: Seen = { requests: [], connections: 0 };
  const s = Bun.listen<{ buf: string }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(sock) {
        sock.data = { buf: "" };
        seen.connections++;
      },
      data(sock, chunk) {
        sock.data.buf += chunk.toString("latin1");
        for (;;) {
          const end = sock.data.buf.indexOf("\r\n\r\n");
          if (end < 0) return;
          const len = Number(/content-length: (\d+)/i.exec(sock.data.buf.slice(0, end))?.[1] ?? 0);
          if (sock.data.buf.length < end + 4 + len) return;
          const req = sock.data.buf.slice(0, end + 4 + len);
          sock.data.buf = sock.data.buf.slice(end + 4 + len);
          seen.requests.push(req);
          handle(req, sock, seen);
        }
      },
    },
  });
  servers.push(s);
  return { url: `http://127.0.0.1:${s.port}`, seen };
}

function pool(opts?: { idleMs?: number; maxConnections?: number }): Http1Pool {
  const p = new Http1Pool(opts);
  pools.push(p);
  return p;
}

const json = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

/** Writes `text` a few bytes at a time, each in its own TCP segment. */
async function trickle(sock: Socket<{ buf: string }>, text: string, step = 3): Promise<void> {
  for (let i = 0; i < text.length; i += step) {
    sock.write(text.slice(i, i + step));
    await Bun.sleep(1);
  }
}

const post = (p: Http1Pool, url: string, body = "{}", init: RequestInit = {}) =>
  p.fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer k" },
    body,
    ...init,
  });

describe("the HTTP/1.1 client of plain-http upstreams", () => {
  test("writes the request as fetch would (method, path, host, length, headers, body)", async () => {
    const s = server((_req, sock) => sock.write(json('{"ok":true}')));
    const r = await post(pool(), `${s.url}`, '{"a":"ő"}');
    expect(await r.json()).toEqual({ ok: true });
    const req = s.seen.requests[0] as string;
    expect(req).toStartWith("POST /v1/chat/completions HTTP/1.1\r\n");
    expect(req).toContain(`host: ${new URL(s.url).host}\r\n`);
    expect(req).toContain("authorization: Bearer k\r\n");
    expect(req).toContain("accept-encoding: identity\r\n");
    expect(req).toContain(`content-length: ${Buffer.byteLength('{"a":"ő"}')}\r\n`);
    expect(Buffer.from(req, "latin1").toString("utf8")).toEndWith('\r\n\r\n{"a":"ő"}');
  });

  test("reads a Content-Length body split anywhere, and reuses the connection", async () => {
    const body = JSON.stringify({ text: "x".repeat(5000) });
    const s = server((_req, sock) => void trickle(sock, json(body), 997));
    const p = pool();
    for (let i = 0; i < 3; i++) expect(await (await post(p, s.url)).text()).toBe(body);
    expect(s.seen.connections).toBe(1);
    expect(p.stats).toEqual({ opened: 1, reused: 2, waited: 0 });
  });

  test("reads a chunked body whose sizes, data and CRLFs arrive byte by byte, with extensions and trailers", async () => {
    const events = ['data: {"n":1}\n\n', 'data: {"n":2}\n\n', "data: [DONE]\n\n"];
    const chunked = events.map((e, i) => `${Buffer.byteLength(e).toString(16)}${i === 1 ? ";ext=1" : ""}\r\n${e}\r\n`).join("");
    const s = server(
      (_req, sock) =>
        void trickle(
          sock,
          `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${chunked}0\r\nx-trailer: 1\r\n\r\n`,
          1,
        ),
    );
    const p = pool();
    const r = await post(p, s.url);
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    expect(await r.text()).toBe(events.join(""));
    // the connection is whole after the last chunk: the next request reuses it
    expect(await (await post(p, s.url)).text()).toBe(events.join(""));
    expect(s.seen.connections).toBe(1);
  });

  test("a stream's chunks are given as they arrive, before the body ends", async () => {
    let release: () => void = () => {};
    const later = new Promise<void>((r) => (release = r));
    const s = server((_req, sock) => {
      sock.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n");
      void later.then(() => sock.write("4\r\nlast\r\n0\r\n\r\n"));
    });
    const r = await post(pool(), s.url);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    expect(Buffer.from((await reader.read()).value as Uint8Array).toString()).toBe("first");
    release();
    expect(Buffer.from((await reader.read()).value as Uint8Array).toString()).toBe("last");
    expect((await reader.read()).done).toBe(true);
  });

  test("a close-delimited body ends with the connection, which is not reused", async () => {
    const s = server((_req, sock) => {
      sock.write("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nall of it");
      sock.end();
    });
    const p = pool();
    expect(await (await post(p, s.url)).text()).toBe("all of it");
    expect(await (await post(p, s.url)).text()).toBe("all of it");
    expect(s.seen.connections).toBe(2);
  });

  test("skips interim 1xx answers, and gives 204 no body and an empty 200 an empty one", async () => {
    let n = 0;
    const s = server((_req, sock) => {
      n++;
      if (n === 1) sock.write(`HTTP/1.1 100 Continue\r\n\r\n${json('{"after":"100"}')}`);
      else if (n === 2) sock.write("HTTP/1.1 204 No Content\r\n\r\n");
      else sock.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 0\r\n\r\n");
    });
    const p = pool();
    expect(await (await post(p, s.url)).json()).toEqual({ after: "100" });
    const none = await post(p, s.url);
    expect([none.status, none.body]).toEqual([204, null]);
    const empty = await post(p, s.url);
    expect(empty.body).not.toBeNull();
    expect(await empty.text()).toBe("");
    expect(s.seen.connections).toBe(1);
  });

  test("status, status text and repeated headers come through; an error answer's body is read like any", async () => {
    const s = server((_req, sock) =>
      sock.write(
        'HTTP/1.1 429 Too Many Requests\r\nretry-after: 2\r\nx-a: 1\r\nx-a: 2\r\ncontent-length: 13\r\n\r\n{"error":"x"}',
      ),
    );
    const r = await post(pool(), s.url);
    expect([r.status, r.statusText, r.headers.get("retry-after"), r.headers.get("x-a")]).toEqual([
      429,
      "Too Many Requests",
      "2",
      "1, 2",
    ]);
    expect(await r.json()).toEqual({ error: "x" });
  });

  test("a gzip answer sent although identity was asked for is decoded", async () => {
    const body = JSON.stringify({ zipped: "y".repeat(2000) });
    const gz = gzipSync(body);
    const s = server((_req, sock) => {
      sock.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: ${gz.length}\r\n\r\n`,
      );
      sock.write(gz);
    });
    const r = await post(pool(), s.url);
    expect(r.headers.get("content-encoding")).toBeNull();
    expect(await r.text()).toBe(body);
  });

  test("a body larger than the socket takes at once is written whole", async () => {
    const big = JSON.stringify({ text: "z".repeat(8 * 1024 * 1024) });
    const s = server((req, sock) => sock.write(json(JSON.stringify({ got: req.length }))));
    const r = await post(pool(), s.url, big);
    const head = (s.seen.requests[0] as string).indexOf("\r\n\r\n") + 4;
    expect(((await r.json()) as { got: number }).got).toBe(head + big.length);
  });

  test("a connection idle past idleMs is not reused; one the server closed is never written to", async () => {
    const s = server((_req, sock) => sock.write(json("{}")));
    const p = pool({ idleMs: 50 });
    await post(p, s.url);
    await Bun.sleep(80);
    await post(p, s.url);
    expect(s.seen.connections).toBe(2);

    // the server closes each connection after answering (its keep-alive timeout, at once)
    const closing = server((_req, sock) => {
      sock.write(json("{}"));
      setTimeout(() => sock.end(), 5);
    });
    const q = pool();
    for (let i = 0; i < 3; i++) {
      expect((await post(q, closing.url)).status).toBe(200);
      await Bun.sleep(100);
    }
    expect(closing.seen.requests.length).toBe(3);
    expect(closing.seen.connections).toBe(3);
  });

  test("a server's Keep-Alive: timeout=N bounds the reuse to a second less; without it, the pool's own idle time", async () => {
    // timeout=2: reused within 1 s of idleness, not after
    const says = server((_req, sock) => sock.write(json("{}", "keep-alive: timeout=2, max=100\r\n")));
    const p = pool();
    await post(p, says.url);
    await Bun.sleep(300);
    await post(p, says.url);
    expect(says.seen.connections).toBe(1);
    await Bun.sleep(1_200);
    await post(p, says.url);
    expect(says.seen.connections).toBe(2);
    // timeout=1: never reused after any idle time worth the name
    const brief = server((_req, sock) => sock.write(json("{}", "Keep-Alive: timeout=1\r\n")));
    await post(p, brief.url);
    await Bun.sleep(20);
    await post(p, brief.url);
    expect(brief.seen.connections).toBe(2);
    // silent: the pool's 4 s
    const silent = server((_req, sock) => sock.write(json("{}")));
    await post(p, silent.url);
    await Bun.sleep(1_200);
    await post(p, silent.url);
    expect(silent.seen.connections).toBe(1);
  });

  test("backpressure: a stream's unread bytes stop the socket's reading at about 1 MiB; reading resumes it; the connection is reused after", async () => {
    const piece = "x".repeat(64 * 1024);
    const frame = `${piece.length.toString(16)}\r\n${piece}\r\n`;
    // the server writes as fast as TCP takes it, counting what it got out; `finite` ends after 64 frames (4 MiB)
    let sent = 0;
    const writing = new Set<Socket<{ buf: string }>>();
    const pump = (sock: Socket<{ buf: string }>, frames: number) => {
      writing.add(sock);
      let left = frames;
      let pending = "";
      const go = () => {
        while (writing.has(sock)) {
          if (pending === "") {
            if (left === 0) {
              writing.delete(sock);
              sock.write("0\r\n\r\n");
              return;
            }
            pending = frame;
            left--;
          }
          const n = Math.max(0, sock.write(pending));
          sent += n;
          pending = pending.slice(n);
          // TCP took what it could: try again shortly
          if (pending !== "") return void setTimeout(go, 1);
        }
      };
      go();
    };
    const s = server((req, sock) => {
      sock.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n");
      pump(sock, req.includes('"finite"') ? 64 : -1);
    });
    const p = pool();
    const res = await post(p, s.url, '{"endless":true}');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await Bun.sleep(300);
    const stalled = sent;
    await Bun.sleep(300);
    // nothing read for 600 ms: the server could only fill the TCP buffers, then nothing more
    expect(sent - stalled).toBeLessThan(1024 * 1024);
    expect(stalled).toBeLessThan(32 * 1024 * 1024);
    // reading again takes the queue and lets the server go on
    let got = 0;
    while (got < 40 * 1024 * 1024) got += ((await reader.read()).value as Uint8Array).length;
    expect(sent).toBeGreaterThan(stalled);
    await reader.cancel();
    writing.clear();

    // a finite stream read slowly (its socket paused on the way) leaves its connection readable for the next request
    const finite = await post(p, s.url, '{"finite":true}');
    const r2 = (finite.body as ReadableStream<Uint8Array>).getReader();
    let total = 0;
    for (;;) {
      const { done, value } = await r2.read();
      if (done) break;
      total += value.length;
      if (total < 2 * 1024 * 1024) await Bun.sleep(20);
    }
    expect(total).toBe(64 * piece.length);
    const reusedBefore = p.stats.reused;
    const again = await post(p, s.url, '{"finite":true}');
    expect(p.stats.reused).toBe(reusedBefore + 1);
    let againTotal = 0;
    for await (const c of again.body as ReadableStream<Uint8Array>) againTotal += c.length;
    expect(againTotal).toBe(64 * piece.length);
  });

  test("an answer that comes before the request was written whole (a 413 at the head) does not leave the connection for reuse", async () => {
    let connections = 0;
    const early = Bun.listen<{ answered: boolean; got: number }>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(sock) {
          connections++;
          sock.data = { answered: false, got: 0 };
        },
        data(sock, chunk) {
          sock.data.got += chunk.length;
          // answers at the head, and reads nothing more of this request's body
          if (!sock.data.answered) {
            sock.data.answered = true;
            sock.write(
              'HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"too":"b"}',
            );
            sock.pause();
          }
        },
      },
    });
    servers.push(early as unknown as TCPSocketListener<{ buf: string }>);
    const p = pool();
    const url = `http://127.0.0.1:${early.port}`;
    const first = await post(p, url, JSON.stringify({ text: "q".repeat(16 * 1024 * 1024) }));
    expect(first.status).toBe(413);
    const second = await post(p, url, "{}");
    expect(second.status).toBe(413);
    expect(connections).toBe(2);
  });

  test("connection: close in the answer closes the connection after it", async () => {
    const s = server((_req, sock) => sock.write(json("{}", "connection: close\r\n")));
    const p = pool();
    await post(p, s.url);
    await post(p, s.url);
    expect(s.seen.connections).toBe(2);
  });

  test("the caller's abort rejects with an AbortError, before the answer or mid-stream, and closes the connection", async () => {
    const silent = server(() => {});
    const ctrl = new AbortController();
    const pending = post(pool(), silent.url, "{}", { signal: ctrl.signal });
    await Bun.sleep(20);
    ctrl.abort();
    expect(((await pending.catch((e) => e)) as Error).name).toBe("AbortError");

    const s = server((_req, sock) =>
      sock.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n"),
    );
    const ctrl2 = new AbortController();
    const p = pool();
    const r = await post(p, s.url, "{}", { signal: ctrl2.signal });
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    ctrl2.abort();
    expect(((await reader.read().catch((e) => e)) as Error).name).toBe("AbortError");
    // nothing of that connection is reused
    await post(p, s.url).catch(() => {});
    expect(s.seen.connections).toBe(2);

    const already = new AbortController();
    already.abort();
    expect(((await post(p, s.url, "{}", { signal: already.signal }).catch((e) => e)) as Error).name).toBe("AbortError");
  });

  test("a cancelled stream closes its connection instead of reading the rest", async () => {
    const s = server((_req, sock) =>
      sock.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n"),
    );
    const p = pool();
    const r = await post(p, s.url);
    await (r.body as ReadableStream<Uint8Array>).cancel();
    await post(p, s.url).then((x) => x.body?.cancel());
    expect(s.seen.connections).toBe(2);
  });

  test("a connection that fails mid-answer, a refused connection and a malformed answer are errors, never a second request", async () => {
    const cut = server((_req, sock) => {
      sock.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"par');
      sock.end();
    });
    expect(String(await post(pool(), cut.url).catch((e) => e))).toContain("closed");
    expect(cut.seen.requests.length).toBe(1);

    const chunkCut = server((_req, sock) => {
      sock.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfir");
      sock.end();
    });
    const r = await post(pool(), chunkCut.url);
    expect(String(await r.text().catch((e) => e))).toContain("closed");

    const dead = server(() => {});
    const port = new URL(dead.url).port;
    (servers.pop() as TCPSocketListener<{ buf: string }>).stop(true);
    expect(String(await post(pool(), `http://127.0.0.1:${port}`).catch((e) => e))).toContain("connection failed");

    for (const bad of [
      "HTTP/2 200\r\n\r\n",
      "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: 1x\r\n\r\n",
    ]) {
      const s = server((_req, sock) => sock.write(bad));
      expect(String(await post(pool(), s.url).catch((e) => e))).toContain("malformed");
    }
    const badChunk = server((_req, sock) => sock.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"));
    const bc = await post(pool(), badChunk.url);
    expect(String(await bc.text().catch((e) => e))).toContain("malformed chunked");
  });

  test("at most maxConnections per origin: the requests beyond wait for a free one, and an abort takes one out of the queue", async () => {
    let inFlight = 0;
    let most = 0;
    const s = server((_req, sock) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        sock.write(json("{}"));
      }, 10);
    });
    const p = pool({ maxConnections: 3 });
    const ctrl = new AbortController();
    const all = Array.from({ length: 12 }, (_, i) =>
      post(p, s.url, "{}", i === 11 ? { signal: ctrl.signal } : {}).then(
        (r) => r.status,
        (e: Error) => e.name,
      ),
    );
    ctrl.abort();
    expect(await Promise.all(all)).toEqual([...Array(11).fill(200), "AbortError"]);
    expect(most).toBe(3);
    expect(s.seen.connections).toBe(3);
    expect(s.seen.requests.length).toBe(11);
    expect(p.stats.waited).toBe(9);

    // a connection the server closes frees its place for the next waiting request
    const closing = server((_req, sock) => {
      sock.write(json("{}", "connection: close\r\n"));
      sock.end();
    });
    const q = pool({ maxConnections: 2 });
    const five = await Promise.all(Array.from({ length: 5 }, () => post(q, closing.url).then((r) => r.status)));
    expect(five).toEqual(Array(5).fill(200));
    expect(closing.seen.connections).toBe(5);
  });

  test("a header name or value that would split the request is refused before anything is sent", async () => {
    const s = server((_req, sock) => sock.write(json("{}")));
    const cases: Record<string, string>[] = [{ "x-a": "1\r\nx-injected: 1" }, { "bad name": "1" }, { "x-a": "a\nb" }];
    for (const headers of cases) {
      const err = await pool()
        .fetch(`${s.url}/v1/x`, { method: "POST", headers, body: "{}" })
        .catch((e) => e);
      expect(err).toBeInstanceOf(TypeError);
    }
    expect(s.seen.requests.length).toBe(0);
  });

  test("an idle kept-alive connection does not keep the process alive", async () => {
    const s = server((_req, sock) => sock.write(json("{}")));
    const script = `
      import { Http1Pool } from ${JSON.stringify(`${import.meta.dir}/../../src/providers/http1.ts`)};
      const p = new Http1Pool();
      for (let i = 0; i < 2; i++) await (await p.fetch("${s.url}/v1/x", { method: "POST", body: "{}" })).text();
      console.log("done", p.stats.reused);
    `;
    const child = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => child.kill(), 5000);
    const code = await child.exited;
    clearTimeout(timer);
    expect(await new Response(child.stdout).text()).toBe("done 1\n");
    expect(code).toBe(0);
  });

  test("is used for plain http only, never behind an HTTP proxy, and can be turned off", () => {
    expect(usesHttp1("http://127.0.0.1:8000/v1", {})).toBe(true);
    expect(usesHttp1("https://api.openai.com/v1", {})).toBe(false);
    expect(usesHttp1("http://sidecar:8000/v1", { HTTP_PROXY: "http://proxy:3128" })).toBe(false);
    expect(usesHttp1("http://sidecar:8000/v1", { http_proxy: "http://proxy:3128" })).toBe(false);
    expect(usesHttp1("http://sidecar:8000/v1", { TEXTAI_UPSTREAM_CLIENT: "fetch" })).toBe(false);
  });
});
