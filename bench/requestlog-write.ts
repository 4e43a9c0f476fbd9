/**
 * The request log's write on SQLite, CPU per row, this tree against another checkout (issue 26):
 * each tree's own migrations and store, `--rows` rows written the way its recorder writes a flush
 * (the store's `writeBatch` rows an insert, else 500), alternating trees for `--rounds` rounds;
 * one account (the bench's case) or `--accounts N` interleaved.
 *
 *   bun bench/requestlog-write.ts --against DIR [--rows 100000] [--rounds 5] [--accounts 1]
 *
 * DIR: a checkout of another commit (bench/lib/tree.ts makes one; `git worktree add --detach DIR REF`
 * with node_modules linked does too).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { RequestRecord } from "../src/requestlog/interface";

const { values } = parseArgs({
  options: {
    against: { type: "string" },
    rows: { type: "string", default: "100000" },
    rounds: { type: "string", default: "5" },
    accounts: { type: "string", default: "1" },
  },
});
if (!values.against) {
  console.error("usage: bun bench/requestlog-write.ts --against DIR [--rows 100000] [--rounds 5] [--accounts 1]");
  process.exit(2);
}
const N = Number(values.rows);
const ACCOUNTS = Number(values.accounts);

interface Store {
  writeBatch?: number;
  insert(rows: RequestRecord[]): unknown;
}
interface Tree {
  name: string;
  open(path: string): { store: Store; close(): void };
}

async function treeOf(name: string, dir: string): Promise<Tree> {
  const db = await import(join(dir, "src/storage/db.ts"));
  const sqlite = await import(join(dir, "src/requestlog/sqlite.ts"));
  return {
    name,
    open(path) {
      const storage = db.openStorage(path);
      return { store: new sqlite.SqliteRequestLogStore(storage.sqlite) as Store, close: () => storage.sqlite.close() };
    },
  };
}

const T0 = Date.now();
const rows: RequestRecord[] = Array.from({ length: N }, (_, i) => ({
  requestId: `req_${Bun.randomUUIDv7()}`,
  time: T0 + i,
  accountId: `acc_${String(i % ACCOUNTS).padStart(20, "0")}`,
  keyId: `key_${String(i % ACCOUNTS).padStart(20, "0")}`,
  method: "POST",
  path: "/api/v1/sentiment-analysis",
  function: "sentiment-analysis",
  status: 200,
  errorCode: null,
  provider: "openai",
  model: "gpt-4o-mini",
  latencyMs: 1,
  credits: 1,
  cache: "HIT",
  promptTokens: null,
  completionTokens: null,
  idempotentReplay: false,
  guardrails: null,
}));
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const trees = [await treeOf("this tree", resolve(import.meta.dir, "..")), await treeOf(values.against, resolve(values.against))];
const work = mkdtempSync(join(tmpdir(), "textai-rlwrite-"));
const out = new Map<string, number[]>();
try {
  let k = 0;
  for (let round = 0; round < Number(values.rounds); round++)
    for (const tree of round % 2 ? [...trees].reverse() : trees) {
      const { store, close } = tree.open(join(work, `${k++}.db`));
      const batch = store.writeBatch ?? 500;
      const before = cpuUs();
      for (let i = 0; i < N; i += batch) store.insert(rows.slice(i, i + batch));
      const us = (cpuUs() - before) / N;
      close();
      out.set(tree.name, [...(out.get(tree.name) ?? []), us]);
    }
} finally {
  rmSync(work, { recursive: true, force: true });
}
for (const [name, xs] of out) {
  const median = [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  console.log(`${name}: ${median.toFixed(2)} µs of CPU a row (median; ${xs.map((x) => x.toFixed(2)).join(", ")})`);
}
