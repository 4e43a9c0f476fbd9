import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { loadConfig } from "../../src/config";
import { buildProviders } from "../../src/providers/index";
import { vendors } from "../../src/providers/vendors";

/**
 * Issue 37: providers are data. What a vendor type does differently lives in its folder,
 * `src/providers/vendors/<type>/` (its descriptor, vendors/descriptor.ts), and nothing outside that
 * folder branches on a vendor. To branch on one, code has to name it, and there are two ways:
 *  - by its type name ("openai", "groq", ... every type of the registry, so a new vendor is covered
 *    the day it is added): caught in every position that compares, whatever the construct:
 *    `==`/`===`/`!=`/`!==`, a `case` label, the argument or receiver of `includes`, `has`,
 *    `indexOf`, `lastIndexOf`, `startsWith`, `endsWith`, the left of `in`, an element of an array
 *    literal (`[...].includes(t)`, `new Set([...])`), an object literal keyed by type names only,
 *    two or more (a table by type), and a constant holding a type name used in any of those positions;
 *  - by importing its descriptor or adapter: only the registry (vendors/index.ts) and vendor
 *    folders may import a vendor folder.
 * Reading a descriptor through the registry (`vendorOf(p.type)?.catalog`) is the way, and is not a branch.
 * TypeScript's parser reads src/, so comments and strings in other positions do not count.
 */
const SRC = resolve(import.meta.dir, "../../src");
const VENDORS_DIR = "providers/vendors/";

/**
 * Type names outside their folder that are not a branch on a vendor, each with its reason, by file
 * and name with the number of uses allowed. config.ts is below providers/ and cannot read the
 * registry: it adds the provider *named* local that every gateway has (the local descriptor's
 * `always`), checked against the registry below.
 */
const ALLOWED: Record<string, Record<string, number>> = {
  "config.ts": { local: 1 },
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const COMPARING_CALLS = new Set(["includes", "has", "indexOf", "lastIndexOf", "startsWith", "endsWith"]);
const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

interface Hit {
  file: string;
  line: number;
  type: string;
  how: string;
}

/** The vendor type names a file's comparing positions hold, with where and how (not yet filtered by folder). */
export function vendorNamesCompared(
  file: string,
  source: string,
  types: ReadonlySet<string>,
  constants: Map<string, string>,
): Hit[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const hits: Hit[] = [];
  const nameOf = (e: ts.Node | undefined): string | undefined => {
    if (!e) return undefined;
    while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e)) e = e.expression;
    if (ts.isStringLiteralLike(e) && types.has(e.text)) return e.text;
    if (ts.isIdentifier(e)) return constants.get(e.text);
    return undefined;
  };
  const hit = (node: ts.Node, type: string, how: string) =>
    hits.push({ file, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, type, how });
  const visit = (n: ts.Node) => {
    if (ts.isBinaryExpression(n)) {
      if (EQUALITY.has(n.operatorToken.kind)) {
        for (const side of [n.left, n.right]) {
          const t = nameOf(side);
          if (t) hit(side, t, "compared");
        }
      } else if (n.operatorToken.kind === ts.SyntaxKind.InKeyword) {
        const t = nameOf(n.left);
        if (t) hit(n.left, t, "`in`");
      }
    } else if (ts.isCaseClause(n)) {
      const t = nameOf(n.expression);
      if (t) hit(n.expression, t, "case label");
    } else if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
      if (COMPARING_CALLS.has(n.expression.name.text)) {
        for (const e of [n.expression.expression, ...n.arguments]) {
          const t = nameOf(e);
          if (t) hit(e, t, `${n.expression.name.text}()`);
        }
      }
    } else if (ts.isArrayLiteralExpression(n)) {
      for (const e of n.elements) if (ts.isStringLiteralLike(e) && types.has(e.text)) hit(e, e.text, "in a list");
    } else if (ts.isObjectLiteralExpression(n)) {
      const keyed = n.properties.flatMap((p) => {
        const name = p.name && (ts.isIdentifier(p.name) || ts.isStringLiteralLike(p.name)) ? p.name.text : undefined;
        return name && types.has(name) ? [{ p, name }] : [];
      });
      // keyed by type names only (a function's `local` and `example` beside its other fields are not a table)
      if (keyed.length >= 2 && keyed.length === n.properties.length)
        for (const { p, name } of keyed) hit(p, name, "a table by type");
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return hits;
}

/** Constants (`const X = "groq"`) across src/ that hold a vendor type name. */
function typeConstants(files: { file: string; source: string }[], types: ReadonlySet<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const { file, source } of files) {
    const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
    const visit = (n: ts.Node) => {
      if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer) {
        let init: ts.Expression = n.initializer;
        while (ts.isAsExpression(init) || ts.isParenthesizedExpression(init)) init = init.expression;
        if (ts.isStringLiteralLike(init) && types.has(init.text)) out.set(n.name.text, init.text);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}

/** The folder a type's facts belong in. */
const folderOf = (type: string) => `${VENDORS_DIR}${type}/`;

/** Every comparison of a vendor type name outside its folder, beyond ALLOWED, as `file:line "type" how`. */
export function vendorBranches(srcDir: string, typeNames: readonly string[]): string[] {
  const types = new Set(typeNames);
  const files = sources(srcDir).map((f) => ({ file: relative(srcDir, f), source: readFileSync(f, "utf8") }));
  const constants = typeConstants(files, types);
  const out: string[] = [];
  for (const { file, source } of files) {
    const left = { ...(ALLOWED[file] ?? {}) };
    for (const h of vendorNamesCompared(file, source, types, constants)) {
      if (file.startsWith(folderOf(h.type))) continue;
      if ((left[h.type] ?? 0) > 0) {
        left[h.type] = (left[h.type] ?? 0) - 1;
        continue;
      }
      out.push(`${h.file}:${h.line} "${h.type}" ${h.how}`);
    }
  }
  return out;
}

/** Modules outside providers/vendors/ that import a vendor's folder (only the registry may). */
function vendorFolderImports(srcDir: string): string[] {
  const out: string[] = [];
  for (const f of sources(srcDir)) {
    const file = relative(srcDir, f);
    if (file.startsWith(VENDORS_DIR)) continue;
    for (const { fileName } of ts.preProcessFile(readFileSync(f, "utf8"), true, true).importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const target = relative(srcDir, resolve(dirname(f), fileName));
      const inside = target.startsWith(VENDORS_DIR) ? target.slice(VENDORS_DIR.length) : null;
      // the registry (vendors or vendors/index) and the descriptor's type are for everyone
      if (inside?.includes("/")) out.push(`${file} imports ${fileName}`);
    }
  }
  return out;
}

const TYPES = vendors().map((v) => v.type);

describe("providers are data: no vendor branch outside its folder", () => {
  test("every registered type has its folder, whose index.ts is its descriptor", async () => {
    expect(new Set(TYPES).size).toBe(TYPES.length);
    for (const v of vendors()) {
      const index = join(SRC, folderOf(v.type), "index.ts");
      expect(existsSync(index)).toBe(true);
      const mod = (await import(index)) as Record<string, unknown>;
      expect(Object.values(mod)).toContain(v);
    }
  });

  // a scan of every source file: under a second alone, past bun's 5 s default on a loaded CI machine
  test("no comparison of a vendor type name outside that vendor's folder", () => {
    expect(vendorBranches(SRC, TYPES)).toEqual([]);
  }, 30_000);

  test("no module outside providers/vendors/ imports a vendor's folder (it asks the registry)", () => {
    expect(vendorFolderImports(SRC)).toEqual([]);
  });

  test("the scan catches each way of writing a branch", () => {
    const types = new Set(["acme", "zeta"]);
    const source = [
      'if (p.type === "acme") x();',
      'if ("zeta" !== t) x();',
      'switch (t) { case "acme": break; }',
      'const SELF = new Set(["acme"]);',
      'if (["zeta", "other"].includes(t)) x();',
      'if (t.startsWith("acme")) x();',
      'const ACME = "acme";',
      "if (t === ACME) x();",
      'if ("acme" in table) x();',
      "const byType = { acme: 1, zeta: 2 };",
      'const fine = { acme: 1, zeta: 2, prompt: 3 }; const name = "zeta"; call("acme"); // "acme" === t',
    ].join("\n");
    const hits = vendorNamesCompared("x.ts", source, types, new Map([["ACME", "acme"]])).map((h) => `${h.line} ${h.how}`);
    expect(hits).toEqual([
      "1 compared",
      "2 compared",
      "3 case label",
      "4 in a list",
      "5 in a list",
      "6 startsWith()",
      "8 compared",
      "9 `in`",
      "10 a table by type",
      "10 a table by type",
    ]);
  });
});

describe("docs/providers.md agrees with the registry", () => {
  test("its table has a row for every type, naming its default model", () => {
    const doc = readFileSync(resolve(SRC, "../docs/providers.md"), "utf8");
    for (const v of vendors()) {
      const row = doc.split("\n").find((l) => l.startsWith(`| \`${v.type}\` |`));
      expect(row ?? `no row for ${v.type}`).toContain(`\`${v.models.function}\``);
    }
  });
});

describe("what config.ts knows of vendors agrees with the registry", () => {
  test("the providers every gateway has are the `always` types, named after them", () => {
    const always = vendors().filter((v) => v.always);
    expect(loadConfig({}).providers.map((p) => [p.name, p.type])).toEqual(always.map((v) => [v.type, v.type]));
    expect([...buildProviders({ ...loadConfig({}), providers: [] }).keys()]).toEqual(always.map((v) => v.type));
  });

  test("each type's environment variables enable a provider of that type named after it", () => {
    for (const v of vendors()) {
      if (!v.env) continue;
      const c = loadConfig({ [v.env.apiKey]: "k", [v.env.baseUrl]: "http://127.0.0.1:9/v1" });
      expect(c.providers.find((p) => p.name === v.type)).toMatchObject({
        type: v.type,
        api_key: "k",
        base_url: "http://127.0.0.1:9/v1",
      });
    }
    // all set at once: exactly those providers, besides the `always` ones
    const env = Object.fromEntries(vendors().flatMap((v) => (v.env ? [[v.env.apiKey, "k"]] : [])));
    const enabled = loadConfig(env).providers.filter((p) => !vendors().some((v) => v.always && v.type === p.type));
    expect(enabled.map((p) => p.type)).toEqual(vendors().flatMap((v) => (v.env ? [v.type] : [])));
  });

  test("an entry of an unknown type, or without the base URL its type requires, is refused at start", () => {
    const base = loadConfig({});
    const bad = (entry: Record<string, unknown>) => () =>
      buildProviders({ ...base, providers: [entry as unknown as (typeof base.providers)[number]] });
    expect(bad({ name: "x", type: "nope" })).toThrow(/providers\[0\]\.type: unknown provider type "nope" \(one of /);
    for (const v of vendors().filter((d) => d.baseUrl.required))
      expect(bad({ name: "x", type: v.type })).toThrow(`providers[0].base_url: required for type ${v.type}`);
  });
});
