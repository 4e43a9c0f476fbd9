/**
 * The offline engine's large parts (the grammar checker's WebAssembly, the language model, the
 * date parser, the sentiment lexicon) load on first use, never at start-up: a gateway that never
 * serves grammar-fix never pays for Harper. The first call that needs a part waits for its load
 * (0.05 to 2 s; concurrent callers share one load) instead of answering 503.
 *
 * Each load is recorded with its wall time and the growth of the process's resident memory it
 * caused, which /metrics reports per engine. The figure is the RSS before and after the load, so
 * allocations of requests served meanwhile (an asynchronous load) can blur it a little.
 * A synchronous load's CPU time is not charged to the offline CPU budget of the call that triggers it.
 *
 * A large synchronous part is written as a generator (`slicedEngine`): each `yield` is a point where
 * its load may pause. `warmEngines()` loads every such part in slices of about SLICE_MS, letting
 * the event loop answer whatever is waiting between two slices, so no load holds the thread for
 * long (the language model's took 0.7 to 1.1 s in one piece, issue 35.14). `textai serve` starts
 * it once the listener is up, and the offline engine's calls wait for it (an await, not a hold)
 * before their first run; a part asked for synchronously before its warm-up is done (a guardrail's
 * first PII scan) finishes the same load at once, from where the slices had got to.
 *
 * An offline call runs under `withDeferredLoads`: a sliced part it asks for before it is in is not
 * loaded at once but starts its sliced load, and the call is run again once that is done (its
 * first answer, if any, dropped). So a call loads the parts it uses and no others (the parts
 * together hold 80 to 130 MB of heap that every garbage collection after them pays for), and
 * never holds the event loop for a load.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { detachedFromCpuBudget, outsideCpuBudget } from "./budget";

export interface EngineLoad {
  engine: string;
  load_ms: number;
  /** growth of resident memory across the load, bytes (never negative) */
  rss_bytes: number;
}

const loads = new Map<string, EngineLoad>();

/** Engines loaded so far, in load order. */
export function loadedEngines(): EngineLoad[] {
  return [...loads.values()];
}

function record(engine: string, t0: number, rss0: number): void {
  loads.set(engine, {
    engine,
    load_ms: Math.round((performance.now() - t0) * 10) / 10,
    rss_bytes: Math.max(0, process.memoryUsage.rss() - rss0),
  });
}

/** A synchronous part: `load` runs once, on the first call of the returned getter. */
export function lazyEngine<T>(engine: string, load: () => T): () => T {
  let value: T | undefined;
  let ready = false;
  return () => {
    if (ready) return value as T;
    const t0 = performance.now();
    const rss0 = process.memoryUsage.rss();
    value = outsideCpuBudget(load);
    ready = true;
    record(engine, t0, rss0);
    return value;
  };
}

/** Wall milliseconds one slice of a background load may take before it lets the event loop run. */
export const SLICE_MS = 5;

const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Thrown by a sliced part's getter asked for under withDeferredLoads before it is in. */
export class EngineLoading extends Error {
  constructor(readonly engine: string) {
    super(`offline engine part ${engine} is loading`);
    this.name = "EngineLoading";
  }
}

/** The loads a run under withDeferredLoads asked for (whether or not its code caught the EngineLoading). */
const deferring = new AsyncLocalStorage<Promise<void>[]>();

/**
 * Runs `run` until it completes with every sliced part it asks for already in: each part asked
 * for too early starts its sliced load (see slicedEngine), the run's outcome is dropped, and it
 * runs again once those loads are done. `run` must be a computation that can be repeated (the
 * offline functions are: they read their request and the engine, and write nothing).
 */
export async function withDeferredLoads<T>(run: () => Promise<T>): Promise<T> {
  for (;;) {
    const asked: Promise<void>[] = [];
    let value: T | undefined;
    let error: unknown;
    let failed = false;
    try {
      value = await deferring.run(asked, run);
    } catch (err) {
      failed = true;
      error = err;
    }
    if (asked.length === 0) {
      if (failed) throw error;
      return value as T;
    }
    await Promise.all(asked);
  }
}

/** The sliced parts, in the order they were declared: warmEngines() loads them in that order. */
const warmers: { engine: string; warm: () => Promise<void> }[] = [];

/**
 * A synchronous part whose load is a generator that yields between small steps: loaded in slices
 * by warmEngines(), or at once by the first call of the returned getter that comes before.
 */
export function slicedEngine<T>(engine: string, load: () => Generator<void, T, void>): () => T {
  let value: T | undefined;
  let ready = false;
  let running: Generator<void, T, void> | null = null;
  let t0 = 0;
  let rss0 = 0;
  const started = () => {
    if (!running) {
      t0 = performance.now();
      rss0 = process.memoryUsage.rss();
      running = load();
    }
    return running;
  };
  const step = (g: Generator<void, T, void>): boolean => {
    let r: IteratorResult<void, T>;
    try {
      r = g.next();
    } catch (err) {
      running = null;
      throw err;
    }
    if (!r.done) return false;
    value = r.value;
    ready = true;
    running = null;
    record(engine, t0, rss0);
    return true;
  };
  let warming: Promise<void> | null = null;
  // a sliced load that failed is not deferred again: the next use loads at once and fails as it always did
  let failed = false;
  const warm = (): Promise<void> => {
    // one sliced load however many ask; begun outside any call's budget and deferral, so the call
    // that asked neither pays for it nor sees it stopped (its own run is simply repeated)
    warming ??= detachedFromCpuBudget(() =>
      deferring.exit(async () => {
        while (!ready) {
          const g = started();
          const until = performance.now() + SLICE_MS;
          while (!step(g) && performance.now() < until) {}
          if (!ready) await pause();
        }
      }),
    )
      .catch((err: unknown) => {
        failed = true;
        throw err;
      })
      .finally(() => {
        warming = null;
      });
    return warming;
  };
  warmers.push({ engine, warm });
  return () => {
    if (ready) return value as T;
    const asked = failed ? undefined : deferring.getStore();
    if (asked) {
      asked.push(warm().catch(() => {}));
      throw new EngineLoading(engine);
    }
    return outsideCpuBudget(() => {
      const g = started();
      while (!step(g)) {}
      return value as T;
    });
  };
}

const REQUIRE_CALL = /\brequire\("([^"]+)"\)/g;

/**
 * Requires the CommonJS module at `file` (a resolved path) and the modules it requires, one module a
 * step, those it needs first: a package of many small modules (the date parser's 51) then loads
 * in slices, where one `require` of its entry evaluates them all in one piece. The caller then
 * requires the entry by its name (a literal, so a compiled binary bundles it): already loaded, that
 * costs nothing. Where the files cannot be read (inside a compiled binary, where modules are
 * bundled), nothing is required here, and the caller's require loads it all in one step.
 */
export function* requireInSteps(file: string): Generator<void, void, void> {
  const order: string[] = [];
  try {
    const seen = new Set<string>();
    const visit = (f: string): void => {
      if (seen.has(f)) return;
      seen.add(f);
      for (const m of readFileSync(f, "utf8").matchAll(REQUIRE_CALL)) {
        const spec = m[1] as string;
        let dep: string;
        if (spec.startsWith(".")) {
          const base = resolve(dirname(f), spec);
          dep = existsSync(`${base}.js`) ? `${base}.js` : existsSync(`${base}/index.js`) ? `${base}/index.js` : base;
        } else dep = require.resolve(spec, { paths: [dirname(f)] });
        if (dep.endsWith(".js") && existsSync(dep)) visit(dep);
      }
      order.push(f);
    };
    visit(file);
  } catch {
    order.length = 0;
  }
  for (const f of order) {
    require(f);
    yield;
  }
}

let warming: Promise<void> | null = null;

/**
 * Loads every sliced part not loaded yet, one after the other, in slices of about SLICE_MS; the
 * same promise for every caller. A part whose load fails is left to its first use (which then
 * fails the way it always did), and the others still load.
 */
export function warmEngines(): Promise<void> {
  warming ??= (async () => {
    for (const w of warmers) {
      await pause();
      await w.warm().catch(() => {});
    }
  })();
  return warming;
}

export interface AsyncEngine<T> {
  /** the loaded part; the first call loads it, concurrent callers share that load */
  get(): Promise<T>;
  /** forgets a loaded part (after `dispose`), so /metrics no longer counts it and the next get() loads it again */
  unload(dispose: (value: T) => void): void;
}

/** An asynchronous part (a worker, a WebAssembly module); a failed load is retried by the next get(). */
export function lazyAsyncEngine<T>(engine: string, load: () => Promise<T>): AsyncEngine<T> {
  let pending: Promise<T> | null = null;
  return {
    get() {
      if (!pending) {
        const t0 = performance.now();
        const rss0 = process.memoryUsage.rss();
        const p = load().then((v) => {
          record(engine, t0, rss0);
          return v;
        });
        pending = p;
        p.catch(() => {
          if (pending === p) pending = null;
        });
      }
      return pending;
    },
    unload(dispose) {
      const p = pending;
      if (!p) return;
      pending = null;
      loads.delete(engine);
      p.then(dispose, () => {});
    },
  };
}
