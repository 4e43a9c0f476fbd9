/**
 * `bun run chaos`: the reliability experiments of bench/chaos/, one after the other, each against
 * real gateway processes on loopback (bounded: the whole run stays under five minutes). Each module
 * exports `run(): Promise<{ name, line, ok }>`; this prints one line of figures per experiment,
 * writes a transcript to bench/results/<date>-chaos.txt and exits non-zero if any is not ok.
 *
 *   bun bench/chaos.ts [--only kill9,drain] [--no-write]
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface ChaosResult {
  name: string;
  line: string;
  ok: boolean;
}

const dir = join(import.meta.dir, "chaos");
const only = (() => {
  const i = process.argv.indexOf("--only");
  return i >= 0 ? (process.argv[i + 1] ?? "").split(",").filter(Boolean) : [];
})();
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".ts"))
  .sort()
  .filter((f) => only.length === 0 || only.includes(f.replace(/\.ts$/, "")));

const started = Date.now();
const lines: string[] = [`# bun run chaos, ${new Date().toISOString()}, bun ${Bun.version}`];
const say = (l: string) => {
  console.log(l);
  lines.push(l);
};
let failed = 0;
for (const f of files) {
  const t = performance.now();
  let r: ChaosResult;
  try {
    const mod = (await import(join(dir, f))) as { run: () => Promise<ChaosResult> };
    r = await mod.run();
  } catch (err) {
    r = { name: f.replace(/\.ts$/, ""), line: `crashed: ${(err as Error).stack ?? err}`, ok: false };
  }
  if (!r.ok) failed++;
  say(`${r.ok ? "PASS" : "FAIL"}  ${r.name.padEnd(12)} ${r.line}  (${((performance.now() - t) / 1000).toFixed(1)} s)`);
}
say(`${files.length - failed}/${files.length} experiments passed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
if (!process.argv.includes("--no-write")) {
  const out = join(import.meta.dir, "results");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `${new Date().toISOString().slice(0, 10)}-chaos.txt`), `${lines.join("\n")}\n`);
}
process.exit(failed ? 1 : 0);
