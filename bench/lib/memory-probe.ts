/**
 * Memory probe, preloaded into the gateway under test by `bun bench/soak.ts`
 * (`bun --preload bench/lib/memory-probe.ts src/cli.ts serve`); not part of the gateway. It writes
 * JSON lines (ProbeSample) to the file named by TEXTAI_DEBUG_MEMORY:
 *
 * - on SIGUSR2: a full collection (Bun.gc(true)), a one-second pause so the allocator can hand
 *   freed pages back, then a sample marked `live`: the heap then holds only reachable objects, so
 *   comparing two live samples shows a leak without the noise of garbage not yet collected;
 * - with TEXTAI_DEBUG_MEMORY_MS > 0, a sample every that many ms (TEXTAI_DEBUG_MEMORY_GC=1: each
 *   after a full collection). heapStats() walks the heap, so periodic sampling costs some CPU.
 *
 * heap_mb is JavaScriptCore's heap size, which includes extra_mb: memory owned by JS objects
 * outside the heap proper (WebAssembly memories, request and response bodies, buffers).
 */

import { heapStats } from "bun:jsc";
import { appendFileSync } from "node:fs";

export interface ProbeSample {
  /** seconds since the gateway started */
  t: number;
  /** after a forced full collection */
  live: boolean;
  rss_mb: number;
  heap_mb: number;
  extra_mb: number;
  objects: number;
  /** object types whose count grew most since the first sample (empty in the first) */
  grew: Record<string, number>;
  gc_ms?: number;
}

const file = process.env.TEXTAI_DEBUG_MEMORY;
if (file) {
  const every = Number(process.env.TEXTAI_DEBUG_MEMORY_MS ?? 0);
  const forceGc = process.env.TEXTAI_DEBUG_MEMORY_GC === "1";
  const started = Date.now();
  let first: Record<string, number> | null = null;
  const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;
  const write = (live: boolean, gcMs?: number) => {
    const h = heapStats();
    const counts = h.objectTypeCounts as Record<string, number>;
    first ??= { ...counts };
    const base = first;
    const grew = Object.fromEntries(
      Object.entries(counts)
        .map(([k, v]) => [k, v - (base[k] ?? 0)] as [string, number])
        .filter(([, d]) => d > 0)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8),
    );
    const s: ProbeSample = {
      t: Math.round((Date.now() - started) / 1000),
      live,
      rss_mb: mb(process.memoryUsage.rss()),
      heap_mb: mb(h.heapSize),
      extra_mb: mb(h.extraMemorySize),
      objects: h.objectCount,
      grew,
      ...(gcMs !== undefined ? { gc_ms: gcMs } : {}),
    };
    appendFileSync(file, `${JSON.stringify(s)}\n`);
  };
  const collect = (): number => {
    const t0 = performance.now();
    Bun.gc(true);
    return Math.round(performance.now() - t0);
  };
  process.on("SIGUSR2", () => {
    const gcMs = collect();
    setTimeout(() => write(true, gcMs), 1000);
  });
  if (every > 0) setInterval(() => (forceGc ? write(true, collect()) : write(false)), every).unref();
}
