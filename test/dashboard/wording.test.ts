/**
 * The dashboard says "1 account", "3 members", never "account(s)": every count and its noun goes
 * through html.ts `counted` (2026-12-06: "credit(s)", "account(s)" and "member(s)" were on its pages).
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { counted } from "../../src/http/routes/dashboard/html";

const DIR = join(import.meta.dir, "../../src/http/routes/dashboard");

test("no page text writes a plural as word(s)", () => {
  const found: string[] = [];
  for (const f of readdirSync(DIR, { recursive: true }) as string[]) {
    if (!/\.(ts|js)$/.test(f)) continue;
    readFileSync(join(DIR, f), "utf8")
      .split("\n")
      .forEach((line, i) => {
        // a word then "(s)" inside a string or template (code like `(s) =>` has no letter before it)
        if (/[a-z]\(s\)(?=[\s`"'.,:])/i.test(line) && !/^\s*(\/\/|\/?\*)/.test(line)) found.push(`${f}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(found).toEqual([]);
});

test("counted: one and many", () => {
  expect([counted(1, "account"), counted(3, "member"), counted(0, "credit"), counted(2, "entry", "entries")]).toEqual([
    "1 account",
    "3 members",
    "0 credits",
    "2 entries",
  ]);
});
