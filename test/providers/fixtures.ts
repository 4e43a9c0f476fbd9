import { afterAll, beforeAll, beforeEach } from "bun:test";
import { Type as T } from "@sinclair/typebox";
import { type Config, type FileConfig, loadConfig } from "../../src/config";
import { type AnyFunctionDef, defineFunction } from "../../src/functions/define";
import { buildProviders } from "../../src/providers/index";
import { ProviderRouter, type RouteCall } from "../../src/providers/router";
import { startUpstream, type Upstream } from "../helpers/upstream";

/** A tiny function so these tests do not depend on the real catalog. */
export const TinyResult = T.Object(
  {
    label: T.Union([T.Literal("positive"), T.Literal("negative"), T.Literal("neutral")]),
    score: T.Number({ minimum: 0, maximum: 1 }),
    keywords: T.Array(T.String(), { maxItems: 5 }),
    note: T.Optional(T.String()),
  },
  { additionalProperties: false },
);

export const tiny = defineFunction({
  name: "tiny",
  path: "/api/v1/ai/tiny",
  summary: "test function",
  request: T.Object({ text: T.String() }),
  result: TinyResult,
  cost: 1,
  rateClass: "standard",
  promptVersion: 1,
  prompt: (req) => [
    { role: "system", content: "Classify the sentiment." },
    { role: "user", content: req.text },
  ],
  example: { request: { text: "good" }, result: { label: "positive", score: 0.9, keywords: [] } },
});

export const tinyImage = defineFunction({
  name: "tiny-image",
  path: "/api/v1/ai/tiny-image",
  summary: "test image function",
  kind: "image",
  request: T.Object({ prompt: T.String(), size: T.Optional(T.String()) }),
  result: T.Object({
    images: T.Array(T.Object({ b64_json: T.Optional(T.String()), url: T.Optional(T.String()), format: T.String() }), {
      minItems: 1,
    }),
  }),
  cost: 5,
  rateClass: "standard",
  promptVersion: 1,
  prompt: (req) => [{ role: "user", content: req.prompt }],
  postprocess: (_req, r) => ({
    images: (r as unknown as { images: { b64_json?: string; url?: string; format: string }[] }).images,
  }),
  example: { request: { prompt: "a cat" }, result: { images: [{ format: "png", b64_json: "x" }] } },
});

export function config(file: FileConfig): Config {
  return loadConfig({ TEXTAI_CONFIG: "test.json" }, JSON.stringify(file));
}

export function makeRouter(file: FileConfig, now?: () => number): ProviderRouter {
  const c = config(file);
  return new ProviderRouter(c, buildProviders(c), { now });
}

export function call(def: AnyFunctionDef, request: unknown, over: Partial<RouteCall> = {}): RouteCall {
  return { def, request, accountId: "acct_test", signal: new AbortController().signal, deadlineMs: Date.now() + 10_000, ...over };
}

/** Runs and returns the thrown error (fails the test when nothing is thrown). */
export async function rejection(p: Promise<unknown>): Promise<Error & { code?: string; status?: number; attempts?: unknown[] }> {
  try {
    const v = await p;
    throw new Error(`expected a rejection, got ${JSON.stringify(v)}`);
  } catch (e) {
    return e as Error & { code?: string; status?: number; attempts?: unknown[] };
  }
}

/** Starts `count` simulators for the test file, resets them before each test and closes them after. */
export function useUpstreams(count: number, bind: (sims: Upstream[]) => void): void {
  const sims: Upstream[] = [];
  beforeAll(async () => {
    for (let i = 0; i < count; i++) sims.push(await startUpstream());
    bind(sims);
  });
  afterAll(async () => {
    for (const s of sims) await s.close();
  });
  beforeEach(() => {
    for (const s of sims) s.reset();
  });
}
