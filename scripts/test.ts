/**
 * The whole test suite (`npx -y bun@1.4.5 run test`, what `.ci/run` runs): every test file, in two
 * runs. First every file but five, one after another as `bun test` runs them; then those five side by
 * side (`--parallel=2`, two processes taking them in turn), about 80 s instead of 160:
 * - test/cluster/model-groups-nodes.test.ts waits out a minute at low CPU (rpm = 60 held in every
 *   60 s window, which only a minute of offered load can show);
 * - test/local/linear-time.test.ts keeps one core busy for a minute and measures its own thread's
 *   CPU time, which another process does not move;
 * - test/dashboard/guessing.test.ts and test/core/idempotency-keep-fails.test.ts mostly wait (the
 *   sign-in backoffs and wrong-token delays, a record's lease) at low CPU: about 30 s of waiting
 *   taken out of the first run (its one timed check, best of three under 250 ms, holds beside a
 *   busy core);
 * - test/requestlog/early-refusals.test.ts mostly waits too (bodies that never come, a body timeout).
 * With arguments (`run test test/core`) it is plain `bun test` with them. Exits non-zero if either run fails.
 */
const SIDE_BY_SIDE = [
  "test/cluster/model-groups-nodes.test.ts",
  "test/local/linear-time.test.ts",
  "test/dashboard/guessing.test.ts",
  "test/core/idempotency-keep-fails.test.ts",
  "test/requestlog/early-refusals.test.ts",
];

function run(args: string[]): number {
  return Bun.spawnSync([process.execPath, "test", ...args], { stdio: ["inherit", "inherit", "inherit"] }).exitCode ?? 1;
}

const given = process.argv.slice(2);
if (given.length > 0) process.exit(run(given));
const first = run(SIDE_BY_SIDE.map((f) => `--path-ignore-patterns=${f}`));
console.log(`\n=== side by side: ${SIDE_BY_SIDE.join(" ")} ===`);
const second = run(["--parallel=2", ...SIDE_BY_SIDE]);
process.exit(first !== 0 ? first : second);
