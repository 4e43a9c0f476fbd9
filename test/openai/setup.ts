import { afterAll, beforeAll } from "bun:test";
import OpenAI from "openai";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { nodesRedis, ON_REDIS_CLUSTER, type TestRedis } from "../helpers/shared-servers";
import { type SimOptions, simProvider, startUpstream, type Upstream } from "../helpers/upstream";

export const ALL_FEATURES = `["tools", "images", "audio", "files", "structured_output", "responses", "embeddings"]`;

/** A simulator-backed provider with every feature. */
export const providerToml = (name: string, url: string, model: string, extra = "") =>
  `\n${simProvider({ url, name, model, extra: `features = ${ALL_FEATURES}\n${extra}` })}`;

/**
 * Two providers on one simulator (primary: model-a; backup: model-b and model-a) with every feature, unless `configText` says otherwise.
 * With TEXTAI_TEST_ON_REDIS_CLUSTER=1 (CI's second pass) the gateway keeps its rate limits, answer
 * cache and Idempotency-Key records on the Redis Cluster (its keys and credits stay in SQLite).
 */
export function useGateway(
  opts: { configText?: (simUrl: string) => string; env?: Record<string, string>; sim?: SimOptions } = {},
) {
  const ctx = {} as { sim: Upstream; gw: TestGateway; redis: TestRedis | null };
  beforeAll(async () => {
    ctx.sim = await startUpstream(opts.sim);
    const url = `${ctx.sim.url}/v1`;
    const redis = ON_REDIS_CLUSTER ? await nodesRedis("the OpenAI-client tests on a Redis Cluster") : null;
    ctx.redis = redis;
    ctx.gw = await startGateway({
      functions: [],
      env: { ...redis?.env, ...opts.env },
      configText:
        opts.configText?.(url) ??
        `

${providerToml("primary", url, "model-a", 'embedding_model = "embed-a"')}
${providerToml("backup", url, "model-b", 'embedding_model = "embed-b"\n# lists model-a too, so a client error of primary for model-a may be retried here\nmodels = { "shared" = "model-a" }')}
`,
    });
  });
  afterAll(async () => {
    await ctx.gw.close();
    await ctx.sim.close();
    await ctx.redis?.flush();
  });
  return ctx;
}

export const openaiClient = (gw: TestGateway, apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });

/** A raw POST with a key, for what SDKs hide (status, headers, SSE text). */
export async function rawPost(gw: TestGateway, path: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
  });
}

/** The data events of an SSE body (without [DONE]). */
export function sseData(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("data: ") && l !== "data: [DONE]")
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

/** The body the simulator received in call `i` (negative: from the end). */
export const sentBody = (sim: Upstream, i: number): Record<string, unknown> => sim.calls.requests.at(i)?.body ?? {};
