import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openaiClient, providerToml, rawPost, useGateway } from "./setup";

const ctx = useGateway({
  env: { TEXTAI_ADMIN_TOKEN: "openai-errors-admin-0123456789abcdef0123456789" },
  configText: (url) => `
[limits]
request_timeout_ms = 1500

${providerToml("primary", url, "model-a", '# an open catalog: any model is forwarded, and the upstream judges it\nmodel_patterns = ["*"]\n# its messages are written for clients, as OpenAI messages are\npass_upstream_messages = true')}
${providerToml("backup", url, "model-b", 'models = { "shared" = "model-shared" }')}
${providerToml("third", url, "model-shared")}
`,
});

const ask = (content: string) => [{ role: "user" as const, content }];

// first in the file: with the later 5xx test, its failed attempts stay below a breaker's threshold (5)
describe("an upstream 200 that is no answer", () => {
  test("a 200 that is not a JSON object (a proxy's HTML page, an empty body) is a failed attempt: fallback, or 502 uncharged", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    const page = { raw: { contentType: "text/html", body: "<html>nginx error /srv/app</html>" } };
    for (const fault of [page, { raw: { body: "" } }]) {
      sim.reset();
      sim.program([{ ...fault, times: 3 }]);
      const res = await rawPost(gw, "/v1/chat/completions", key, { messages: ask(`broken ${sim.calls.count}`) });
      const text = await res.text();
      expect(res.status).toBe(502);
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
      expect((JSON.parse(text) as { error: { code: string } }).error.code).toBe("provider_error");
      expect(text).not.toContain("/srv");
      expect(sim.calls.count).toBe(3);
    }
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
    // the next provider answers when the first one sent a page (no model named: each provider's own;
    // a named model falls back only to providers of that model, test/providers/named-model.test.ts)
    sim.reset();
    sim.program([page]);
    const { data, response } = await openaiClient(gw, key)
      .chat.completions.create({ model: "", messages: ask("page then answer") })
      .withResponse();
    expect(typeof data).toBe("object");
    expect(data.choices[0]?.message.content).toBeString();
    expect(response.headers.get("x-textai-provider")).toBe("backup");
  });
});

describe("a provider's client error comes back as it was, without fallback or cool-down", () => {
  test("400 with type, code and param: BadRequestError; the next provider is not tried", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 400, errorCode: "invalid_value", param: "tools[0].function.name", message: "bad tool name" }]);
    const err = await openaiClient(gw, key)
      .chat.completions.create({ model: "model-a", messages: ask("hi"), tools: [] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.error).toEqual({
      message: "bad tool name",
      type: "invalid_request_error",
      code: "invalid_value",
      param: "tools[0].function.name",
    });
    expect(sim.calls.count).toBe(1);
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
  });

  test("404 model not found: NotFoundError, and any number of them leave the provider's circuit closed", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    sim.program([
      { status: 404, errorCode: "model_not_found", param: "model", message: "The model `nope` does not exist", times: 8 },
    ]);
    for (let i = 0; i < 8; i++) {
      const err = await openaiClient(gw, key)
        .chat.completions.create({ model: "primary/nope", messages: ask(`try ${i}`) })
        .catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect(err.code).toBe("model_not_found");
    }
    expect(sim.calls.count).toBe(8);
    expect(gw.deps.router.status().primary?.state).toBe("closed");
    const ok = await openaiClient(gw, key)
      .chat.completions.create({ model: "model-a", messages: ask("still open?") })
      .withResponse();
    expect(ok.response.headers.get("x-textai-provider")).toBe("primary");
  });

  test("413 and 422 keep their status", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 413 }, { status: 422, errorCode: "unprocessable" }]);
    const a = await rawPost(gw, "/v1/chat/completions", key, { model: "model-a", messages: ask("a") });
    const b = await rawPost(gw, "/v1/chat/completions", key, { model: "model-a", messages: ask("b") });
    expect([a.status, b.status]).toEqual([413, 422]);
    expect(((await b.json()) as { error: { code: string } }).error.code).toBe("unprocessable");
    expect(sim.calls.count).toBe(2);
  });

  test("a client error is retried on another provider that serves the same model", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 400, message: "this server rejects that" }]);
    const { response } = await openaiClient(gw, key)
      .chat.completions.create({ model: "backup/model-shared", messages: ask("shared") })
      .withResponse();
    expect(response.headers.get("x-textai-provider")).toBe("third");
    expect(sim.calls.requests.map((r) => [r.model, r.status])).toEqual([
      ["model-shared", 400],
      ["model-shared", 200],
    ]);
  });
});

describe("when every provider failed, the status says why", () => {
  test("5xx everywhere: 502 with the attempts named", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 500, times: 3 }]);
    const res = await rawPost(gw, "/v1/chat/completions", key, { messages: ask("x") });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string; type: string } };
    expect(body.error.code).toBe("provider_error");
    expect(body.error.message).toContain("primary: http_500");
    expect(sim.calls.count).toBe(3);
  });

  test("the deadline passed: 504", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ delayMs: 4000 }]);
    const err = await openaiClient(gw, key)
      .chat.completions.create({ model: "model-a", messages: ask("slow") })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(504);
    expect(err.code).toBe("provider_timeout");
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
  });

  test("a client that goes away is logged and counted as 499, not 502", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ delayMs: 3000 }]);
    const from = gw.logs.length;
    const ac = new AbortController();
    const pending = fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      signal: ac.signal,
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: "model-a", messages: ask("leaving") }),
    }).catch(() => null);
    await Bun.sleep(200);
    ac.abort();
    await pending;
    const fresh = () => gw.logs.slice(from).filter((l) => l.includes('"msg":"request"') || l.includes('"status"'));
    for (let i = 0; i < 40 && !fresh().some((l) => l.includes('"status":499')); i++) await Bun.sleep(50);
    const line = fresh().find((l) => l.includes('"status":499'));
    expect(line).toContain('"fn":"chat-completions"');
    expect(fresh().some((l) => l.includes('"status":502'))).toBe(false);
    const metrics = await (
      await fetch(`${gw.url}/metrics`, { headers: { authorization: "Bearer openai-errors-admin-0123456789abcdef0123456789" } })
    ).text();
    expect(metrics).toMatch(/textai_requests_total\{[^}]*function="chat-completions"[^}]*status="499"/);
    expect(sim.calls.requests[0]?.aborted).toBe(true);
  });

  test("all rate-limited: 429 with the upstream's Retry-After (RateLimitError)", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    sim.program([{ status: 429, retryAfter: 7, times: 3 }]);
    const err = await openaiClient(gw, key)
      .chat.completions.create({ model: "", messages: ask("busy") })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.headers.get("retry-after")).toBe("7");
    expect(sim.calls.count).toBe(3);
    expect(gw.deps.ledger.balance(accountId)).toBe(10);
  });
});
