import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

// .ci/run runs the files of test/cluster-second-pass.txt again behind PgBouncer and on a Redis
// Cluster; the others of test/cluster are listed there as first-pass-only (commented), so that a
// new file of test/cluster is a choice, not forgotten.
test("every file of test/cluster is in the second pass's list, run again or marked first pass only", () => {
  const text = readFileSync(join(ROOT, "test/cluster-second-pass.txt"), "utf8");
  const named = new Set(
    text
      .split("\n")
      .map((l) => l.replace(/^#\s*/, "").trim())
      .filter((l) => l.endsWith(".test.ts")),
  );
  const files = readdirSync(join(ROOT, "test/cluster"))
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/cluster/${f}`);
  expect(files.filter((f) => !named.has(f))).toEqual([]);
  expect([...named].filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  expect(readFileSync(join(ROOT, ".ci/run"), "utf8")).toContain("test/cluster-second-pass.txt");
});
