/**
 * Calls refused before their route's pipeline, with a valid key in their headers, are in their
 * account's request log (docs/request-log.md): status and error code, never the body or the key.
 * A real server on a real port and SQLite file; every request over raw TCP (node:net), so the
 * oversized and chunked bodies are sent exactly as a client would. One row per refusal shape.
 *
 * 2026-12-06: a 3 MB body with a valid key, refused 413 by its Content-Length before the route's
 * edge read it, was in no log (the fix before this one covered only the bodies the edge reads), nor
 * were a 404 under /api or /v1, a 405, or a path that does not decode. An unknown key's refusals,
 * and a key sent only in a body that is not read, stay in none.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RequestLogEntry as Entry } from "../../src/requestlog/interface";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { RawConnection, type RawResponse } from "../helpers/raw-http";

const ADMIN = "admin-token-early-refusals-0123456789";
const MARKER = `BODYMARK-${crypto.randomUUID()}`;
/** the gateway's limit: the default 1 MiB, said here so the sizes below are over it */
const MAX = 1024 * 1024;
const BIG = 3 * 1024 * 1024;
/** a body timeout short enough for a row (the default is 30 s) */
const BODY_TIMEOUT_MS = 400;

let gw: TestGateway;
let port: number;
let caller: { key: string; id: string; accountId: string };

beforeAll(async () => {
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `[limits]\nmax_body_bytes = ${MAX}\nbody_timeout_ms = ${BODY_TIMEOUT_MS}\n`,
  });
  port = gw.port;
  caller = gw.newKey({ credits: 100, label: "early-refusals" });
});
afterAll(() => gw?.close());

/** The head of one HTTP/1.1 request, `headers` as given (no Content-Length added). */
const head = (method: string, path: string, headers: Record<string, string>) =>
  `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;

/** A JSON-ish body of exactly `n` bytes that carries the marker. */
const bodyOf = (n: number) => {
  const start = `{"text":"${MARKER} `;
  return `${start}${"x".repeat(n - start.length - 2)}"}`;
};

/** A chunk of a chunked body. */
const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;

type Auth = (key: string) => Record<string, string>;
const xApiKey: Auth = (key) => ({ "x-api-key": key });
const bearer: Auth = (key) => ({ authorization: `Bearer ${key}` });
const json = { "content-type": "application/json" };

interface Shape {
  name: string;
  /** what the client writes, given its credential's headers; the answer is awaited after the last piece */
  send: (auth: Record<string, string>) => string[];
  status: number;
  code: string;
  /** the request log's function: the route's usage name, null where no route matched */
  fn: string | null;
  path: string;
  method?: string;
  auth?: Auth;
}

const SA = "/api/v1/ai/sentiment-analysis";
const small = JSON.stringify({ text: MARKER });

/** Every early refusal with a valid key: the next one is one more row. */
const SHAPES: Shape[] = [
  {
    name: "413 by Content-Length, answered before any byte of the body",
    send: (a) => [head("POST", SA, { ...a, ...json, "content-length": String(BIG) })],
    status: 413,
    code: "payload_too_large",
    fn: "sentiment-analysis",
    path: SA,
  },
  {
    name: "413 by Content-Length, the whole 3 MB sent (Authorization: Bearer)",
    send: (a) => [head("POST", SA, { ...a, ...json, "content-length": String(BIG) }) + bodyOf(BIG)],
    status: 413,
    code: "payload_too_large",
    fn: "sentiment-analysis",
    path: SA,
    auth: bearer,
  },
  {
    name: "413 by Content-Length on /v1/chat/completions (OpenAI's shape)",
    send: (a) => [head("POST", "/v1/chat/completions", { ...a, ...json, "content-length": String(BIG) })],
    status: 413,
    code: "payload_too_large",
    fn: "chat-completions",
    path: "/v1/chat/completions",
    auth: bearer,
  },
  {
    name: "413 by Content-Length on a GET route (account)",
    send: (a) => [head("GET", "/api/v1/account/usage", { ...a, ...json, "content-length": String(BIG) })],
    status: 413,
    code: "payload_too_large",
    fn: "account",
    path: "/api/v1/account/usage",
    method: "GET",
  },
  {
    name: "413 while a chunked body streams past the limit",
    send: (a) => {
      const piece = bodyOf(64 * 1024);
      const pieces = [head("POST", SA, { ...a, ...json, "transfer-encoding": "chunked" })];
      for (let sent = 0; sent <= MAX; sent += piece.length) pieces.push(chunk(piece));
      return [pieces.join("")];
    },
    status: 413,
    code: "payload_too_large",
    fn: "sentiment-analysis",
    path: SA,
  },
  {
    name: "415 a body that is not JSON by its Content-Type",
    send: (a) => [head("POST", SA, { ...a, "content-type": "text/plain", "content-length": String(small.length) }) + small],
    status: 415,
    code: "unsupported_media_type",
    fn: "sentiment-analysis",
    path: SA,
  },
  {
    name: "400 a body that is not JSON",
    send: (a) => [head("POST", SA, { ...a, ...json, "content-length": String(MARKER.length) }) + MARKER],
    status: 400,
    code: "invalid_json",
    fn: "sentiment-analysis",
    path: SA,
  },
  {
    name: "400 a body that is not UTF-8",
    send: (a) => [`${head("POST", SA, { ...a, ...json, "content-length": String(small.length + 2) })}${small}\u00ff\u00fe`],
    status: 400,
    code: "invalid_json",
    fn: "sentiment-analysis",
    path: SA,
  },
  {
    name: "408 a body that does not all arrive in time",
    send: (a) => [head("POST", SA, { ...a, ...json, "content-length": "1000" }) + small],
    status: 408,
    code: "request_timeout",
    fn: "sentiment-analysis",
    path: SA,
  },
  {
    name: "404 an unknown function",
    send: (a) => [head("POST", "/api/v1/ai/no-such-function", { ...a, ...json, "content-length": String(small.length) }) + small],
    status: 404,
    code: "not_found",
    fn: null,
    path: "/api/v1/ai/no-such-function",
  },
  {
    name: "404 an unknown path under /v1 (OpenAI's shape)",
    send: (a) => [head("POST", "/v1/no-such-thing", { ...a, ...json, "content-length": String(small.length) }) + small],
    status: 404,
    code: "not_found",
    fn: null,
    path: "/v1/no-such-thing",
    auth: bearer,
  },
  {
    name: "405 a function's path with another method",
    send: (a) => [head("GET", SA, a)],
    status: 405,
    code: "method_not_allowed",
    fn: "sentiment-analysis",
    path: SA,
    method: "GET",
  },
  {
    name: "405 another method with a body nobody reads",
    send: (a) => [head("PUT", SA, { ...a, ...json, "content-length": String(small.length) }) + small],
    status: 405,
    code: "method_not_allowed",
    fn: "sentiment-analysis",
    path: SA,
    method: "PUT",
  },
  {
    name: "400 a path that is not valid percent-encoding",
    send: (a) => [head("POST", "/api/v1/ai/%zz", { ...a, ...json, "content-length": String(small.length) }) + small],
    status: 400,
    code: "invalid_request",
    fn: null,
    path: "/api/v1/ai/%zz",
  },
];

/** Sends a shape on a connection of its own; its answer and request id. */
async function sendShape(s: Shape, key: string): Promise<{ res: RawResponse; id: string }> {
  const conn = new RawConnection(port);
  await conn.ready;
  try {
    for (const piece of s.send((s.auth ?? xApiKey)(key))) conn.write(piece);
    const res = await conn.next(10_000);
    if (!res) throw new Error(`${s.name}: no answer (connection ${conn.state})`);
    return { res, id: res.headers["x-request-id"] as string };
  } finally {
    conn.destroy();
  }
}

/** The account's entries (through the API the docs describe) once `ids` are all there, at most 5 s. */
async function entriesOf(key: string, ids: string[]): Promise<Map<string, Entry>> {
  const until = Date.now() + 5000;
  for (;;) {
    const r = await gw.get("/api/v1/account/requests?limit=500", { "x-api-key": key });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const byId = new Map<string, Entry>((r.json.data.result.data as Entry[]).map((e) => [e.request_id, e]));
    if (ids.every((id) => byId.has(id)) || Date.now() > until) return byId;
    await Bun.sleep(100);
  }
}

test("every early refusal with a valid key is answered as before and is in its account's request log, without its body", async () => {
  const sent: { s: Shape; id: string; res: RawResponse }[] = [];
  for (const s of SHAPES) {
    const { res, id } = await sendShape(s, caller.key);
    expect([s.name, res.status], res.body).toEqual([s.name, s.status]);
    expect(id, s.name).toMatch(/^req_/);
    sent.push({ s, id, res });
  }
  const entries = await entriesOf(
    caller.key,
    sent.map((x) => x.id),
  );
  const got = sent.map(({ s, id }) => {
    const e = entries.get(id);
    return [s.name, e && [e.status, e.error_code, e.function, e.method, e.path, e.key_id, e.credits]];
  });
  expect(got).toEqual(sent.map(({ s }) => [s.name, [s.status, s.code, s.fn, s.method ?? "POST", s.path, caller.id, 0]]));
  // metadata only: nothing of any body, never the key
  const text = JSON.stringify([...entries.values()]);
  expect(text).not.toContain(MARKER);
  expect(text).not.toContain(caller.key);
  // and the server still answers, a normal call recorded as ever
  const okCall = await gw.post(SA, { text: "I love it" }, { "x-api-key": caller.key });
  expect(okCall.status).toBe(200);
  const after = await entriesOf(caller.key, [okCall.json.request_id]);
  expect(after.get(okCall.json.request_id)?.status).toBe(200);
}, 30_000);

test("an unknown key's early refusals are refused as before and are in no account's log", async () => {
  const wrong = `tai_live_${"Z".repeat(40)}`;
  const ids: string[] = [];
  for (const s of SHAPES) {
    const { res, id } = await sendShape(s, wrong);
    expect([s.name, res.status], res.body).toEqual([s.name, s.status]);
    ids.push(id);
  }
  // a valid key only in the body of one refused by its Content-Length: the body is not read for it
  const inBody = await sendShape(
    {
      ...(SHAPES[0] as Shape),
      send: () => [head("POST", SA, { ...json, "content-length": String(BIG) }) + `{"api_key":"${caller.key}",`],
    },
    caller.key,
  );
  expect(inBody.res.status).toBe(413);
  ids.push(inBody.id);
  // an entry of the same kind from a valid key after them: once it is readable, theirs would be too
  const { id: probe } = await sendShape(SHAPES[0] as Shape, caller.key);
  expect((await entriesOf(caller.key, [probe])).has(probe)).toBe(true);
  for (const id of ids) {
    const r = await gw.get(`/admin/v1/requests/${id}`, { authorization: `Bearer ${ADMIN}` });
    expect([id, r.status]).toEqual([id, 404]);
  }
}, 30_000);
