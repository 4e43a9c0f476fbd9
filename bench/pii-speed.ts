/**
 * The guardrail's own cost, in process (issue 23): redact every kind + restore, as a guarded
 * `/v1/chat/completions` request runs it (`RequestGuard`: inspect, forProxy, restoreJson of an
 * answer that echoes the redacted prompt), on the load bench's 1 KB prompt (bench/lib/requests.ts
 * `piiPrompt`, scenarios `compat-1k` / `guarded`), the same text grown to 10 KB, and the
 * multi-locale texts of the PII tuning set (1 KB, 10 KB). Also the recognizer alone per part.
 *
 * Each case: warm-up, then rounds of many calls; a round's CPU time (thread CPU, getrusage) per
 * call; the median of the rounds is reported ("back to back"). A gateway runs a request's other
 * work between two redactions, which evicts the recognizer's code and tables from the CPU caches:
 * "between other work" times single calls (thread CPU clock) with 8 MB of memory traffic and a
 * 100 KB JSON parse before each, the median of many: the closer figure for a server.
 *   bun bench/pii-speed.ts                 all cases
 *   bun bench/pii-speed.ts --quick         the guardrail cases only
 *   bun bench/pii-speed.ts --against DIR   before/after: the same cases on another checkout of the
 *     repository (its src/ and a node_modules: `git archive <commit> src | tar -x -C DIR`, then
 *     `ln -s $PWD/node_modules DIR/`), rounds and calls alternating between the two in this one
 *     process, so the load of a shared machine falls on both alike
 * Every call gets a fresh copy of its text (JSON.parse of the text's JSON, as a server gets a new
 * string per request): JavaScriptCore keeps a regex's last answer per string, so calls on one
 * string object would find whole-text regexes nearly free. The copy's own cost (a parse of the
 * same JSON alone, measured the same way) is taken off each figure.
 * The guard's memo of texts read (RECOGNISED in src/providers/guardrails.ts) is forgotten before
 * each guarded call: every call reads its text, as a request with a text never sent before does.
 * Profile: bun --cpu-prof --cpu-prof-dir=/tmp/prof bench/pii-speed.ts --quick
 */

import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { threadCpuMs } from "../src/offline-engine/budget";
import { detectPii } from "../src/offline-engine/pii";
import { forgetRecognisedTexts, RequestGuard } from "../src/providers/guardrails";
import { piiPrompt } from "./lib/requests";

interface Impl {
  RequestGuard: typeof RequestGuard;
  detectPii: typeof detectPii;
  /** the guard's memo of texts read (since 2026-12-06): forgotten before each call, so the recogniser's cost is measured */
  forget?: () => void;
}
const here: Impl = { RequestGuard, detectPii, forget: forgetRecognisedTexts };
const againstAt = process.argv.indexOf("--against");
const baseDir = againstAt >= 0 ? resolve(process.argv[againstAt + 1]) : null;
const base: Impl | null = baseDir
  ? {
      RequestGuard: (await import(`${baseDir}/src/providers/guardrails.ts`)).RequestGuard,
      forget: (await import(`${baseDir}/src/providers/guardrails.ts`)).forgetRecognisedTexts,
      // the engine's folder was src/local before 2026-11-26
      detectPii: (
        await import(
          existsSync(`${baseDir}/src/offline-engine`)
            ? `${baseDir}/src/offline-engine/pii/index.ts`
            : `${baseDir}/src/local/pii/index.ts`
        )
      ).detectPii,
    }
  : null;

const world = readFileSync(new URL("../test/fixtures/eval/pii-world.jsonl", import.meta.url), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => (JSON.parse(l) as { text: string }).text)
  .join("\n\n");

const ALL_KINDS = ["email", "phone", "credit_card", "ssn", "ip_address", "name", "address", "date_of_birth"] as const;

/** A guarded /v1 chat request: inspect, redact every kind, restore an answer that echoes the redacted prompt. */
function guarded(prompt: string, impl: Impl = here): string {
  impl.forget?.();
  const guard = new impl.RequestGuard({ redactPii: [...ALL_KINDS], restorePii: true, blockPii: [], blockModeration: [] });
  guard.inspect([prompt]);
  const sent = guard.forProxy("chat/completions", { messages: [{ role: "user", content: prompt }] });
  const content = (sent.messages as { content: string }[])[0].content;
  const answer = JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content } }] });
  return guard.restoreJson(answer);
}

const cpuUs = () => {
  const u = process.threadCpuUsage();
  return u.user + u.system;
};

/** Median over `rounds` of the CPU µs per call of a round of `calls` calls (after warm-up). */
function measure(fn: () => unknown, calls: number, rounds: number): { median: number; min: number } {
  for (let i = 0; i < calls; i++) fn();
  const perCall: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = cpuUs();
    for (let i = 0; i < calls; i++) fn();
    perCall.push((cpuUs() - t) / calls);
  }
  perCall.sort((a, b) => a - b);
  return { median: perCall[Math.floor(perCall.length / 2)], min: perCall[0] };
}

const junk = new Float64Array(1 << 20);
const junkJson = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `n${i}`, v: [i, i * 2, "xyz"] })));
/**
 * What a server does between two requests' redactions, roughly: 8 MB of memory traffic (the CPU
 * caches) and a 100 KB JSON parse (garbage, so collections fall inside the timed calls too).
 */
function otherWork(): number {
  let sum = 0;
  for (let i = 0; i < junk.length; i += 8) sum += junk[i]++;
  return sum + (JSON.parse(junkJson) as unknown[]).length;
}

/** Median thread CPU µs of single calls, each after otherWork(). */
function measureCold(fn: () => unknown, calls: number): number {
  for (let i = 0; i < Math.min(calls, 50); i++) fn();
  const us: number[] = [];
  for (let i = 0; i < calls; i++) {
    otherWork();
    const t = threadCpuMs();
    fn();
    us.push((threadCpuMs() - t) * 1000);
  }
  us.sort((a, b) => a - b);
  return us[Math.floor(us.length / 2)];
}

const quick = process.argv.includes("--quick");
// the first redaction of a process loads the name gazetteer (timed apart)
const t0 = performance.now();
detectPii("warm-up: Zsófia Horváth");
const loadMs = performance.now() - t0;
base?.detectPii("warm-up: Zsófia Horváth");
const p1k = piiPrompt(1024);
const p10k = piiPrompt(10_240);
const w1k = world.slice(0, 1024);
const w10k = world.slice(0, 10_240);
// the restore must give the prompt back: a check that the bench measures the real work
for (const impl of base ? [here, base] : [here])
  if (JSON.parse(guarded(p1k, impl)).choices[0].message.content !== p1k) throw new Error("restore did not give the prompt back");

/** a new string with the text of `s` on each call (see the header) */
const fresh = (s: string): (() => string) => {
  const json = JSON.stringify(s);
  return () => JSON.parse(json) as string;
};
const [f1k, f10k, fw1k, fw10k] = [p1k, p10k, w1k, w10k].map(fresh);
const cases: [string, (impl: Impl) => unknown, number, () => string][] = [
  ["guardrail (redact + restore), bench 1 KB prompt", (impl) => guarded(f1k(), impl), 400, f1k],
  ["guardrail (redact + restore), bench prompt grown to 10 KB", (impl) => guarded(f10k(), impl), 40, f10k],
  ["guardrail (redact + restore), 1 KB multi-locale", (impl) => guarded(fw1k(), impl), 400, fw1k],
  ["guardrail (redact + restore), 10 KB multi-locale", (impl) => guarded(fw10k(), impl), 40, fw10k],
];
if (!quick) cases.push(["detectPii alone, bench 1 KB prompt", (impl) => impl.detectPii(f1k()), 400, f1k]);

console.log(
  `guardrail speed, CPU µs per call (bun ${Bun.version}; gazetteer load ${loadMs.toFixed(0)} ms)${base ? `; before: ${baseDir}` : ""}`,
);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = cases.map(([name, fn, calls, copy]) => {
  // what the fresh copy itself costs, taken off every figure of the case
  const copyHot = measure(copy, calls, 9).median;
  const copyCold = measureCold(copy, Math.max(200, calls));
  if (!base) {
    return {
      case: name,
      "back to back (median of 9 rounds)": Math.round(measure(() => fn(here), calls, 9).median - copyHot),
      "between other work (median)": Math.round(measureCold(() => fn(here), Math.max(200, calls)) - copyCold),
    };
  }
  // rounds alternate between the two trees, and so do the single calls between other work
  const rounds: [number[], number[]] = [[], []];
  const cold: [number[], number[]] = [[], []];
  for (let r = 0; r < 15; r++)
    for (const [k, impl] of [base, here].entries()) rounds[k].push(measure(() => fn(impl), calls, 1).median);
  for (let r = 0; r < 40; r++)
    for (const [k, impl] of [base, here].entries()) cold[k].push(measureCold(() => fn(impl), Math.max(10, calls / 20)));
  return {
    case: name,
    "back to back, before": Math.round(median(rounds[0]) - copyHot),
    after: Math.round(median(rounds[1]) - copyHot),
    "between other work, before": Math.round(median(cold[0]) - copyCold),
    "after ": Math.round(median(cold[1]) - copyCold),
  };
});
console.table(rows);
