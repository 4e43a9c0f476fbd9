/**
 * The knowledge route tests (test/knowledge), run again on PostgreSQL: a child `bun test` with
 * TEXTAI_TEST_KNOWLEDGE=postgres, each gateway on a fresh database. Needs 127.0.0.1:5432 (see
 * test/helpers/shared-servers.ts); skips loudly without it, fails under CI.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { sharedServersUp } from "../helpers/shared-servers";

const shared = await sharedServersUp("the knowledge route tests on PostgreSQL");
const FILES = ["knowledge-bases", "search", "tenant-statistics", "hybrid", "faq", "chatbots"].map(
  (f) => `test/knowledge/${f}.test.ts`,
);

describe.skipIf(!shared)("knowledge routes on PostgreSQL", () => {
  test(`${FILES.length} files of test/knowledge pass with TEXTAI_TEST_KNOWLEDGE=postgres`, async () => {
    const run = Bun.spawn([process.execPath, "test", ...FILES], {
      cwd: join(import.meta.dir, "../.."),
      env: { ...process.env, TEXTAI_TEST_KNOWLEDGE: "postgres" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
    const log = `${out}${err}`;
    const summary = log.match(/^\s*(\d+) pass\s*$/m);
    expect(
      code,
      log
        .split("\n")
        .filter((l) => /\(fail\)|error:|Expected|Received/.test(l))
        .join("\n"),
    ).toBe(0);
    expect(Number(summary?.[1] ?? 0)).toBeGreaterThan(30);
    expect(log).toMatch(/^\s*0 fail\s*$/m);
  }, 180_000);
});
