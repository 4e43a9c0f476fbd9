/**
 * An Azure OpenAI simulator, written from Azure OpenAI's data-plane REST reference and the openai
 * SDK's `AzureOpenAI` client (not from the gateway's adapter); test/providers/azure-sim.test.ts
 * proves it with that client.
 *
 * What it holds a client to, as Azure does: a deployment's URL,
 * `POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...` (and
 * `/embeddings`), whose `api-version` is required (without one, or an unknown one: 404 Resource
 * not found) and whose deployment must exist (404 DeploymentNotFound); or the resource's v1 API,
 * `POST {endpoint}/openai/v1/chat/completions` with the deployment as the body's `model`, no
 * api-version; the key in `api-key`, or an Entra token as `Authorization: Bearer` (else 401).
 * Answers are OpenAI's with Azure's content filter results (`prompt_filter_results`, each choice's
 * `content_filter_results`), the model the deployment runs. On command (`program`), besides the
 * OpenAI simulator's faults (status, Retry-After, delay, drop, raw bytes, a stream cut), its
 * content filter: `contentFilter: "prompt"` (Azure's 400 `content_filter` with
 * `innererror.content_filter_result`) or `"completion"` (an answer cut with
 * `finish_reason: "content_filter"`); 429s carry `retry-after` and `retry-after-ms`.
 */
import { hashEmbedding } from "../../src/providers/embedding";
import { synthesize } from "../../src/providers/synthesize";
import type { JsonSchema } from "../../src/providers/types";
import { mockText } from "../../src/providers/vendors/mock/provider";
import type { Fault, RecordedCall } from "./upstream";

export interface AzureFault extends Fault {
  /** Azure's content filter: on the prompt (a 400) or on the completion (an answer cut short) */
  contentFilter?: "prompt" | "completion";
}

export interface AzureSim {
  /** the resource's endpoint (what `endpoint` and AzureOpenAI's `endpoint` take) */
  endpoint: string;
  apiKey: string;
  /** an Entra token it accepts as Authorization: Bearer */
  token: string;
  calls: { count: number; requests: (RecordedCall & { query: string })[] };
  program(faults: AzureFault[]): void;
  reset(): void;
  close(): Promise<void>;
}

/** api-versions it serves (GA and preview dates Azure has published) */
const API_VERSIONS = new Set(["2024-06-01", "2024-10-21", "2025-04-01-preview", "2024-12-01-preview"]);

const json = (data: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(data), { status, headers: { "content-type": "application/json", ...headers } });
const azureError = (status: number, code: string, message: string, extra: Record<string, unknown> = {}, headers = {}) =>
  json({ error: { code, message, ...extra } }, status, headers);

const SAFE = {
  hate: { filtered: false, severity: "safe" },
  self_harm: { filtered: false, severity: "safe" },
  sexual: { filtered: false, severity: "safe" },
  violence: { filtered: false, severity: "safe" },
};
const FLAGGED = { ...SAFE, violence: { filtered: true, severity: "high" } };

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const t = setTimeout(() => resolve(true), ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve(false);
      },
      { once: true },
    );
  });
}

function faultAnswer(f: AzureFault): Response | undefined {
  if (f.drop)
    return new Response(
      new ReadableStream({
        start(c) {
          c.error(undefined);
        },
      }),
    );
  if (f.raw)
    return new Response(f.raw.body, {
      status: f.raw.status ?? 200,
      headers: { "content-type": f.raw.contentType ?? "application/json" },
    });
  if (f.contentFilter === "prompt")
    return azureError(
      400,
      "content_filter",
      "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
      {
        param: "prompt",
        status: 400,
        innererror: { code: "ResponsibleAIPolicyViolation", content_filter_result: FLAGGED },
      },
    );
  if (!f.status) return undefined;
  const headers: Record<string, string> = {};
  if (f.retryAfter !== undefined) {
    // whole seconds in retry-after, the exact wait in retry-after-ms
    headers["retry-after"] = String(Math.ceil(f.retryAfter));
    headers["retry-after-ms"] = String(Math.round(f.retryAfter * 1000));
  }
  if (f.contextLength)
    return azureError(
      400,
      "context_length_exceeded",
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
      { param: "messages", type: "invalid_request_error" },
      headers,
    );
  if (f.status === 429)
    return azureError(
      429,
      "429",
      `Requests to the ChatCompletions_Create Operation have exceeded the token rate limit of your current pricing tier. Please retry after ${f.retryAfter ?? 1} seconds.`,
      {},
      headers,
    );
  return azureError(
    f.status,
    f.errorCode ?? String(f.status),
    f.message ?? `simulated Azure OpenAI error ${f.status}`,
    {},
    headers,
  );
}

type Msg = Record<string, unknown>;
const textOf = (c: unknown): string =>
  typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => (typeof p?.text === "string" ? p.text : "")).join("") : "";
const tokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));

interface Answer {
  content: string | null;
  toolCalls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  finish: "stop" | "tool_calls" | "content_filter";
}

function answerOf(body: Record<string, unknown>, fault: AzureFault | undefined): Answer {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Msg[];
  const last = messages.at(-1);
  const seed = JSON.stringify(messages);
  const tools = (Array.isArray(body.tools) ? (body.tools as Msg[]) : []).map(
    (t) => t.function as { name: string; parameters?: JsonSchema },
  );
  const choice = body.tool_choice;
  if (fault?.contentFilter === "completion") return { content: mockText("filtered").slice(0, 12), finish: "content_filter" };
  if (tools.length > 0 && choice !== "none" && (choice === "required" || typeof choice === "object" || last?.role !== "tool")) {
    const named = typeof choice === "object" && choice ? (choice as { function?: { name?: string } }).function?.name : undefined;
    const tool = tools.find((t) => t.name === named) ?? (tools[0] as { name: string; parameters?: JsonSchema });
    const args = JSON.stringify(synthesize(tool.parameters ?? { type: "object", properties: {} }, `${seed}${tool.name}`));
    const id = `call_${Math.random().toString(36).slice(2, 14)}`;
    return {
      content: null,
      finish: "tool_calls",
      toolCalls: [{ id, type: "function", function: { name: tool.name, arguments: args } }],
    };
  }
  if (fault?.content !== undefined) return { content: fault.content, finish: "stop" };
  const rf = body.response_format as { type?: string; json_schema?: { schema?: JsonSchema } } | undefined;
  if (rf?.type === "json_schema" && rf.json_schema?.schema) {
    const value = synthesize(rf.json_schema.schema, seed);
    return {
      content: fault?.schemaInvalid ? JSON.stringify({ unexpected: 12345 }) : JSON.stringify(value),
      finish: "stop",
    };
  }
  if (last?.role === "tool") return { content: `Tool said: ${textOf(last.content)}`, finish: "stop" };
  const user = [...messages].reverse().find((m) => m.role === "user");
  return { content: mockText(textOf(user?.content)), finish: "stop" };
}

export async function startAzure(
  opts: { apiKey?: string; token?: string; deployments?: Record<string, string> } = {},
): Promise<AzureSim> {
  const apiKey = opts.apiKey ?? "azure-sim-key";
  const token = opts.token ?? "entra-sim-token";
  const deployments = opts.deployments ?? {
    "gpt-4o-mini": "gpt-4o-mini-2024-07-18",
    "prod-4o": "gpt-4o-2024-08-06",
    "embed-small": "text-embedding-3-small",
  };
  const calls = { count: 0, requests: [] as (RecordedCall & { query: string })[] };
  const queue: AzureFault[] = [];
  const next = () => {
    const head = queue[0];
    if (head && (head.times ?? 1) <= 1) queue.shift();
    else if (head) queue[0] = { ...head, times: (head.times ?? 1) - 1 };
    return head;
  };

  function chat(
    model: string,
    body: Record<string, unknown>,
    rec: RecordedCall,
    fault: AzureFault | undefined,
    signal: AbortSignal,
  ) {
    const a = answerOf(body, fault);
    const id = `chatcmpl-az${Math.random().toString(36).slice(2, 12)}`;
    const created = Math.floor(Date.now() / 1000);
    const prompt = tokens(JSON.stringify(body.messages ?? ""));
    const completion = tokens(a.content ?? JSON.stringify(a.toolCalls));
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    const choiceFilter = a.finish === "content_filter" ? FLAGGED : SAFE;
    if (!rec.stream)
      return json({
        id,
        object: "chat.completion",
        created,
        model,
        system_fingerprint: "fp_az",
        prompt_filter_results: [{ prompt_index: 0, content_filter_results: SAFE }],
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: a.content,
              refusal: null,
              ...(a.toolCalls ? { tool_calls: a.toolCalls } : {}),
            },
            finish_reason: a.finish,
            logprobs: null,
            content_filter_results: choiceFilter,
          },
        ],
        usage,
      });
    const withUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_az", choices, ...extra })}\n\n`;
    const delta = (d: Record<string, unknown>, finish: string | null = null, filter: unknown = SAFE) =>
      frame([{ index: 0, delta: d, finish_reason: finish, logprobs: null, content_filter_results: filter }]);
    // Azure's first chunk: no choices, the prompt's filter results
    const frames = [frame([], { model: "", prompt_filter_results: [{ prompt_index: 0, content_filter_results: SAFE }] })];
    frames.push(delta({ role: "assistant", content: "" }, null, {}));
    if (a.toolCalls) for (const [i, c] of a.toolCalls.entries()) frames.push(delta({ tool_calls: [{ index: i, ...c }] }));
    else for (const piece of (a.content ?? "").split(/(?<=\s)/)) if (piece) frames.push(delta({ content: piece }));
    frames.push(delta({}, a.finish, choiceFilter));
    if (withUsage) frames.push(frame([], { usage }));
    frames.push("data: [DONE]\n\n");
    const enc = new TextEncoder();
    let i = 0;
    return new Response(
      new ReadableStream({
        async pull(c) {
          if (signal.aborted) {
            rec.aborted = true;
            return c.close();
          }
          if (fault?.streamCut && i >= 3) return c.error(undefined);
          const f = frames[i++];
          if (f === undefined) return c.close();
          c.enqueue(enc.encode(f));
          if (i === frames.length) return c.close();
          await Bun.sleep(2);
        },
        cancel: () => {
          rec.aborted = true;
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  }

  function embeddings(model: string, body: Record<string, unknown>) {
    const input = typeof body.input === "string" ? [body.input] : Array.isArray(body.input) ? body.input.map(String) : [];
    const dims = typeof body.dimensions === "number" ? body.dimensions : 1536;
    const base64 = body.encoding_format === "base64";
    const data = input.map((text, index) => {
      const v = hashEmbedding(text, dims);
      return { object: "embedding", index, embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v };
    });
    const prompt = input.reduce((n, t) => n + tokens(t), 0);
    return json({ object: "list", data, model, usage: { prompt_tokens: prompt, total_tokens: prompt } });
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const key = req.headers.get("api-key");
      const bearer = req.headers.get("authorization");
      if (key !== apiKey && bearer !== `Bearer ${token}`)
        return azureError(
          401,
          "401",
          "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.",
        );
      const dep = url.pathname.match(/^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/);
      const v1 = url.pathname.match(/^\/openai\/v1\/(chat\/completions|embeddings)$/);
      if (req.method !== "POST" || (!dep && !v1)) return azureError(404, "404", "Resource not found");
      if (dep && !API_VERSIONS.has(url.searchParams.get("api-version") ?? ""))
        return azureError(404, "404", "Resource not found");
      const raw = await req.text();
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw);
      } catch {
        return azureError(400, "BadRequest", "The request body is not valid JSON.");
      }
      const deployment = dep ? decodeURIComponent(dep[1] as string) : String(body.model ?? "");
      const api = (dep?.[2] ?? v1?.[1]) as string;
      calls.count++;
      const rec = {
        path: url.pathname,
        query: url.search,
        model: deployment,
        stream: body.stream === true,
        body,
        raw,
        headers: Object.fromEntries(req.headers),
        aborted: false,
        status: 200,
        at: Date.now(),
      } as RecordedCall & { query: string };
      calls.requests.push(rec);
      req.signal.addEventListener("abort", () => (rec.aborted = true), { once: true });
      const model = deployments[deployment];
      if (!model)
        return azureError(
          404,
          "DeploymentNotFound",
          "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.",
        );
      const fault = next();
      rec.fault = fault;
      if (fault?.delayMs && !(await sleep(fault.delayMs, req.signal))) return new Response(null, { status: 499 });
      const res =
        (fault && fault.contentFilter !== "completion" && faultAnswer(fault)) ||
        (api === "embeddings" ? embeddings(model, body) : chat(model, body, rec, fault, req.signal));
      rec.status = res.status;
      return res;
    },
  });
  return {
    endpoint: `http://127.0.0.1:${server.port}`,
    apiKey,
    token,
    calls,
    program: (faults) => queue.push(...faults.map((f) => ({ ...f }))),
    reset() {
      queue.length = 0;
      calls.count = 0;
      calls.requests.length = 0;
    },
    close: () => server.stop(true),
  };
}
