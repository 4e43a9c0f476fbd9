/**
 * The cap on what the lean transport reads of one upstream answer (MAX_UPSTREAM_BODY, here set
 * lower): a Content-Length past it fails at the head without reading on, a chunked or compressed
 * body as soon as the cap is passed, a stream's single event past it ends the stream; each as a
 * `connection` failure that names the size. Both clients behind HttpTransport: the HTTP/1.1 client
 * and Bun's fetch. Against raw TCP servers that send what no well-behaved upstream would.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import type { Socket, TCPSocketListener } from "bun";
import { HttpTransport, MAX_UPSTREAM_BODY } from "../../src/providers/http-transport";
import { Http1Pool } from "../../src/providers/http1";
import { ProviderError } from "../../src/providers/types";

const MAX = 64 * 1024;

interface Conn {
  closed: boolean;
  sent: number;
}
const servers: TCPSocketListener<Conn>[] = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
});

/** A raw server: on each request's head, `answer` writes what it likes (it may go on writing). */
function server(answer: (sock: Socket<Conn>) => void): { url: string; conns: Conn[] } {
  const conns: Conn[] = [];
  const s = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(sock) {
        sock.data = { closed: false, sent: 0 };
        conns.push(sock.data);
      },
      data(sock, chunk) {
        if (chunk.toString("latin1").includes("\r\n\r\n")) answer(sock);
      },
      close(sock) {
        sock.data.closed = true;
      },
    },
  });
  servers.push(s);
  return { url: `http://127.0.0.1:${s.port}`, conns };
}

/** Writes `piece` every few ms until the connection closes (an answer that never ends). */
function endless(sock: Socket<Conn>, piece: string): void {
  const t = setInterval(() => {
    if (sock.data.closed) return clearInterval(t);
    sock.data.sent += sock.write(piece);
  }, 2);
}

const CLIENTS = {
  http1: () => new Http1Pool({ maxBodyBytes: MAX }).fetch,
  fetch: () => fetch,
} as const;

function transport(client: keyof typeof CLIENTS, url: string): HttpTransport {
  return new HttpTransport({ baseUrl: url, apiKey: "k", timeoutMs: 10_000, fetch: CLIENTS[client](), maxBodyBytes: MAX });
}

const CHAT = { model: "m", messages: [{ role: "user", content: "hi" }] };

/** The call's failure: a ProviderError of kind `connection` naming the cap. */
async function tooLarge(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  expect((err as ProviderError).kind).toBe("connection");
  expect((err as ProviderError).message).toBe("upstream answer larger than 65536 bytes, not read");
  return err as ProviderError;
}

const answer = (body: string | Uint8Array, head: string) =>
  Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\n${head}\r\n`, "latin1"), Buffer.from(body)]);

test("the gateway's cap is 64 MiB, and says so in MiB", async () => {
  expect(MAX_UPSTREAM_BODY).toBe(64 * 1024 * 1024);
  const { url } = server((sock) =>
    sock.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 107374182400\r\n\r\n{"),
  );
  const t = new HttpTransport({ baseUrl: url, apiKey: "k", timeoutMs: 10_000, fetch: new Http1Pool().fetch });
  const err = await t.post("/chat/completions", CHAT, { stream: false }).catch((e: unknown) => e);
  expect((err as Error).message).toBe("upstream answer larger than 64 MiB, not read");
});

describe.each(Object.keys(CLIENTS) as (keyof typeof CLIENTS)[])("%s", (client) => {
  test("a Content-Length of 100 GB trickled: refused at the head, not read until the timeout", async () => {
    const { url, conns } = server((sock) => {
      sock.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 107374182400\r\n\r\n");
      endless(sock, " ".repeat(1024));
    });
    const started = performance.now();
    await tooLarge(transport(client, url).post("/chat/completions", CHAT, { stream: false }));
    expect(performance.now() - started).toBeLessThan(2_000);
    // the connection is let go: the server sees it closed
    for (let i = 0; i < 100 && !conns.every((c) => c.closed); i++) await Bun.sleep(10);
    expect(conns.every((c) => c.closed)).toBe(true);
  });

  test("a chunked plain answer past the cap fails once the cap is passed; one under it is read whole", async () => {
    const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
    const { url } = server((sock) => {
      sock.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n");
      sock.write(chunk(`"${"a".repeat(1000)}`));
      endless(sock, chunk("a".repeat(1024)));
    });
    await tooLarge(transport(client, url).post("/chat/completions", CHAT, { stream: false }));

    const fits = JSON.stringify({ text: "b".repeat(MAX - 20) });
    const ok = server((sock) => {
      sock.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n");
      sock.write(`${chunk(fits)}0\r\n\r\n`);
    });
    const got = (await transport(client, ok.url).post("/chat/completions", CHAT, { stream: false })) as { text: string };
    expect(got.text.length).toBe(MAX - 20);
  });

  test("a compressed answer that decodes past the cap (a small gzip of zeros) is refused", async () => {
    const bomb = gzipSync(Buffer.from(JSON.stringify({ text: "0".repeat(50 * MAX) })));
    expect(bomb.length).toBeLessThan(MAX);
    const { url } = server((sock) =>
      sock.write(answer(bomb, `content-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: ${bomb.length}\r\n`)),
    );
    await tooLarge(transport(client, url).post("/chat/completions", CHAT, { stream: false }));
  });

  test("an error answer's body past the cap: its status still counts, the body is not read", async () => {
    const { url } = server((sock) => {
      sock.write("HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n");
      endless(sock, `400\r\n${"e".repeat(1024)}\r\n`);
    });
    const err = (await transport(client, url)
      .post("/chat/completions", CHAT, { stream: false })
      .catch((e: unknown) => e)) as { status?: number; message: string };
    expect(err.status).toBe(503);
    expect(err.message).toBe("503 upstream answer larger than 65536 bytes, not read");
  });

  test("a stream: events relayed as they come, whatever their total; one event past the cap ends it", async () => {
    const event = `data: ${JSON.stringify({ choices: [{ delta: { content: "x".repeat(1000) } }] })}\n\n`;
    // 200 events of 1 KB (3x the cap in all), then one event that never ends
    const { url } = server((sock) => {
      sock.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n");
      sock.write(event.repeat(200));
      sock.write('data: {"choices":[{"delta":{"content":"');
      endless(sock, "y".repeat(1024));
    });
    const events = (await transport(client, url).post(
      "/chat/completions",
      { ...CHAT, stream: true },
      { stream: true },
    )) as AsyncIterable<unknown>;
    let n = 0;
    const err = await (async () => {
      for await (const _ of events) n++;
    })().catch((e: unknown) => e);
    expect(n).toBe(200);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).message).toBe("upstream answer larger than 65536 bytes, not read");
  });
});

describe("server-sent events split anywhere", () => {
  // CRLF, CR and LF endings, a comment, an event name, data over two lines, a multi-byte character
  const events = [
    'data: {"n":1}\r\n\r\n',
    ": a comment\r",
    'event: thread.run\rdata: {"n":2,"s":"é"}\r\r',
    'data: {"n":3,\ndata: "two":"lines"}\n\n',
    'data: {"n":4}\r\n\r\n',
    "data: [DONE]\n\n",
  ].join("");
  const bytes = new TextEncoder().encode(events);

  /** the events the transport reads when the body arrives in these chunks */
  async function read(chunks: Uint8Array[]): Promise<unknown[]> {
    const fake: typeof fetch = (async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(ctrl) {
            for (const c of chunks) ctrl.enqueue(c);
            ctrl.close();
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      )) as unknown as typeof fetch;
    const t = new HttpTransport({ baseUrl: "http://upstream.invalid", apiKey: "k", timeoutMs: 10_000, fetch: fake });
    const out: unknown[] = [];
    for await (const e of (await t.post("/chat/completions", CHAT, { stream: true })) as AsyncIterable<unknown>) out.push(e);
    return out;
  }

  test("the same events whatever the chunks: every split in two and three, an empty chunk between CR and LF", async () => {
    const whole = await read([bytes]);
    expect(whole).toEqual([{ n: 1 }, { event: "thread.run", data: { n: 2, s: "é" } }, { n: 3, two: "lines" }, { n: 4 }]);
    for (let i = 1; i < bytes.length; i++) {
      expect(await read([bytes.subarray(0, i), bytes.subarray(i)]), `split at ${i}`).toEqual(whole);
      for (let j = i + 1; j < bytes.length; j += 7)
        expect(
          await read([bytes.subarray(0, i), new Uint8Array(0), bytes.subarray(i, j), bytes.subarray(j)]),
          `${i}, ${j}`,
        ).toEqual(whole);
    }
    // one byte at a time
    expect(await read(Array.from(bytes, (b) => Uint8Array.of(b)))).toEqual(whole);
  });
});
