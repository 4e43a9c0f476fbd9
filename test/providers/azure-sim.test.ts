/**
 * The Azure OpenAI simulator (test/helpers/azure-sim.ts) proven by the openai SDK's `AzureOpenAI`
 * client pointed at it: chat completions plain and streamed (deployment URLs, api-version), with
 * an api key and with an Entra token, embeddings, Azure's content filter error and its
 * finish_reason, a 429 with retry-after, and the v1 API through the plain `OpenAI` client.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI, { AzureOpenAI } from "openai";
import { type AzureSim, startAzure } from "../helpers/azure-sim";

let sim: AzureSim;
beforeAll(async () => {
  sim = await startAzure();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const azure = (o: { apiKey?: string; token?: string; apiVersion?: string } = {}) =>
  new AzureOpenAI({
    endpoint: sim.endpoint,
    apiVersion: o.apiVersion ?? "2024-10-21",
    maxRetries: 0,
    ...(o.token ? { azureADTokenProvider: async () => o.token as string } : { apiKey: o.apiKey ?? sim.apiKey }),
  });

describe("AzureOpenAI against the simulator", () => {
  test("chat completions: the deployment in the URL, api-version in the query, the key in api-key; content filter results", async () => {
    const res = await azure().chat.completions.create({ model: "prod-4o", messages: [{ role: "user", content: "hello azure" }] });
    expect(res.model).toBe("gpt-4o-2024-08-06");
    expect(res.choices[0]?.message.content).toBeString();
    expect((res as unknown as { prompt_filter_results: unknown[] }).prompt_filter_results).toHaveLength(1);
    const rec = sim.calls.requests[0];
    expect(rec?.path).toBe("/openai/deployments/prod-4o/chat/completions");
    expect(rec?.query).toBe("?api-version=2024-10-21");
    expect(rec?.headers["api-key"]).toBe(sim.apiKey);
  });

  test("streamed, with an Entra token as Authorization: Bearer", async () => {
    const stream = await azure({ token: sim.token }).chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "stream from azure" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number) });
    expect(sim.calls.requests[0]?.headers.authorization).toBe(`Bearer ${sim.token}`);
    expect(sim.calls.requests[0]?.headers["api-key"]).toBeUndefined();
  });

  test("embeddings through a deployment", async () => {
    const res = await azure().embeddings.create({ model: "embed-small", input: ["a", "b"], encoding_format: "float" });
    expect(res.data.map((d) => d.embedding.length)).toEqual([1536, 1536]);
    expect(sim.calls.requests[0]?.path).toBe("/openai/deployments/embed-small/embeddings");
  });

  test("the content filter: a prompt refused with 400 content_filter and its results; a completion cut with finish_reason content_filter", async () => {
    sim.program([{ contentFilter: "prompt" }, { contentFilter: "completion" }]);
    const err = await azure()
      .chat.completions.create({ model: "prod-4o", messages: [{ role: "user", content: "something flagged" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.code).toBe("content_filter");
    expect(
      (e.error as { innererror: { content_filter_result: { violence: { filtered: boolean } } } }).innererror.content_filter_result
        .violence.filtered,
    ).toBe(true);
    const cut = await azure().chat.completions.create({ model: "prod-4o", messages: [{ role: "user", content: "x" }] });
    expect(cut.choices[0]?.finish_reason).toBe("content_filter");
  });

  test("errors: a wrong key 401, an unknown deployment 404, an unknown api-version 404, a 429 with retry-after and retry-after-ms", async () => {
    const status = (p: Promise<unknown>) => p.then(() => 200).catch((e: { status?: number }) => e.status);
    const ask = (c: AzureOpenAI, model = "prod-4o") =>
      c.chat.completions.create({ model, messages: [{ role: "user", content: "x" }] });
    expect(await status(ask(azure({ apiKey: "wrong" })))).toBe(401);
    expect(await status(ask(azure(), "no-such-deployment"))).toBe(404);
    expect(await status(ask(azure({ apiVersion: "1999-01-01" })))).toBe(404);
    sim.program([{ status: 429, retryAfter: 1.5 }]);
    const limited = (await ask(azure()).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.headers?.get("retry-after-ms")).toBe("1500");
    expect(limited.headers?.get("retry-after")).toBe("2");
  });

  test("the v1 API: the plain OpenAI client at {endpoint}/openai/v1, the deployment as the model, no api-version", async () => {
    const v1 = new OpenAI({
      baseURL: `${sim.endpoint}/openai/v1`,
      apiKey: "unused",
      defaultHeaders: { "api-key": sim.apiKey },
      maxRetries: 0,
    });
    const res = await v1.chat.completions.create({ model: "prod-4o", messages: [{ role: "user", content: "v1 please" }] });
    expect(res.model).toBe("gpt-4o-2024-08-06");
    expect(sim.calls.requests[0]?.path).toBe("/openai/v1/chat/completions");
    expect(sim.calls.requests[0]?.query).toBe("");
  });
});
