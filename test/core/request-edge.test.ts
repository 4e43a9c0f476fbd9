import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { wordCount } from "../helpers/echo-function";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { RawConnection, type RawResponse } from "../helpers/raw-http";

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway({
    functions: [wordCount],
    configText: "[dashboard]\nsignup = true\n[plans.tight.rate_limits]\nmodels = 2\n",
  });
  key = gw.newKey({ credits: 100 }).key;
});
afterAll(() => gw.close());

/** Sends `head` (and then `chunk` repeatedly, up to `maxChunks`, while the connection is open) and waits for the answer. */
async function exchange(
  head: string,
  chunk = "",
  maxChunks = 0,
): Promise<{ res: RawResponse | null; sent: number; c: RawConnection }> {
  const c = new RawConnection(gw.port);
  await c.ready;
  c.write(head);
  let sent = 0;
  // the client sends until its answer begins to arrive (an answer given before the whole body has
  // come lingers, reading the rest, until the client stops: its last chunk comes after that)
  let answered = false;
  c.socket.once("data", () => {
    answered = true;
  });
  const feeding = (async () => {
    while (!answered && c.state === "open" && sent < maxChunks) {
      c.write(chunk);
      sent++;
      await Bun.sleep(2);
    }
  })();
  const res = await c.next(5000);
  answered = true;
  await feeding;
  return { res, sent, c };
}

/** The gateway's envelope with its x-request-id, and nothing of its insides. */
function expectEnvelope(res: RawResponse | null, status: number, code: string) {
  expect(res, "an answer").not.toBeNull();
  const r = res as RawResponse;
  expect(r.status, r.body.slice(0, 300)).toBe(status);
  expect(r.headers["content-type"]).toBe("application/json");
  const body = JSON.parse(r.body);
  expect(body).toMatchObject({ success: false, status: "error", code: status, error: { code } });
  expect(r.headers["x-request-id"]).toBe(body.request_id);
  expect(r.body).not.toContain(process.cwd());
  expect(r.body).not.toContain("src/");
}

describe("odd request lines", () => {
  test("CONNECT, absolute-form URLs and unknown methods are answered in the envelope, never an error page", async () => {
    const cases: [string, number, string][] = [
      ["CONNECT 127.0.0.1:22 HTTP/1.1", 404, "not_found"],
      ["CONNECT example.com:443 HTTP/1.1", 404, "not_found"],
      ["CONNECT /health HTTP/1.1", 405, "method_not_allowed"],
      ["GET http://example.com/nowhere HTTP/1.1", 404, "not_found"],
      ["PROPFIND /health HTTP/1.1", 405, "method_not_allowed"],
      ["TRACE /api/v1/account/usage HTTP/1.1", 405, "method_not_allowed"],
      ["OPTIONS /health HTTP/1.1", 405, "method_not_allowed"],
    ];
    for (const [line, status, code] of cases) {
      const { res, c } = await exchange(`${line}\r\nhost: 127.0.0.1\r\n\r\n`);
      expectEnvelope(res, status, code);
      c.destroy();
    }
    // the absolute form of a known path is that route (no path at all is "/", the landing page)
    for (const target of ["http://example.com/health", "http://example.com"]) {
      const { res, c } = await exchange(`GET ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
      expect(res?.status, target).toBe(200);
      expect(JSON.parse(res?.body ?? "{}").request_id).toBe(res?.headers["x-request-id"]);
      c.destroy();
    }
    // and nothing about it reached the log as a crash
    expect(gw.logs.join("\n")).not.toContain("unhandled error");
  });

  test("request lines Bun's parser refuses before the app (`*`, unknown methods) leak nothing either", async () => {
    for (const line of ["OPTIONS * HTTP/1.1", "GET * HTTP/1.1", "BREW /health HTTP/1.1", "GET /health HTTP/2.0"]) {
      const c = new RawConnection(gw.port);
      await c.ready;
      c.write(`${line}\r\nhost: 127.0.0.1\r\n\r\n`);
      const res = await c.next(2000);
      if (res) {
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.body).toBe("");
      }
      expect(await c.closed(2000)).toBe(true);
    }
  });
});

describe("/v1 errors in OpenAI's shape", () => {
  test("unknown /v1 routes (404) and other methods (405) answer {error: {...}} with x-request-id", async () => {
    for (const [method, path, status, code] of [
      ["GET", "/v1/nope", 404, "not_found"],
      ["POST", "/v1/completions/legacy", 404, "not_found"],
      ["DELETE", "/v1/models", 405, "method_not_allowed"],
      ["GET", "/v1/chat/completions", 405, "method_not_allowed"],
    ] as const) {
      const res = await fetch(gw.url + path, { method });
      const body = (await res.json()) as Record<string, unknown>;
      expect(res.status).toBe(status);
      expect(Object.keys(body)).toEqual(["error"]);
      expect(body.error).toEqual({ message: expect.any(String), type: expect.any(String), param: null, code });
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
      if (status === 405) expect(res.headers.get("allow")).toBeTruthy();
    }
    // the gateway's own families keep the envelope
    const own = await gw.get("/api/v1/nope");
    expect(own.json).toMatchObject({ success: false, code: 404, error: { code: "not_found" } });
  });
});

describe("/v1/models through the request edge", () => {
  test("its key's rate limit holds, with the RateLimit headers, and a 429 in OpenAI's shape", async () => {
    const tight = gw.newKey({ plan: "tight" }).key;
    const h = { authorization: `Bearer ${tight}` };
    const first = await fetch(`${gw.url}/v1/models`, { headers: h });
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-limit")).toBe("2");
    expect(first.headers.get("x-request-id")).toMatch(/^req_/);
    // no provider on this gateway: a model is 503 no_provider, and counts toward the limit as any answer
    expect((await fetch(`${gw.url}/v1/models/nope`, { headers: h })).status).toBe(503);
    const third = await fetch(`${gw.url}/v1/models`, { headers: h });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await third.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
  });

  test("a broken percent-encoding in the model id is a 400 after authentication, not a 500", async () => {
    const anonymous = await fetch(`${gw.url}/v1/models/%E0%A4%A`);
    expect(anonymous.status).toBe(401);
    const res = await fetch(`${gw.url}/v1/models/%E0%A4%A`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: "invalid_request", message: "the request path is not valid percent-encoding" });
    expect(gw.logs.join("\n")).not.toContain("unhandled error");
  });

  test("a path that does not decode is 400 invalid_request on every prefix: OpenAI's shape on /v1, the envelope elsewhere", async () => {
    const h = { "x-api-key": key, "content-type": "application/json" };
    for (const path of [
      "/v1/chat%zzcompletions",
      "/v1/chat/completions%zz",
      "/v1/models%E0%A4",
      "/api/v1/ai/word%zzcount",
      "/api/v1/knowledge-bases/%zz",
      "/health%zz",
      "/dashboard%zz",
      "/nowhere/%",
    ])
      for (const method of ["GET", "POST"]) {
        const res = await fetch(gw.url + path, { method, headers: h, body: method === "POST" ? "{}" : undefined });
        const text = await res.text();
        const label = `${method} ${path}: ${res.status} ${text.slice(0, 200)}`;
        expect(res.status, label).toBe(400);
        expect(res.headers.get("x-request-id"), label).toMatch(/^req_/);
        const body = JSON.parse(text);
        const error = { code: "invalid_request", message: "the request path is not valid percent-encoding", param: null };
        if (path.startsWith("/v1/")) expect(body, label).toEqual({ error: { ...error, type: "invalid_request_error" } });
        else expect(body, label).toMatchObject({ success: false, code: 400, error });
      }
    // a route with a credential answers 401 first, as it does to any request without one
    expect((await fetch(`${gw.url}/api/v1/knowledge-bases/%zz`)).status).toBe(401);
    // what decodes is routed as ever: an encoded slash is no route, an encoded letter neither
    for (const path of ["/v1/chat%2Fcompletions", "/api/v1/ai/word-coun%74"])
      expect((await fetch(gw.url + path, { method: "POST", headers: h, body: "{}" })).status, path).toBe(404);
  });

  // /v1/models/* is a wildcard route, which Bun's route table leaves to Elysia's own router; that
  // router once assumed a host of at least four characters and missed the route behind a shorter one
  test("GET /v1/models/{id} is routed whatever the Host header, short service names included", async () => {
    for (const host of ["x", "gw", "api", "x:1", "gw:8080"]) {
      const c = new RawConnection(gw.port);
      await c.ready;
      c.send("GET", "/v1/models/nope", { headers: { host, authorization: `Bearer ${key}`, connection: "close" } });
      const res = (await c.next(2000)) as RawResponse;
      // routed: this gateway has no provider, so the route answers 503 no_provider (an unrouted path is a 404 not_found)
      expect(res.status, `${host}: ${res.body}`).toBe(503);
      expect(JSON.parse(res.body).error.code, host).toBe("no_provider");
      c.destroy();
    }
  });

  test("whatever the Host header, a broken percent-encoding is never a 405 naming the very method it refuses", async () => {
    for (const host of ["x", "evil.example:80"]) {
      const c = new RawConnection(gw.port);
      await c.ready;
      c.write(`GET /v1/models/%E0%A4%A HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`);
      const res = (await c.next(2000)) as RawResponse;
      expect(res.status, `${host}: ${res.body}`).not.toBe(405);
      expect([400, 401]).toContain(res.status);
      expect(res.headers["x-request-id"]).toMatch(/^req_/);
    }
  });
});

describe("oversized bodies", () => {
  const head = (method: string, path: string, headers: Record<string, string>) =>
    `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1:${gw.port}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("")}\r\n`;
  const KiB64 = "a".repeat(0x10000);
  const chunk64 = `10000\r\n${KiB64}\r\n`;

  test("a declared 100 MiB body gets the 413 envelope at once, on any route, before it is sent", async () => {
    const length = { "content-length": String(100 * 1024 * 1024), "content-type": "application/json" };
    const routes = [
      ["POST", "/api/v1/ai/word-count", { ...length, "x-api-key": key }],
      ["POST", "/api/v1/ai/word-count", length],
      ["POST", "/nowhere", length],
      ["GET", "/health", length],
      ["POST", "/v1/chat/completions", { ...length, authorization: `Bearer ${key}` }],
    ] as const;
    // each on a connection of its own, at the same time: an answered connection lingers about a
    // second (http/linger.ts) before its answer ends, and those seconds overlap
    const exchanged = async ([method, path, headers]: (typeof routes)[number]) => {
      const { res, sent, c } = await exchange(head(method, path, headers), KiB64, 1600);
      if (path.startsWith("/v1/")) {
        expect(res?.status).toBe(413);
        expect(JSON.parse(res?.body ?? "{}").error.code).toBe("payload_too_large");
        expect(res?.headers["x-request-id"]).toMatch(/^req_/);
      } else expectEnvelope(res, 413, "payload_too_large");
      expect(res?.headers.connection).toBe("close");
      expect(await c.closed(3000)).toBe(true);
      // answered long before the 100 MiB were sent (the client stops at 1600 x 64 KiB)
      expect(sent).toBeLessThan(1600);
    };
    await Promise.all(routes.map(exchanged));
  });

  test("a chunked body is counted while it arrives: 413 at the limit, however long it would go on", async () => {
    const { res, sent, c } = await exchange(
      head("POST", "/api/v1/ai/word-count", {
        "transfer-encoding": "chunked",
        "content-type": "application/json",
        "x-api-key": key,
      }),
      chunk64,
      1600,
    );
    expectEnvelope(res, 413, "payload_too_large");
    expect(await c.closed(3000)).toBe(true);
    expect(sent).toBeLessThan(1600);
  });

  test("sign-in and sign-up forms stop reading at their 64 KiB, declared or chunked, without an account", async () => {
    const origin = `http://127.0.0.1:${gw.port}`;
    const form = { origin, "content-type": "application/x-www-form-urlencoded" };
    // the four exchanges on connections of their own, at the same time: each answer ends after its
    // connection's linger (about a second, http/linger.ts), and those seconds overlap
    const declaredTo = async (path: string) => {
      // declared above the form limit (and under the API's): refused before a byte of it is read
      const declared = await exchange(head("POST", path, { ...form, "content-length": String(900 * 1024) }), KiB64, 14);
      expect(declared.res?.status, path).toBe(413);
      expect(JSON.parse(declared.res?.body ?? "{}").error.code).toBe("payload_too_large");
      expect(await declared.c.closed(3000)).toBe(true);
      expect(declared.sent).toBeLessThan(14);
    };
    const chunkedTo = async (path: string) => {
      // chunked: counted while it arrives (the old code read 4 MiB before Bun refused it)
      const chunked = await exchange(head("POST", path, { ...form, "transfer-encoding": "chunked" }), chunk64, 64);
      expect(chunked.res?.status, path).toBe(413);
      expect(chunked.res?.headers["x-request-id"]).toMatch(/^req_/);
      expect(await chunked.c.closed(3000)).toBe(true);
      expect(chunked.sent).toBeLessThan(16);
    };
    await Promise.all(["/dashboard/login", "/dashboard/signup"].flatMap((path) => [declaredTo(path), chunkedTo(path)]));
  });

  test("a body sent to a route that reads none is not drained: the connection closes after the answer", async () => {
    const { res, sent, c } = await exchange(head("GET", "/health", { "transfer-encoding": "chunked" }), chunk64, 1600);
    expect(res?.status).toBe(200);
    expect(res?.headers.connection).toBe("close");
    expect(await c.closed(3000)).toBe(true);
    expect(sent).toBeLessThan(1600);
    // a keep-alive request without a body keeps its connection
    const plain = new RawConnection(gw.port);
    await plain.ready;
    plain.send("GET", "/health");
    expect((await plain.next())?.headers.connection).toBeUndefined();
    plain.send("GET", "/health");
    expect((await plain.next())?.status).toBe(200);
    plain.destroy();
  });
});
