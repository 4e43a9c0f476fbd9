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
 */
import { outsideCpuBudget } from "./budget";

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
