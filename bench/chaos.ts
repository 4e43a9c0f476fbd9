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
const names = readdirSync(dir)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => f.replace(/\.ts$/, ""))
  .sort();

const USAGE = `Usage: bun run chaos [options]   (bun bench/chaos.ts [options])

Runs the reliability experiments of bench/chaos/ against real gateway processes and writes
bench/results/<date>-chaos.txt; exits 1 if any fails.

Options:
  --only LIST   run only these, comma-separated: ${names.join(", ")}
  --no-write    print the lines, write no transcript
  -h, --help    print this and exit
`;

/** The command line, strictly: --help and mistakes answer before any experiment starts. */
function parseArgs(argv: string[]): { only: string[]; write: boolean } {
  const refuse = (why: string): never => {
    process.stderr.write(`chaos: ${why}\n\n${USAGE}`);
    process.exit(2);
  };
  let only: string[] = [];
  let write = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "-h" || arg === "--help") {
      process.stdout.write(USAGE);
      process.exit(0);
    } else if (arg === "--no-write") write = false;
    else if (arg === "--only" || arg.startsWith("--only=")) {
      const raw = arg === "--only" ? argv[++i] : arg.slice("--only=".length);
      const list = (raw ?? "").split(",").filter(Boolean);
      const bad = list.filter((n) => !names.includes(n));
      if (!list.length || bad.length) refuse(`--only ${raw ?? ""}: unknown experiment ${bad.join(", ") || '""'}`);
      only = list;
    } else refuse(`unknown option "${arg}"`);
  }
  return { only, write };
}

const args = parseArgs(process.argv.slice(2));
const files = names.filter((n) => args.only.length === 0 || args.only.includes(n)).map((n) => `${n}.ts`);

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
if (args.write) {
  const out = join(import.meta.dir, "results");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `${new Date().toISOString().slice(0, 10)}-chaos.txt`), `${lines.join("\n")}\n`);
}
process.exit(failed ? 1 : 0);
