/**
 * A client pointed at the wrong base URL is told which route it meant: Anthropic's SDK with a
 * baseURL ending in /v1 calls /v1/v1/messages (the SDK adds /v1 itself), an OpenAI SDK without /v1
 * calls /chat/completions. The 404 names the route a doubled /v1 removed or /v1 added reaches, in
 * the shape of the API that route speaks (Anthropic's for /v1/messages). Before 2026-12-06 both
 * were a bare `404 "no such route"`, in OpenAI's shape or the envelope.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../helpers/gateway";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

const ask = { model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user" as const, content: "Hi" }] };
const fail = (p: Promise<unknown>) => p.then(() => null).catch((e: unknown) => e as Error);

describe("a path no route has, but one a doubled /v1 removed or /v1 added does", () => {
  test("Anthropic's SDK with a baseURL ending in /v1: 404 not_found_error in Anthropic's shape, naming /v1/messages and the baseURL to use", async () => {
    const { key } = gw.newKey({ credits: 5 });
    const anthropic = new Anthropic({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = (await fail(anthropic.messages.create(ask))) as InstanceType<typeof Anthropic.APIError>;
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect(err.error).toEqual({
      type: "error",
      error: {
        type: "not_found_error",
        message:
          "no such route: /v1/v1/messages; did you mean /v1/messages? the SDK's baseURL should be the gateway's root, without /v1 (Anthropic's SDKs add /v1 themselves)",
      },
    });
    expect(err.headers?.get("request-id")).toStartWith("req_");
    const count = (await fail(anthropic.messages.countTokens({ model: ask.model, messages: ask.messages }))) as InstanceType<
      typeof Anthropic.APIError
    >;
    expect(count).toBeInstanceOf(Anthropic.NotFoundError);
    expect((count.error as { error: { message: string } }).error.message).toContain("did you mean /v1/messages/count_tokens?");
  });

  test("an OpenAI SDK without /v1: 404 in OpenAI's shape naming /v1/chat/completions; with /v1 twice, the same", async () => {
    const { key } = gw.newKey({ credits: 5 });
    const body = { model: "m", messages: [{ role: "user" as const, content: "Hi" }] };
    const bare = new OpenAI({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
    const err = (await fail(bare.chat.completions.create(body))) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.error).toEqual({
      message:
        "no such route: /chat/completions; did you mean /v1/chat/completions? an OpenAI SDK's base URL is the gateway's root with /v1",
      type: "not_found_error",
      param: null,
      code: "not_found",
    });
    const twice = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1/v1`, maxRetries: 0 });
    const doubled = (await fail(twice.embeddings.create({ model: "m", input: "x" }))) as InstanceType<typeof OpenAI.APIError>;
    expect(doubled).toBeInstanceOf(OpenAI.NotFoundError);
    expect(doubled.message).toContain(
      "no such route: /v1/v1/embeddings; did you mean /v1/embeddings? the base URL has /v1 twice (an OpenAI SDK's base URL is the gateway's root with one /v1)",
    );
  });

  test("POST /messages names /v1/messages, in Anthropic's shape; a path neither reaches stays a plain 404", async () => {
    const res = await fetch(`${gw.url}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("not_found_error");
    expect(body.error.message).toStartWith("no such route: /messages; did you mean /v1/messages?");
    const none = await fetch(`${gw.url}/v1/v1/nothing-here`, { method: "POST", body: "{}" });
    expect(none.status).toBe(404);
    expect(((await none.json()) as { error: { message: string } }).error.message).toBe("no such route");
  });
});
