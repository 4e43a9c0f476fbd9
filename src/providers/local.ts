import { GatewayError } from "../errors";
import { budgetText, CpuBudgetExceeded, checkCpuBudget, withCpuBudget } from "../offline-engine/budget";
import { warmEngines, withDeferredLoads } from "../offline-engine/engines";
import { judge, resultSchema, type Verdict } from "./answer";
import {
  type AttemptInput,
  type AttemptResult,
  type CompletionResult,
  type FunctionEngine,
  type Provider,
  ProviderError,
  type RoutedFunction,
} from "./types";

export const LOCAL_MODEL = "local";

/** The offline engine ran out of its CPU budget: 413 for the client, unless a provider further along the route answers. */
export class OfflineBudgetExceeded extends GatewayError {
  constructor(message: string) {
    super("payload_too_large", message);
  }
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
    await warmUp(def, input);
  }
  let answered: { out: unknown; verdict: Verdict | null };
  // A turn of the event loop between the request's own stretch (reading and parsing its body,
  // validating it, routing it: 10 to 20 ms for 100 KB) and its budgeted run: without it the two ran
  // as one piece, and a /health poll that came in while one call ran could wait behind the next
  // call's whole stretch as well (110 to 120 ms read by test/core/loop-probe.test.ts, about 60 once
  // split). A timer, not a microtask: only a timer lets the loop take what waits on its sockets.
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
  try {
    answered = await withEngineParts(def, () => runLocal(input, input.request));
  } catch (err) {
    if (!(err instanceof CpuBudgetExceeded)) throw err;
    // A refusal is confirmed by a second run when the first may have been charged for work not its
    // own: a function's first budgeted calls in a process run code the engine has not compiled yet
    // (JavaScript and regular expressions run slower until JavaScriptCore has), and a run whose
    // overrun holds a stretch of CPU time between two safe points far longer than the engine's
    // steps (err.foreignLooking: a collection of the heap, 60 to 270 ms on a 500 MB heap) was
    // charged for the collector. A call that needs more than its budget is refused on its first
    // run otherwise, without paying for it twice.
    if (seasoned.has(def.name) && !err.foreignLooking) throw budgetExceeded(def, err);
    seasoned.add(def.name);
    // the second run is another stretch of the thread: what waited behind the first runs in between
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    try {
      answered = await withEngineParts(def, () => runLocal(input, input.request));
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
    `${def.name}: this request needs more than the offline engine's CPU budget of ${budgetText(err.budgetMs)} per call; send a shorter text, or configure an AI provider for ${def.name}`,
  );

/**
 * Runs the offline implementation on `request` under the call's CPU budget. Judging a synchronous
 * answer is part of the same stretch of offline work, so it runs under the same budget: the schema
 * and semantic checks of an answer with 25,000 entities cost as much as finding them. An
 * asynchronous engine (the grammar worker) has awaited, and this thread's CPU time since then is
 * other requests' too: its answer is judged after (verdict null).
 */
async function runLocal(
  {
    def,
    accountId,
    signal,
    cpuBudgetMs,
    outbound,
    allowModel,
  }: Pick<AttemptInput, "def" | "accountId" | "signal" | "cpuBudgetMs" | "outbound" | "allowModel">,
  request: unknown,
): Promise<{ out: unknown; verdict: Verdict | null }> {
  const local = def.local as NonNullable<RoutedFunction["local"]>;
  let out: unknown = null;
  let verdict: Verdict | null = null;
  const answer = (): undefined | Promise<void> => {
    const o = local(request, { accountId, signal, outbound, allowModel });
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
async function warmUp(def: RoutedFunction, input: AttemptInput): Promise<void> {
  if (!def.example) return;
  // the parts it uses load in slices (withDeferredLoads), leaving the event loop free; an
  // asynchronous implementation (the grammar worker) is not waited for; a warm-up that fails
  // changes nothing: the call runs as it would have
  const run = withEngineParts(def, () => runLocal({ ...input, cpuBudgetMs: undefined }, def.example?.request));
  if (isAsync(def)) run.catch(() => {});
  else await run.catch(() => {});
}

const isAsync = (def: RoutedFunction) => def.local?.constructor.name === "AsyncFunction";

/**
 * Runs an offline implementation once the engine parts it uses are in, loaded in slices that leave
 * the event loop free. A synchronous one is a computation that can be repeated: it runs under
 * withDeferredLoads, which loads what it asks for and no other part. An asynchronous one may call
 * out (a knowledge base's embeddings) and is not run twice: it waits for every part (warmEngines).
 */
async function withEngineParts<T>(def: RoutedFunction, run: () => Promise<T>): Promise<T> {
  if (!isAsync(def)) return withDeferredLoads(run);
  await warmEngines();
  return run();
}

/**
 * What warmUp does on a function's first call, done before any call comes: once the engine's parts
 * are in (warmEngines), each function's offline implementation runs on its own example, one
 * function a turn of the event loop (20 to 80 ms each on a busy machine the first time, then a few).
 * `textai serve` starts it once the listener is up. An asynchronous implementation (the grammar
 * worker) holds no thread here and loads a part the gateway pays for only when asked: it is left.
 */
export async function warmOfflineFunctions(defs: readonly RoutedFunction[]): Promise<void> {
  await warmEngines();
  for (const def of defs) {
    if (!def.local || !def.example || isAsync(def)) continue;
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (warmed.has(def.name)) continue;
    warmed.add(def.name);
    // a warm-up that fails changes nothing: the first call runs as it would have
    await runLocal({ def, accountId: "", signal: new AbortController().signal }, def.example.request).catch(() => {});
  }
}

/** The offline engine's answers: each function's own `def.local`, under the call's CPU budget. */
const offlineEngine: FunctionEngine = {
  serves: (def) => typeof def.local === "function",
  attempt: attemptLocal,
};

/**
 * The offline engine as a route entry. It has no generic completion: the router calls the
 * function's own `def.local` instead (its `functions` engine). Everything the gateway does
 * differently for it follows from its capabilities: in process, functions only.
 */
export class LocalProvider implements Provider {
  readonly type = "local" as const;
  readonly inProcess = true;
  readonly functionsOnly = true;
  readonly functions = offlineEngine;
  constructor(readonly name: string) {}
  modelFor(): string {
    return LOCAL_MODEL;
  }
  complete(): Promise<CompletionResult> {
    return Promise.reject(new ProviderError("unsupported", "the offline engine has no general chat completion"));
  }
  listModels(): string[] {
    return [LOCAL_MODEL];
  }
}
