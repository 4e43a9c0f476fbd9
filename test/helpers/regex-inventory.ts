/**
 * Every regular expression the request path applies to user text: the literals in the source
 * (found with the TypeScript parser) and those built with `new RegExp` while the modules load
 * (recorded by a RegExp proxy in a child process, so the test process keeps the real RegExp).
 *
 *   bun test/helpers/regex-inventory.ts --constructed   prints the constructed ones as JSON
 */
import { Glob } from "bun";
import * as ts from "typescript";

export const AUDITED_DIRS = ["src/offline-engine", "src/functions", "src/knowledge", "src/http"];

export interface FoundRegex {
  where: string;
  source: string;
  flags: string;
}

const ROOT = new URL("../../", import.meta.url).pathname;

export async function regexLiterals(): Promise<FoundRegex[]> {
  const found: FoundRegex[] = [];
  for (const dir of AUDITED_DIRS) {
    for await (const file of new Glob(`${dir}/**/*.ts`).scan(ROOT)) {
      const sf = ts.createSourceFile(file, await Bun.file(ROOT + file).text(), ts.ScriptTarget.Latest, true);
      const visit = (n: ts.Node): void => {
        if (n.kind === ts.SyntaxKind.RegularExpressionLiteral) {
          const literal = n.getText(sf);
          const end = literal.lastIndexOf("/");
          const line = sf.getLineAndCharacterOfPosition(n.getStart()).line + 1;
          found.push({ where: `${file}:${line}`, source: literal.slice(1, end), flags: literal.slice(end + 1) });
        }
        ts.forEachChild(n, visit);
      };
      visit(sf);
    }
  }
  return found;
}

/** Regexes built with `new RegExp(...)` when the audited modules load. */
export async function constructedRegexes(): Promise<FoundRegex[]> {
  const proc = Bun.spawn(["bun", new URL(import.meta.url).pathname, "--constructed"], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("regex inventory child failed");
  return JSON.parse(out) as FoundRegex[];
}

if (import.meta.main && process.argv.includes("--constructed")) {
  const seen = new Map<string, FoundRegex>();
  const Real = RegExp;
  globalThis.RegExp = new Proxy(Real, {
    construct(target, args: [string | RegExp, string?]) {
      const re = new target(...args);
      const frames = (new Error().stack ?? "").split("\n");
      const ours = frames.find((l) => AUDITED_DIRS.some((d) => l.includes(`${ROOT}${d}/`))) ?? "";
      const at = /\/(src\/[^:)]+:\d+)/.exec(ours)?.[1] ?? "elsewhere";
      seen.set(`/${re.source}/${re.flags}`, { where: at, source: re.source, flags: re.flags });
      return re;
    },
  });
  await import("../../src/functions/registry");
  await import("../../src/knowledge/functions");
  await import("../../src/knowledge/search-sqlite");
  await import("../../src/http/body");
  await import("../../src/offline-engine/pii/index");
  await import("../../src/offline-engine/grammar");
  globalThis.RegExp = Real;
  process.stdout.write(JSON.stringify([...seen.values()].filter((r) => r.where.startsWith("src/"))));
}
