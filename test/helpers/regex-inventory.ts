/**
 * Every regular expression the request path applies to user text: the literals in the source
 * (found with the TypeScript parser) and those built with `new RegExp` while the modules load
 * (recorded by a RegExp proxy in a child process, so the test process keeps the real RegExp).
 *
 *   bun test/helpers/regex-inventory.ts --constructed   prints the constructed ones as JSON
 *
 * And every place in src/ that builds one (`new RegExp(...)`, `RegExp(...)`), with whether what it
 * is built from could come from a request (regexConstructions).
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

export interface RegexConstruction {
  where: string;
  code: string;
  /** null: built only from literals and module constants; else what could come from a request */
  dynamic: string | null;
  /** built inside a function (each time it runs), not as its module loads */
  inFunction: boolean;
}

const FUNCTION_LIKE = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
  ts.SyntaxKind.ClassDeclaration,
  ts.SyntaxKind.ClassExpression,
]);

/** Names bound at a module's top level by `const` (a constant the module computes once, as it loads) or imported. */
function moduleConstants(sf: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const st of sf.statements) {
    if (ts.isVariableStatement(st) && st.declarationList.flags & ts.NodeFlags.Const)
      for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) names.add(d.name.text);
    // an imported binding is the other module's export: a constant or a function, never a request's value
    if (ts.isImportDeclaration(st) && st.importClause) {
      const c = st.importClause;
      if (c.name) names.add(c.name.text);
      if (c.namedBindings && ts.isNamedImports(c.namedBindings)) for (const e of c.namedBindings.elements) names.add(e.name.text);
    }
  }
  return names;
}

/** Whether a parameter or variable of the enclosing functions named `name` is declared `: RegExp`. */
function typedRegExp(node: ts.Node, name: string): boolean {
  for (let n: ts.Node | undefined = node; n; n = n.parent) {
    if (!FUNCTION_LIKE.has(n.kind)) continue;
    const params = (n as ts.SignatureDeclaration).parameters ?? [];
    for (const p of params) if (ts.isIdentifier(p.name) && p.name.text === name && p.type?.getText() === "RegExp") return true;
  }
  return false;
}

/**
 * Why `e` could hold a request's value, or null when it cannot: string, template and regex
 * literals, module constants, templates and `+` of those, and `x.source` / `x.flags` of a
 * constant or a parameter typed RegExp (a RegExp's source was itself checked where it was built).
 */
function dynamicPart(e: ts.Expression, consts: Set<string>): string | null {
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) return dynamicPart(e.expression, consts);
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) || ts.isRegularExpressionLiteral(e)) return null;
  if (ts.isTemplateExpression(e)) {
    for (const span of e.templateSpans) {
      const d = dynamicPart(span.expression, consts);
      if (d) return d;
    }
    return null;
  }
  if (ts.isTaggedTemplateExpression(e) && e.tag.getText() === "String.raw") {
    return ts.isNoSubstitutionTemplateLiteral(e.template) ? null : dynamicPart(e.template, consts);
  }
  if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken)
    return dynamicPart(e.left, consts) ?? dynamicPart(e.right, consts);
  if (ts.isIdentifier(e)) return consts.has(e.text) ? null : e.text;
  if (
    ts.isPropertyAccessExpression(e) &&
    (e.name.text === "source" || e.name.text === "flags") &&
    ts.isIdentifier(e.expression)
  ) {
    const id = e.expression.text;
    return consts.has(id) || typedRegExp(e, id) ? null : e.getText();
  }
  return e.getText();
}

/**
 * Every `new RegExp(...)` and `RegExp(...)` in src/. One that runs as its module loads (outside
 * any function) cannot see a request; one inside a function must be built from literals and
 * module constants only: a caller's words are matched by scanning (src/offline-engine/phrase-scan.ts).
 */
export async function regexConstructions(): Promise<RegexConstruction[]> {
  const found: RegexConstruction[] = [];
  for await (const file of new Glob("src/**/*.ts").scan(ROOT)) {
    const text = await Bun.file(ROOT + file).text();
    if (!text.includes("RegExp(")) continue;
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const consts = moduleConstants(sf);
    const visit = (n: ts.Node): void => {
      if ((ts.isNewExpression(n) || ts.isCallExpression(n)) && ts.isIdentifier(n.expression) && n.expression.text === "RegExp") {
        let inFunction = false;
        for (let p = n.parent; p && !inFunction; p = p.parent) inFunction = FUNCTION_LIKE.has(p.kind);
        let dynamic: string | null = null;
        if (inFunction) for (const a of n.arguments ?? []) dynamic ??= dynamicPart(a, consts);
        const line = sf.getLineAndCharacterOfPosition(n.getStart()).line + 1;
        found.push({ where: `${file}:${line}`, code: n.getText().slice(0, 160), dynamic, inFunction });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
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
  await import("../../src/functions/chatbot-chat");
  await import("../../src/knowledge/search-sqlite");
  await import("../../src/http/body");
  await import("../../src/offline-engine/pii/index");
  await import("../../src/offline-engine/grammar");
  globalThis.RegExp = Real;
  process.stdout.write(JSON.stringify([...seen.values()].filter((r) => r.where.startsWith("src/"))));
}
