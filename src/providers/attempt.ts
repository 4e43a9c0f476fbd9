import { GatewayError } from "../errors";
import { CpuBudgetExceeded, checkCpuBudget, withCpuBudget } from "../local/budget";
import { judge, judgeText, resultSchema, type Verdict } from "./answer";
import { type ChatMessage, type Provider, ProviderError, type RoutedFunction } from "./types";

export interface AttemptInput {
  def: RoutedFunction;
  request: unknown;
  accountId: string;
  provider: Provider;
  /** explicit model for this provider (from the request), else the provider's model for the function */
  model?: string;
  signal: AbortSignal;
  /** CPU milliseconds the local engine may spend on this call (config limits.offline_cpu_ms) */
  cpuBudgetMs?: number;
}

export interface AttemptResult {
  result: unknown;
  model: string;
}

export const LOCAL_MODEL = "local";

/** The offline engine ran out of its CPU budget: 413 for the client, unless a provider further along the route answers. */
export class OfflineBudgetExceeded extends GatewayError {
  constructor(message: string) {
    super("payload_too_large", message);
  }
}

/**
 * One provider's try at a function call, including the single repair round-trip for invalid
 * output. Resolves null when the provider cannot serve this particular request (the local engine
 * said null); throws ProviderError on failure. A GatewayError thrown by a local implementation
 * (not_found for another account's FAQ collection, ...) is the client's answer and passes through.
 */
export async function attemptFunction(input: AttemptInput): Promise<AttemptResult | null> {
  if (input.provider.type === "local") return attemptLocal(input);
  if (input.def.kind === "image") return attemptImage(input);
  return attemptText(input);
}

async function attemptLocal({ def, request, accountId, signal, cpuBudgetMs }: AttemptInput): Promise<AttemptResult | null> {
  const local = def.local;
  if (!local) return null;
  // Judging a synchronous answer is part of the same stretch of offline work, so it runs under the
  // same budget: the schema and semantic checks of an answer with 25,000 entities cost as much as
  // finding them. An asynchronous engine (the grammar worker, knowledge bases) has awaited, and
  // this thread's CPU time since then is other requests' too: its answer is judged after.
  let out: unknown = null;
  let verdict: Verdict | null = null;
  const answer = (): undefined | Promise<void> => {
    const o = local(request, { accountId, signal });
    if (o instanceof Promise)
      return o.then((v) => {
        out = v;
      });
    out = o;
    if (o === null) return;
    checkCpuBudget();
    verdict = judge(def, request, resultSchema(def, request), o, { ownAnswer: true });
  };
  try {
    await (cpuBudgetMs === undefined ? answer() : withCpuBudget(cpuBudgetMs, answer));
  } catch (err) {
    if (!(err instanceof CpuBudgetExceeded)) throw err;
    throw new OfflineBudgetExceeded(
      `${def.name}: this request needs more than the offline engine's CPU budget of ${err.budgetMs} ms per call; send a shorter text, or configure an AI provider for ${def.name}`,
    );
  }
  if (out === null) return null;
  verdict ??= judge(def, request, resultSchema(def, request), out, { ownAnswer: true });
  // A local answer that fails its own schema is a bug in the engine; let a model answer instead.
  if (!verdict.ok) throw new ProviderError("invalid_output", "local engine produced an invalid result");
  return { result: verdict.value, model: LOCAL_MODEL };
}

function userText(messages: ChatMessage[]): string {
  return messages
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .join("\n");
}

/**
 * Image functions: the prompt is the user part of def.prompt(request) (so the function composes
 * style and negative prompt), the size is request.size; def.postprocess maps the provider's
 * ImageResult ({model, images}) to the function's result schema before validation.
 */
async function attemptImage({ def, request, provider, model, signal }: AttemptInput): Promise<AttemptResult> {
  if (!provider.image) throw new ProviderError("unsupported", "provider cannot generate images");
  const fields = (request ?? {}) as Record<string, unknown>;
  const size = typeof fields.size === "string" && /^\d+x\d+$/.test(fields.size) ? fields.size : "1024x1024";
  const n = typeof fields.n === "number" ? fields.n : undefined;
  const image = await provider.image({ prompt: userText(def.prompt(request)), size, model, n, signal });
  const verdict = judge(def, request, resultSchema(def, request), image);
  if (!verdict.ok) throw new ProviderError("invalid_output", "image result does not match the function's result schema");
  return { result: verdict.value, model: image.model };
}

async function attemptText({ def, request, provider, model, signal }: AttemptInput): Promise<AttemptResult> {
  const schema = resultSchema(def, request);
  const messages = def.prompt(request);
  const base = { fn: def.name, model, signal, schema: { name: def.name, schema: schema as Record<string, unknown> } };
  const first = await provider.complete({ ...base, messages });
  const verdict = judgeText(def, request, schema, first.text);
  if (verdict.ok) return { result: verdict.value, model: first.model };

  // One repair round-trip on the same provider: models usually fix what they are told is wrong.
  const repair: ChatMessage[] = [
    ...messages,
    { role: "assistant", content: first.text },
    {
      role: "user",
      content: `Your answer is invalid:\n- ${verdict.problems.join("\n- ")}\nAnswer again with the corrected JSON only.`,
    },
  ];
  const second = await provider.complete({ ...base, messages: repair });
  const again = judgeText(def, request, schema, second.text);
  if (again.ok) return { result: again.value, model: second.model };
  throw new ProviderError("invalid_output", "answer failed validation after one repair attempt");
}
