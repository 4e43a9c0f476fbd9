import { GatewayError } from "../errors";
import { CpuBudgetExceeded, checkCpuBudget, withCpuBudget } from "../local/budget";
import type { TraceUsage } from "../tracing/interface";
import { judge, judgeText, resultSchema, type Verdict } from "./answer";
import { type ChatMessage, type CompletionResult, type Provider, ProviderError, type RoutedFunction } from "./types";

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
  /** sent with the provider call (the trace's traceparent) */
  headers?: Record<string, string>;
  /** the guardrails' redaction of a text the offline engine itself sends out (an embedding query) */
  outbound?: (text: string) => string;
}

export interface AttemptResult {
  result: unknown;
  model: string;
  /** tokens the provider reported, both round-trips of a repair included */
  usage?: TraceUsage;
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

/** Functions whose offline implementation has run on its example in this process (see warmUp). */
const warmed = new Set<string>();
/** Functions with a budgeted offline call that ran to its end (answered, or refused twice) in this process. */
const seasoned = new Set<string>();

async function attemptLocal(input: AttemptInput): Promise<AttemptResult | null> {
  const { def, cpuBudgetMs } = input;
  if (!def.local) return null;
  if (cpuBudgetMs !== undefined && !warmed.has(def.name)) {
    warmed.add(def.name);
    warmUp(def, input);
  }
  let answered: { out: unknown; verdict: Verdict | null };
  try {
    answered = await runLocal(input, input.request);
  } catch (err) {
    if (!(err instanceof CpuBudgetExceeded)) throw err;
    // A function's first budgeted calls in a process run code the engine has not compiled yet
    // (JavaScript and regular expressions run slower until JavaScriptCore has), and once only:
    // a call refused then is run once more, so it is answered when an identical later call would be.
    if (seasoned.has(def.name)) throw budgetExceeded(def, err);
    seasoned.add(def.name);
    try {
      answered = await runLocal(input, input.request);
    } catch (again) {
      if (again instanceof CpuBudgetExceeded) throw budgetExceeded(def, again);
      throw again;
    }
  }
  seasoned.add(def.name);
  const { out } = answered;
  if (out === null) return null;
  const verdict = answered.verdict ?? judge(def, input.request, resultSchema(def, input.request), out, { ownAnswer: true });
  // A local answer that fails its own schema is a bug in the engine; let a model answer instead.
  if (!verdict.ok) throw new ProviderError("invalid_output", "local engine produced an invalid result");
  return { result: verdict.value, model: LOCAL_MODEL };
}

const budgetExceeded = (def: RoutedFunction, err: CpuBudgetExceeded) =>
  new OfflineBudgetExceeded(
    `${def.name}: this request needs more than the offline engine's CPU budget of ${err.budgetMs} ms per call; send a shorter text, or configure an AI provider for ${def.name}`,
  );

/**
 * Runs the offline implementation on `request` under the call's CPU budget. Judging a synchronous
 * answer is part of the same stretch of offline work, so it runs under the same budget: the schema
 * and semantic checks of an answer with 25,000 entities cost as much as finding them. An
 * asynchronous engine (the grammar worker) has awaited, and this thread's CPU time since then is
 * other requests' too: its answer is judged after (verdict null).
 */
async function runLocal(
  { def, accountId, signal, cpuBudgetMs, outbound }: AttemptInput,
  request: unknown,
): Promise<{ out: unknown; verdict: Verdict | null }> {
  const local = def.local as NonNullable<RoutedFunction["local"]>;
  let out: unknown = null;
  let verdict: Verdict | null = null;
  const answer = (): undefined | Promise<void> => {
    const o = local(request, { accountId, signal, outbound });
    if (o instanceof Promise)
      return o.then((v) => {
        out = v;
      });
    out = o;
    if (o === null) return;
    checkCpuBudget();
    verdict = judge(def, request, resultSchema(def, request), o, { ownAnswer: true });
  };
  await (cpuBudgetMs === undefined ? answer() : withCpuBudget(cpuBudgetMs, answer));
  return { out, verdict };
}

/**
 * The first call of a function in a process first runs its offline implementation on the
 * function's own example, outside any budget: that loads the engine parts the function uses and
 * builds what they build on first use (the date parser's patterns, the intent cues, the schema
 * checker of its result), one-time costs that are the gateway's, not the request's. Its answer is
 * dropped; an asynchronous one (the grammar worker) is not waited for.
 */
function warmUp(def: RoutedFunction, input: AttemptInput): void {
  if (!def.example) return;
  // runs its synchronous part now; a warm-up that fails changes nothing: the call runs as it would have
  runLocal({ ...input, cpuBudgetMs: undefined }, def.example.request).catch(() => {});
}

const usageOf = (r: CompletionResult): TraceUsage | undefined =>
  r.usage && { input: r.usage.prompt_tokens, output: r.usage.completion_tokens };

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
async function attemptImage({ def, request, provider, model, signal, headers }: AttemptInput): Promise<AttemptResult> {
  if (!provider.image) throw new ProviderError("unsupported", "provider cannot generate images");
  const fields = (request ?? {}) as Record<string, unknown>;
  const size = typeof fields.size === "string" && /^\d+x\d+$/.test(fields.size) ? fields.size : "1024x1024";
  const n = typeof fields.n === "number" ? fields.n : undefined;
  const image = await provider.image({ prompt: userText(def.prompt(request)), size, model, n, signal, headers });
  const verdict = judge(def, request, resultSchema(def, request), image);
  if (!verdict.ok) throw new ProviderError("invalid_output", "image result does not match the function's result schema");
  return { result: verdict.value, model: image.model };
}

async function attemptText({ def, request, provider, model, signal, headers }: AttemptInput): Promise<AttemptResult> {
  const schema = resultSchema(def, request);
  const messages = def.prompt(request);
  const base = { fn: def.name, model, signal, headers, schema: { name: def.name, schema: schema as Record<string, unknown> } };
  const first = await provider.complete({ ...base, messages });
  const verdict = judgeText(def, request, schema, first.text);
  if (verdict.ok) return { result: verdict.value, model: first.model, usage: usageOf(first) };

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
  if (again.ok) {
    const a = usageOf(first);
    const b = usageOf(second);
    const usage = a && b ? { input: a.input + b.input, output: a.output + b.output } : (b ?? a);
    return { result: again.value, model: second.model, usage };
  }
  throw new ProviderError("invalid_output", "answer failed validation after one repair attempt");
}
