import { Elysia } from "elysia";
import { ERROR_STATUS } from "../../errors";
import type { AnyFunctionDef } from "../../functions/define";
import type { AppDeps } from "../deps";
import { edgePlugin, functionEdge } from "../edge-plugin";
import type { FunctionPipeline } from "../pipeline";
import { envelopeSchema, errorEnvelopeSchema } from "../schemas";

const FUNCTION_ERRORS = [400, 401, 402, 413, 415, 422, 429, 502, 503, 504];

export function functionDoc(def: AnyFunctionDef, cost: number) {
  const responses: Record<string, unknown> = {
    200: {
      description: `${def.summary} (${cost} credit${cost === 1 ? "" : "s"})`,
      content: {
        "application/json": {
          schema: envelopeSchema(def.result),
          example: {
            success: true,
            status: "success",
            code: 200,
            message: `${def.name} completed`,
            request_id: "req_3f0c6a0e-5b7e-4a53-9a49-3a4c8f2f7d11",
            data: { result: def.example.result },
            meta: {
              version: "v1",
              timestamp: "2026-11-21T10:00:00.000Z",
              credits_deducted: cost,
              credits_remaining: 99,
              execution_time_ms: 12,
              cached: false,
              provider: "local",
              model: "local",
            },
          },
        },
      },
    },
  };
  for (const status of FUNCTION_ERRORS) {
    const codes = Object.entries(ERROR_STATUS)
      .filter(([, s]) => s === status)
      .map(([c]) => c);
    responses[status] = {
      description: `error: ${codes.join(", ")}`,
      content: { "application/json": { schema: errorEnvelopeSchema } },
    };
  }
  return {
    // function files tag in lower case ("text"); the document declares "Text" (src/http/openapi.ts)
    tags: (def.tags ?? ["text"]).map((t) => t.charAt(0).toUpperCase() + t.slice(1)),
    summary: def.summary,
    description: `${def.description ?? def.summary}\n\nCost: ${cost} ${cost === 1 ? "credit" : "credits"} per successful call. Rate-limit class: ${def.rateClass}.${
      def.aliases?.length
        ? `\n\nAlso served at ${def.aliases.map((a) => `POST ${a}`).join(", ")} (the same function, listed as its own operation).`
        : ""
    }`,
    operationId: def.name,
    requestBody: { required: true, content: { "application/json": { schema: def.request, example: def.example.request } } },
    parameters: [
      {
        name: "Idempotency-Key",
        in: "header",
        required: false,
        schema: { type: "string" },
        description:
          "replays the stored answer for 24h without charging again (header Idempotent-Replayed); a retry after a crash that charged the first call before its answer was kept runs uncharged (header Idempotent-Recovered: the charged request's id); a call that outlived its lease while a retry took its key over answers uncharged (header Idempotent-Superseded), the retry being charged",
      },
      {
        name: "Cache-Control",
        in: "header",
        required: false,
        schema: { type: "string" },
        description: "no-cache or no-store bypasses the answer cache",
      },
    ],
    responses,
  };
}

/**
 * An alias's own operation (client generators read operations, not descriptions): the function's
 * schemas and answers, its own `operationId` (the alias's last path segment, e.g. `intent`) and summary.
 */
export function aliasDoc(def: AnyFunctionDef, detail: ReturnType<typeof functionDoc>, path: string) {
  const name = path.slice(path.lastIndexOf("/") + 1);
  return {
    ...detail,
    operationId: name,
    summary: `${name}: ${def.name} at ${path}`,
    description: `The ${def.name} function (POST ${def.path}) at its short path: the same request, answer, cost and limits.\n\n${detail.description}`,
  };
}

/** One POST route per function definition (and its aliases), all through the one pipeline. */
export function functionRoutes(deps: AppDeps, pipeline: FunctionPipeline) {
  const app = new Elysia({ name: "functions" }).use(edgePlugin(deps));
  for (const def of deps.functions) {
    const detail = functionDoc(def, pipeline.costOf(def));
    for (const path of [def.path, ...(def.aliases ?? [])]) {
      app.post(
        path,
        ({ request, params, state, auth, payload }) =>
          pipeline.handle(def, request, state, { auth, body: payload }, params as Record<string, string>),
        {
          key: functionEdge(def),
          parse: "none",
          // an alias is its own operation, with the function's schemas
          // biome-ignore lint/suspicious/noExplicitAny: OpenAPI operation object, passed through to the document
          detail: (path === def.path ? detail : aliasDoc(def, detail, path)) as any,
        },
      );
    }
  }
  return app;
}
