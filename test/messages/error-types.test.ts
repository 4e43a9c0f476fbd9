/**
 * Every refusal of `/v1/messages` and `/v1/messages/count_tokens` carries Anthropic's own error
 * type for its status (docs/messages.md#errors), so Anthropic's SDK raises its typed class with the
 * matching `error.type`: 402 billing_error, 413 request_too_large, 504 timeout_error, ... (before
 * 2026-12-06 a 402 was invalid_request_error, a 413 too, a 504 api_error). Driven by the official
 * SDK against a real gateway over the OpenAI-shaped simulator.
 */
import { describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { ERROR_STATUS, type ErrorCode } from "../../src/errors";
import { messagesErrorType, messagesErrorTypeOf } from "../../src/http/messages-errors";
import { simProvider } from "../helpers/upstream";
import { useGateway } from "../openai/setup";

const ADMIN_TOKEN = "messages-error-types-operator-token-0123456789";

const ctx = useGateway({
  configText: (url) => `
[limits]
request_timeout_ms = 1500

[pricing.models]
"model-a" = { input = 1000, output = 2000 }
${simProvider({ url, name: "sim", model: "model-a" })}

[plans.one.rate_limits]
messages = 1
`,
  env: { TEXTAI_ADMIN_TOKEN: ADMIN_TOKEN },
});

type ApiError = InstanceType<typeof Anthropic.APIError>;
type ErrorClass = abstract new (...args: never[]) => ApiError;

const client = (apiKey: string) => new Anthropic({ apiKey, baseURL: ctx.gw.url, maxRetries: 0 });
const ask = { model: "model-a", max_tokens: 10, messages: [{ role: "user" as const, content: "x" }] };
const fail = (p: Promise<unknown>) => p.then(() => null).catch((e: unknown) => e as ApiError);

/** The SDK raised `cls` for `status`, with `type` as the body's error.type and as its own `.type`. */
function expectTyped(err: ApiError | null, cls: ErrorClass, status: number, type: string) {
  expect(err).toBeInstanceOf(cls);
  expect(err?.status).toBe(status);
  // (the SDK's ErrorType has no request_too_large, which Anthropic's API reference gives 413)
  expect(err?.type as string | null | undefined).toBe(type);
  expect(err?.error).toMatchObject({ type: "error", error: { type } });
  expect(err?.headers?.get("request-id")).toStartWith("req_");
}

describe("/v1/messages refusals: Anthropic's type for each status, the SDK's class for it", () => {
  test("400 invalid_request_error, 401 authentication_error, 404 not_found_error", async () => {
    const { key } = ctx.gw.newKey({ credits: 1000 });
    const { max_tokens: _, ...noMax } = ask;
    expectTyped(await fail(client(key).messages.create(noMax as never)), Anthropic.BadRequestError, 400, "invalid_request_error");
    expectTyped(
      await fail(client("tai_live_not-a-key-at-all-0000000000000000000000").messages.create(ask)),
      Anthropic.AuthenticationError,
      401,
      "authentication_error",
    );
    expectTyped(
      await fail(client(key).messages.create({ ...ask, model: "no-such-model" })),
      Anthropic.NotFoundError,
      404,
      "not_found_error",
    );
    expectTyped(
      await fail(client(key).messages.countTokens({ model: "no-such-model", messages: ask.messages })),
      Anthropic.NotFoundError,
      404,
      "not_found_error",
    );
  });

  test("402 billing_error: credits spent, and a key's monthly budget spent", async () => {
    const { gw } = ctx;
    const broke = gw.newKey({ credits: 0 });
    expectTyped(await fail(client(broke.key).messages.create(ask)), Anthropic.PaymentRequiredError, 402, "billing_error");
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const acc = await gw.post("/admin/v1/accounts", { credits: 100_000 }, admin);
    const made = await gw.post(
      "/admin/v1/keys",
      { label: "budget", account_id: acc.json.data.result.id, policy: { monthly_credit_limit: 1 } },
      admin,
    );
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    const budget = made.json.data.result.key as string;
    // the call's hold is larger than the key's budget of 1 credit
    const refused = await fail(client(budget).messages.create(ask));
    expectTyped(refused, Anthropic.PaymentRequiredError, 402, "billing_error");
    expect(refused?.error).toMatchObject({ error: { message: expect.stringContaining("monthly credit limit") } });
  });

  test("403 permission_error for a key not allowed messages", async () => {
    const { gw } = ctx;
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const acc = await gw.post("/admin/v1/accounts", { credits: 100 }, admin);
    const made = await gw.post(
      "/admin/v1/keys",
      { label: "chat only", account_id: acc.json.data.result.id, policy: { allowed_functions: ["chat-completions"] } },
      admin,
    );
    expectTyped(
      await fail(client(made.json.data.result.key).messages.create(ask)),
      Anthropic.PermissionDeniedError,
      403,
      "permission_error",
    );
  });

  test("413 request_too_large, on a call and on count_tokens", async () => {
    const { key } = ctx.gw.newKey({ credits: 100_000 });
    const big = [{ role: "user" as const, content: "x".repeat(1_100_000) }];
    expectTyped(
      await fail(client(key).messages.create({ ...ask, messages: big })),
      Anthropic.ContentTooLargeError,
      413,
      "request_too_large",
    );
    expectTyped(
      await fail(client(key).messages.countTokens({ model: "model-a", messages: big })),
      Anthropic.ContentTooLargeError,
      413,
      "request_too_large",
    );
  });

  test("429 rate_limit_error", async () => {
    const { key } = ctx.gw.newKey({ credits: 100_000, plan: "one" });
    ctx.sim.reset();
    await client(key).messages.create(ask);
    expectTyped(await fail(client(key).messages.create(ask)), Anthropic.RateLimitError, 429, "rate_limit_error");
  });

  test("502 api_error when every provider failed; 504 timeout_error when none answered before the deadline", async () => {
    const { gw, sim } = ctx;
    const { key } = gw.newKey({ credits: 100_000 });
    sim.reset();
    sim.program([{ status: 500, times: 3 }]);
    expectTyped(await fail(client(key).messages.create(ask)), Anthropic.InternalServerError, 502, "api_error");
    sim.reset();
    sim.program([{ delayMs: 4000 }]);
    expectTyped(await fail(client(key).messages.create(ask)), Anthropic.GatewayTimeoutError, 504, "timeout_error");
  });

  test("one mapping: every gateway code's type is its status's, no_provider aside", () => {
    const byStatus: Record<number, string> = {
      400: "invalid_request_error",
      401: "authentication_error",
      402: "billing_error",
      403: "permission_error",
      404: "not_found_error",
      405: "invalid_request_error",
      408: "invalid_request_error",
      409: "conflict_error",
      413: "request_too_large",
      415: "invalid_request_error",
      422: "invalid_request_error",
      429: "rate_limit_error",
      499: "invalid_request_error",
      500: "api_error",
      502: "api_error",
      503: "overloaded_error",
      504: "timeout_error",
    };
    for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
      const want = code === "no_provider" ? "api_error" : byStatus[ERROR_STATUS[code]];
      expect(`${code} ${messagesErrorType(code)}`).toBe(`${code} ${want}`);
    }
    // a provider's own status passed on (529 is Anthropic's overload)
    expect(messagesErrorTypeOf(529)).toBe("overloaded_error");
    expect(messagesErrorTypeOf(418)).toBe("invalid_request_error");
    expect(messagesErrorTypeOf(507)).toBe("api_error");
  });
});
