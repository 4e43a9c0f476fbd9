import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Glob } from "bun";
import ts from "typescript";

/**
 * Issue 37: a function a reader can hold. No function of src/ (a declaration, an expression, an arrow,
 * a method, an accessor, a constructor; the callbacks of an Elysia route chain included) is over
 * MAX_LINES lines, counted from its first line to its last. An inner function counts on its own, and
 * its outer one counts it too: a long route chain is split into named plugins or groups, not into
 * anonymous callbacks inside one long function.
 */
const ROOT = resolve(import.meta.dir, "../..");
const SRC = join(ROOT, "src");
const MAX_LINES = 120;

interface Long {
  /** `path:line name (n lines)` */
  where: string;
  lines: number;
}

/** The name a reader finds a function by: its own, or the variable, property or call it is given to. */
function nameOf(node: ts.SignatureDeclaration): string {
  if (node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText();
  }
  if (ts.isCallExpression(parent)) {
    const callee = parent.expression;
    const called = ts.isPropertyAccessExpression(callee) ? callee.name.getText() : callee.getText();
    const first = parent.arguments[0];
    const label = first && ts.isStringLiteralLike(first) ? ` ${first.text}` : "";
    return `(callback of ${called}${label})`;
  }
  return "(anonymous)";
}

/** Every function with a body over `max` lines in one source, as `file:line name (n lines)`. */
function longFunctions(file: string, source: string, max = MAX_LINES): Long[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: Long[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) out.push({ where: `${file}:${first + 1} ${nameOf(node)} (${lines} lines)`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe("the measure", () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  x += ${i};`).join("\n");

  test("finds a long declaration, method, arrow and route callback, each by its name and first line", () => {
    const source = [
      `function declared() {\n${body(4)}\n}`,
      `class C {\n  method() {\n${body(4)}\n  }\n}`,
      `const arrow = () => {\n${body(4)}\n};`,
      `app.get("/x", ({ request }) => {\n${body(4)}\n});`,
      `const short = () => 1;`,
    ].join("\n");
    expect(longFunctions("a.ts", source, 5).map((l) => l.where)).toEqual([
      "a.ts:1 declared (6 lines)",
      "a.ts:8 method (6 lines)",
      "a.ts:15 arrow (6 lines)",
      "a.ts:21 (callback of get /x) (6 lines)",
    ]);
  });

  test("counts an inner function on its own and inside its outer one", () => {
    const source = `export function outer() {\n  const inner = function () {\n${body(6)}\n  };\n  return inner;\n}`;
    expect(longFunctions("b.ts", source, 7).map((l) => l.where)).toEqual(["b.ts:1 outer (11 lines)", "b.ts:2 inner (8 lines)"]);
  });
});

test(`no function in src/ is over ${MAX_LINES} lines`, () => {
  const files = [...new Glob("**/*.ts").scanSync(SRC)].sort();
  expect(files.length).toBeGreaterThan(100);
  const long = files.flatMap((f) => longFunctions(`src/${f}`, readFileSync(join(SRC, f), "utf8")));
  expect(long.sort((a, b) => b.lines - a.lines).map((l) => l.where)).toEqual([]);
});
