/**
 * `bun bench/knowledge-search.ts [--chunks 10000] [--runs 5] [--hot]`: BM25 search latency over
 * one knowledge base of ~10,000 chunks in a real SQLite file. The help-center fixture is mixed into
 * generated filler documents (Zipf-distributed words from a 5,000-word vocabulary in which the
 * fixture's words take random ranks), then every fixture query is searched repeatedly. `--hot`
 * gives the fixture's words the top ranks instead: nearly every chunk then matches every query,
 * the worst case for ranking. Prints median and p95 of the search itself (SQL +
 * scoring) and of the whole HTTP route (auth, rate limit, credits, envelope; cache bypassed).
 * Not a timed test: the target (median under 10 ms) is checked by reading the output.
 * `--tenants N` indexes N other accounts' bases of the same size and words in the same file, in
 * turn with the searched base (each search's statistics are its base's alone; its cost is not).
 * With TEXTAI_DATABASE_URL set, the base lives in that PostgreSQL database instead (the knowledge
 * index the gateway picks there); the database should be a scratch one. BENCH_CPU_MS raises the
 * offline CPU budget (limits.offline_cpu_ms, default 50) to time searches that would exceed it
 * (the bench stops at the first answer that is not 200, such as a 413 over the budget).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { prepareDocuments } from "../src/knowledge/chunking";
import { createLogger } from "../src/log";
import { startServer } from "../src/server";
import { HELP_CENTER } from "../test/knowledge/corpus";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const TARGET_CHUNKS = arg("chunks", 10_000);
const RUNS = arg("runs", 5);
const HOT = process.argv.includes("--hot");
/** `--tenants N`: N other accounts' bases as large, of the same words, indexed in turn with the searched one */
const TENANTS = arg("tenants", 0);
/** `--dump FILE`: writes each query's top 5 (title, score) there, to compare SQLite with PostgreSQL */
const DUMP = process.argv.includes("--dump") ? process.argv[process.argv.indexOf("--dump") + 1] : undefined;

/** Deterministic PRNG so every run indexes the same corpus. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(42);

const corpusWords = [...new Set(HELP_CENTER.documents.flatMap((d) => d.content.toLowerCase().match(/[a-z]+/g) ?? []))];
const syllables = [
  "ka",
  "lo",
  "mi",
  "ren",
  "sto",
  "vu",
  "tar",
  "pel",
  "qui",
  "zan",
  "dor",
  "fen",
  "gla",
  "hu",
  "jo",
  "nix",
  "or",
  "pra",
  "sel",
  "tum",
];
const invented: string[] = [];
while (invented.length + corpusWords.length < 5000) {
  const n = 2 + Math.floor(rand() * 3);
  invented.push(Array.from({ length: n }, () => syllables[Math.floor(rand() * syllables.length)]).join(""));
}
const vocabulary = HOT ? [...corpusWords, ...invented] : shuffle([...corpusWords, ...invented]);

function shuffle<T>(xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
  }
  return xs;
}
/** Zipf-like pick: low ranks (common words) far more often, as in real text. */
const word = () => vocabulary[Math.floor(vocabulary.length * rand() ** 3)] as string;
const filler = () => {
  const sentences = Array.from({ length: 6 + Math.floor(rand() * 4) }, () => {
    const s = Array.from({ length: 8 + Math.floor(rand() * 8) }, word).join(" ");
    return `${s[0]?.toUpperCase()}${s.slice(1)}.`;
  });
  return sentences.join(" ");
};

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length - 1) * p))] as number;
};

const dir = mkdtempSync(join(tmpdir(), "textai-kb-bench-"));
const server = startServer(
  loadConfig(
    {
      TEXTAI_DB: join(dir, "bench.db"),
      PORT: "0",
      HOST: "127.0.0.1",
      TEXTAI_LOG_LEVEL: "error",
      ...(process.env.TEXTAI_DATABASE_URL ? { TEXTAI_DATABASE_URL: process.env.TEXTAI_DATABASE_URL } : {}),
    },
    (process.env.BENCH_CPU_MS ? `[limits]\noffline_cpu_ms = ${process.env.BENCH_CPU_MS}\n` : "") +
      "[plans.free.rate_limits]\nheavy = 1000000\nstandard = 1000000\n",
  ),
  { logger: createLogger("error") },
);
try {
  await server.deps.services.ready();
  const { knowledge, keys } = server.deps;
  const store = knowledge.bases;
  const key = await keys.createKey({ label: "bench", credits: 10_000_000 });
  const kb = await store.create(key.account_id, { name: "bench" });
  const t0 = performance.now();
  await store.addDocuments(
    key.account_id,
    kb.id,
    prepareDocuments(HELP_CENTER.documents.map(({ title, content, metadata }) => ({ title, content, metadata }))),
  );
  const others = [];
  for (let t = 0; t < TENANTS; t++) {
    const other = await keys.createKey({ label: `tenant ${t}`, credits: 0 });
    others.push({ account: other.account_id, kb: (await store.create(other.account_id, { name: "other" })).id });
  }
  let chunks = (await store.get(key.account_id, kb.id)).chunk_count;
  while (chunks < TARGET_CHUNKS) {
    const size = Math.min(500, TARGET_CHUNKS - chunks);
    const batch = () =>
      Array.from({ length: size }, (_, i) => ({
        title: `Filler ${chunks + i}`,
        content: filler(),
        metadata: { category: "filler" },
      }));
    for (const o of others) await store.addDocuments(o.account, o.kb, prepareDocuments(batch()));
    await store.addDocuments(key.account_id, kb.id, prepareDocuments(batch()));
    chunks = (await store.get(key.account_id, kb.id)).chunk_count;
  }
  const indexMs = performance.now() - t0;

  const queries = HELP_CENTER.queries.map((q) => q.query);
  // One unmeasured pass: the first searches pay for JIT compilation and a cold page cache.
  const tops: string[] = [];
  for (const query of queries) {
    const hits = await knowledge.search({ kbIds: [kb.id], query, topK: 5, minScore: 0 });
    tops.push(JSON.stringify([query, hits.map((h) => [h.title, h.content.slice(0, 40), h.score])]));
  }
  if (DUMP) await Bun.write(DUMP, `${tops.join("\n")}\n`);
  const direct: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    for (const query of queries) {
      const t = performance.now();
      await knowledge.search({ kbIds: [kb.id], query, topK: 5 });
      direct.push(performance.now() - t);
    }
  }
  const http: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    for (const query of queries) {
      const t = performance.now();
      const res = await fetch(`${server.url}/api/v1/knowledge-bases/${kb.id}/search`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key.key, "cache-control": "no-cache" },
        body: JSON.stringify({ query, top_k: 5 }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`search answered ${res.status}`);
      http.push(performance.now() - t);
    }
  }
  const f = (xs: number[]) => `median ${pct(xs, 0.5).toFixed(2)} ms, p95 ${pct(xs, 0.95).toFixed(2)} ms (${xs.length} searches)`;
  console.log(
    `knowledge search on ${process.env.TEXTAI_DATABASE_URL ? "PostgreSQL" : "SQLite"} over ${chunks} chunks${HOT ? " (--hot: fixture words most frequent)" : ""}${TENANTS ? `, ${TENANTS} other tenants' bases as large in the file` : ""} (indexed in ${(indexMs / 1000).toFixed(1)} s)`,
  );
  console.log(`  search (SQL + scoring): ${f(direct)}, max ${pct(direct, 1).toFixed(2)} ms`);
  console.log(`  HTTP route, no cache:   ${f(http)}`);
  console.log(`  target median < 10 ms: ${pct(direct, 0.5) < 10 ? "met" : "NOT met"}`);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
