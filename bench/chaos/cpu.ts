/**
 * CPU-adversarial texts against a real gateway process: every function the offline engine serves
 * gets 100 KB of ordinary prose and of each shape in test/helpers/adversarial.ts (runs of
 * punctuation, of one letter, of spaces, of emoji, nesting, ...), one request at a time. The CPU
 * each request costs is read from the server process itself (/proc/<pid>/task/<tid>/schedstat:
 * nanoseconds on a CPU, all its threads, so garbage collection counts too), before and after the
 * call, after a warm-up per function (its example and each shape at 1 KB: the first run of a code
 * path pays for compiling it, and the first call needing an engine part for loading it). The pass mark is the JavaScript thread, the one that answers every request (what a request
 * costs there is what /health and everybody else wait for); the whole process, concurrent JIT and
 * garbage-collector helper threads included, is reported beside it. Pass: no request over 100 ms
 * of JavaScript-thread CPU, and no 5xx other than the offline engine's honest 503 no_provider (a
 * text with nothing in it to analyze).
 */
import { readdirSync, readFileSync } from "node:fs";
import { FUNCTIONS } from "../../src/functions/registry";
import { fill, PROSE, SHAPES, SIZE, TEXT_FIELD } from "../../test/helpers/adversarial";
import { spawnGateway } from "../../test/helpers/spawned";
import { chaosHome, waitReady } from "../lib/chaos";

const LIMIT_MS = 100;
/** characters of the warm-up texts */
const WARM_UP = 1000;
/** grammar-fix reads `text` too */
const FIELDS: Record<string, string> = { ...TEXT_FIELD, "grammar-fix": "text" };

/** CPU nanoseconds of the process's JavaScript thread (its main thread: task id = pid). */
function jsThreadCpuNs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]);
}

/** CPU nanoseconds of all its threads (JIT compiler and garbage collector helpers too). */
function processCpuNs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return ns;
}

export async function run() {
  const home = chaosHome("cpu");
  const g = await spawnGateway(home.env);
  try {
    await waitReady(g.url);
    const { key } = home.key(100_000_000);
    const pid = g.proc.pid;
    const defs = FUNCTIONS.filter((d) => d.local && FIELDS[d.name]);
    const worst: { fn: string; shape: string; ms: number }[] = [];
    const statuses = new Map<string, number>();
    const serverErrors: string[] = [];
    let requests = 0;
    let warmUps = 0;
    let maxAll = 0;
    for (const def of defs) {
      const size = def.name === "search-query-parse" ? 20_000 : SIZE;
      let max = { fn: def.name, shape: "", ms: 0 };
      // first the function's example and every shape at 1 KB: the first run of a code path pays
      // for compiling it, and the first call that needs an engine part (the language model, the
      // date parser, the lexicon) for loading it, once per process (0.05 to 2 s, listed by
      // /metrics); neither says what an input costs
      for (const text of [null, fill(PROSE, WARM_UP), ...Object.values(SHAPES).map((make) => make(WARM_UP))]) {
        await fetch(g.url + def.path, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key, "cache-control": "no-store" },
          body: JSON.stringify(
            text === null ? def.example.request : { ...def.example.request, [FIELDS[def.name] as string]: text },
          ),
        }).then((r) => r.arrayBuffer());
        warmUps++;
      }
      for (const [shape, make] of [["prose", (n: number) => fill(PROSE, n)] as const, ...Object.entries(SHAPES)]) {
        const body = JSON.stringify({ ...def.example.request, [FIELDS[def.name] as string]: make(size) });
        const before = jsThreadCpuNs(pid);
        const beforeAll = processCpuNs(pid);
        const res = await fetch(g.url + def.path, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key, "cache-control": "no-store" },
          body,
        });
        const json = (await res.json()) as { error?: { code: string } };
        const ms = (jsThreadCpuNs(pid) - before) / 1e6;
        maxAll = Math.max(maxAll, (processCpuNs(pid) - beforeAll) / 1e6);
        requests++;
        const outcome = json.error?.code ?? String(res.status);
        statuses.set(outcome, (statuses.get(outcome) ?? 0) + 1);
        if (res.status >= 500 && outcome !== "no_provider") serverErrors.push(`${def.name}/${shape} ${outcome}`);
        if (ms > max.ms) max = { fn: def.name, shape, ms };
      }
      worst.push(max);
    }
    worst.sort((a, b) => b.ms - a.ms);
    const over = worst.filter((w) => w.ms > LIMIT_MS);
    const top = worst
      .slice(0, 4)
      .map((w) => `${w.fn} ${w.ms.toFixed(0)} ms (${w.shape})`)
      .join(", ");
    const outcomes = [...statuses].map(([k, v]) => `${k} ${v}`).join(", ");
    return {
      name: "cpu",
      line: `${requests} requests of 100 KB over ${defs.length} offline functions (after ${warmUps} warm-up calls of 1 KB); max JavaScript-thread CPU per request: ${top}; whole process at most ${maxAll.toFixed(0)} ms; over ${LIMIT_MS} ms: ${over.length} functions; outcomes: ${outcomes}; 5xx other than no_provider: ${serverErrors.length}${serverErrors.length ? ` (${serverErrors.slice(0, 3).join(", ")})` : ""}`,
      ok: over.length === 0 && serverErrors.length === 0,
    };
  } finally {
    g.proc.kill("SIGKILL");
    await g.exited;
    home.cleanup();
  }
}

if (import.meta.main) console.log(await run());
