/**
 * Grammar and spelling correction for the offline engine. Harper (harper.js, WebAssembly) runs in a
 * worker thread (./grammar-worker.ts, ./grammar-engine.ts) that starts with the first grammar call
 * and stops after GRAMMAR_IDLE_MS without one: its set-up blocks a thread for seconds (never the
 * server's), and it holds about 230 MB that a gateway not serving grammar-fix never pays for.
 *
 * Exported API:
 *   fixGrammar(text: string, opts?: { dialect?: GrammarDialect }): Promise<GrammarResult>
 *     -> { correctedText, corrections: { original, replacement, start, end, kind, explanation }[], changed }
 *     offsets are UTF-16 indices into the ORIGINAL text.
 *   warmGrammar(): Promise<void>   starts the worker and loads the linter (1 to 4 s)
 *   stopGrammar(): void            stops the worker now (the next call starts it again)
 *   parseDialect, GRAMMAR_DIALECTS
 */
import { awaitOutsideCpuBudget, CpuBudgetExceeded, callBudgetMs, currentBudgetMs } from "./budget";
import { lazyAsyncEngine } from "./engines";

export type GrammarDialect = "american" | "british" | "australian" | "canadian" | "indian";

export const GRAMMAR_DIALECTS: readonly GrammarDialect[] = ["american", "british", "australian", "canadian", "indian"];

const DIALECT_ALIASES: Record<string, GrammarDialect> = {
  us: "american",
  "en-us": "american",
  american: "american",
  "american english": "american",
  uk: "british",
  gb: "british",
  "en-gb": "british",
  british: "british",
  "british english": "british",
  au: "australian",
  "en-au": "australian",
  australian: "australian",
  ca: "canadian",
  "en-ca": "canadian",
  canadian: "canadian",
  in: "indian",
  "en-in": "indian",
  indian: "indian",
};

/** Maps a request's dialect text to a supported dialect, or null when unsupported. */
export function parseDialect(input: string | undefined): GrammarDialect | null {
  if (!input) return "american";
  return DIALECT_ALIASES[input.trim().toLowerCase()] ?? null;
}

export interface GrammarCorrection {
  original: string;
  replacement: string;
  start: number;
  end: number;
  /** Harper's lint kind: Spelling, Grammar, Agreement, Punctuation, ... */
  kind: string;
  explanation: string;
}

export interface GrammarResult {
  correctedText: string;
  corrections: GrammarCorrection[];
  changed: boolean;
}

/** The worker stops after this long without a grammar call, handing its memory back. */
export const GRAMMAR_IDLE_MS = 10 * 60_000;

// In the compiled binary the worker is an entry point of the build, found by its path from src/
// (the bundler bakes each module's source path into import.meta.url, which is not in the binary).
const WORKER_ENTRY = Bun.main.startsWith("/$bunfs/")
  ? "./offline-engine/grammar-worker.ts"
  : new URL("./grammar-worker.ts", import.meta.url).href;

type Reply = { id: number; result?: GrammarResult; error?: string; budgetMs?: number };
type Pending = { resolve: (r: GrammarResult | undefined) => void; reject: (e: Error) => void };

let nextId = 0;
const pending = new Map<number, Pending>();
/** grammar calls (and warm-ups) begun and not finished: the worker is never stopped under them */
let inFlight = 0;
let idleTimer: ReturnType<typeof setTimeout> | undefined;
let idleMs = GRAMMAR_IDLE_MS;

function ask(w: Worker, msg: { op: "warm" } | { op: "fix"; text: string; dialect?: GrammarDialect; budgetMs?: number }) {
  const id = nextId++;
  return new Promise<GrammarResult | undefined>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.postMessage({ id, ...msg });
  });
}

const grammarWorker = lazyAsyncEngine("grammar", async () => {
  const w = new Worker(WORKER_ENTRY);
  w.unref();
  w.onmessage = (e: MessageEvent<Reply>) => {
    const p = pending.get(e.data.id);
    if (!p) return;
    pending.delete(e.data.id);
    if (e.data.budgetMs !== undefined) p.reject(new CpuBudgetExceeded(e.data.budgetMs));
    else if (e.data.error !== undefined) p.reject(new Error(e.data.error));
    else p.resolve(e.data.result);
  };
  w.onerror = (e) => {
    // a crashed worker: fail what it held, and let the next call start a new one
    const err = new Error(`grammar worker failed: ${e.message}`);
    for (const p of pending.values()) p.reject(err);
    pending.clear();
    grammarWorker.unload((x) => x.terminate());
  };
  try {
    await ask(w, { op: "warm" });
  } catch (e) {
    w.terminate();
    throw e;
  }
  return w;
});

function armIdleStop(): void {
  clearTimeout(idleTimer);
  if (inFlight > 0) return;
  idleTimer = setTimeout(stopGrammar, idleMs);
  idleTimer.unref?.();
}

/** Starts the worker and loads the linter ahead of the first request. */
export async function warmGrammar(): Promise<void> {
  inFlight++;
  try {
    await grammarWorker.get();
  } finally {
    inFlight--;
    armIdleStop();
  }
}

/** Stops the worker now, releasing the engine's memory; the next grammar call starts it again. */
export function stopGrammar(): void {
  clearTimeout(idleTimer);
  if (inFlight > 0) return;
  grammarWorker.unload((w) => w.terminate());
}

/** For tests: how long the worker may idle before it stops. */
export function setGrammarIdleMs(ms: number): void {
  idleMs = ms;
  armIdleStop();
}

/** Corrected text and the corrections made, in the given English dialect. */
export async function fixGrammar(text: string, opts: { dialect?: GrammarDialect } = {}): Promise<GrammarResult> {
  clearTimeout(idleTimer);
  inFlight++;
  try {
    // waits off this thread's budget (awaitOutsideCpuBudget): the linter runs on the worker's
    // thread, under the budget the call has on this one
    const w = await awaitOutsideCpuBudget(grammarWorker.get());
    const whole = callBudgetMs();
    try {
      return (await awaitOutsideCpuBudget(
        ask(w, { op: "fix", text, dialect: opts.dialect, budgetMs: currentBudgetMs() }),
      )) as GrammarResult;
    } catch (err) {
      // the worker ran out of what was left; the call's budget is the one to report
      if (err instanceof CpuBudgetExceeded && whole !== undefined) throw new CpuBudgetExceeded(whole, err.longestStretchMs);
      throw err;
    }
  } finally {
    inFlight--;
    armIdleStop();
  }
}
