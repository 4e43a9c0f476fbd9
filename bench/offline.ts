/**
 * Offline engine speed: the median time of each capability on a realistic 1 KB text, one core,
 * after warm-up. Targets (issue 5): every capability under 1 ms, grammar under 20 ms.
 *   bun bench/offline.ts
 */

import { readFileSync } from "node:fs";
import { loadedEngines } from "../src/offline-engine/engines";
import { extractEntities } from "../src/offline-engine/extract";
import { fixGrammar, warmGrammar } from "../src/offline-engine/grammar";
import { detectIntent } from "../src/offline-engine/intent";
import { extractJson, parseSchemaSpec } from "../src/offline-engine/json-extract";
import { extractKeywords } from "../src/offline-engine/keywords";
import { detectLanguage } from "../src/offline-engine/language";
import { moderate } from "../src/offline-engine/moderation";
import { redactPii } from "../src/offline-engine/pii";
import { parseSearchQuery } from "../src/offline-engine/query-parse";
import { analyzeSentiment } from "../src/offline-engine/sentiment";
import { detectSpam } from "../src/offline-engine/spam";
import { summarize } from "../src/offline-engine/summarize";
import { RequestGuard } from "../src/providers/guardrails";
import { ONE_KB_TEXT } from "../test/local/speed";

const text = ONE_KB_TEXT.slice(0, 1024);
// realistic multi-locale prompts (issue 23): the texts of the PII tuning set, back to back
const world = readFileSync(new URL("../test/fixtures/eval/pii-world.jsonl", import.meta.url), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => (JSON.parse(l) as { text: string }).text)
  .join("\n\n");
const world1k = world.slice(0, 1024);
const world10k = world.slice(0, 10_240);
const tenKb = ONE_KB_TEXT.repeat(10).slice(0, 10_240);
// redaction runs on every guarded request: its first call loads the name gazetteer (timed apart)
const t0 = performance.now();
redactPii("warm-up: Zsófia Horváth");
const gazetteerLoadMs = performance.now() - t0;
/** A guarded /v1 chat request (docs/guardrails.md): inspect, redact every kind, restore an answer that echoes it. */
function guarded(prompt: string): unknown {
  const guard = new RequestGuard({
    redactPii: ["email", "phone", "credit_card", "ssn", "ip_address", "name", "address", "date_of_birth"],
    restorePii: true,
    blockPii: [],
    blockModeration: [],
  });
  guard.inspect([prompt]);
  const sent = guard.forProxy("chat/completions", { messages: [{ role: "user", content: prompt }] });
  return guard.restoreJson(JSON.stringify(sent));
}
const fields = parseSchemaSpec({ email: "string", phone: "string", amount: "number", date: "date" }) ?? [];

async function median(fn: () => unknown, runs: number): Promise<number> {
  for (let i = 0; i < Math.min(50, runs); i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const cases: [string, () => unknown, number][] = [
  ["pii (redact, hash)", () => redactPii(text, { style: "hash", hashKey: "bench-key" }), 1],
  ["pii redact, 1 KB multi-locale", () => redactPii(world1k), 1],
  ["pii redact, 10 KB multi-locale", () => redactPii(world10k), 10],
  ["pii redact, 10 KB", () => redactPii(tenKb), 10],
  ["guardrails (inspect, redact, restore), 1 KB multi-locale", () => guarded(world1k), 1],
  ["guardrails (inspect, redact, restore), 10 KB multi-locale", () => guarded(world10k), 10],
  ["language", () => detectLanguage(text), 1],
  ["sentiment (+aspects)", () => analyzeSentiment(text, { aspects: ["delivery", "battery"] }), 1],
  ["spam", () => detectSpam(text), 1],
  ["moderation", () => moderate(text), 1],
  ["intent", () => detectIntent(text), 1],
  ["summarize", () => summarize(text), 1],
  ["entities", () => extractEntities(text), 1],
  ["keywords", () => extractKeywords(text, 10), 1],
  ["json-extract", () => extractJson(text, fields), 1],
  [
    "search-query-parse",
    () => parseSearchQuery("red nike running shoes under $120 size 10 not used from last week sorted by price"),
    1,
  ],
];

await warmGrammar();
const rows: { capability: string; median_ms: number; target_ms: number; ok: boolean }[] = [];
for (const [name, fn, target] of cases) {
  const ms = await median(fn, 2000);
  rows.push({ capability: name, median_ms: Number(ms.toFixed(4)), target_ms: target, ok: ms < target });
}
const g = await median(() => fixGrammar(text), 60);
rows.push({ capability: "grammar (harper)", median_ms: Number(g.toFixed(3)), target_ms: 20, ok: g < 20 });

console.log(`offline engine, 1 KB text unless named, median of warm runs (bun ${Bun.version})`);
console.table(rows);
const gazetteer = loadedEngines().find((e) => e.engine === "pii-name-gazetteer");
console.log(
  `pii name gazetteer, loaded by the first redaction: ${gazetteerLoadMs.toFixed(0)} ms, resident memory +${((gazetteer?.rss_bytes ?? 0) / 1e6).toFixed(1)} MB`,
);
const missed = rows.filter((r) => !r.ok);
console.log(missed.length ? `targets missed: ${missed.map((r) => r.capability).join(", ")}` : "all targets met");
