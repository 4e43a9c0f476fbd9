/**
 * Writes test/fixtures/sdk-types/anthropic-messages.json: the request types of the Anthropic
 * Messages API as the installed `@anthropic-ai/sdk` declares them (`MessageCreateParams`,
 * `MessageCountTokensParams`), turned into JSON-Schema-like components by the TypeScript
 * compiler's type checker, with the SDK's name and version. test/guardrails/sdk-walk.test.ts
 * walks them (and fails when the installed SDK's version is not the fixture's).
 *
 *   npx -y bun@1.4.5 scripts/sdk-request-schemas.ts          # rewrite the fixture
 *   npx -y bun@1.4.5 scripts/sdk-request-schemas.ts --check  # exit 1 when it is out of date
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import ts from "typescript";

type Schema = Record<string, unknown>;

const SDK = "@anthropic-ai/sdk";
const TYPES_FILE = "resources/messages/messages.d.ts";
const ROOTS = { messages: "MessageCreateParams", count_tokens: "MessageCountTokensParams" } as const;
const OUT = join(import.meta.dir, "../test/fixtures/sdk-types/anthropic-messages.json");

const require = createRequire(import.meta.url);
const sdkDir = dirname(require.resolve(`${SDK}/package.json`));
const version = (JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8")) as { version: string }).version;
const file = join(sdkDir, TYPES_FILE);

const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true });
const checker = program.getTypeChecker();
const source = program.getSourceFile(file);
const moduleSymbol = source && checker.getSymbolAtLocation(source);
if (!moduleSymbol) throw new Error(`cannot read ${file}`);
const exported = new Map(checker.getExportsOfModule(moduleSymbol).map((s) => [s.name, s]));

const schemas: Record<string, Schema> = {};
/** the name each named type got (a type is named by its interface or alias; clashes get a suffix) */
const names = new Map<ts.Type, string>();

function nameOf(t: ts.Type): string | null {
  const symbol = t.aliasSymbol ?? (t.flags & ts.TypeFlags.Object ? t.getSymbol() : undefined);
  if (!symbol || symbol.name.startsWith("__")) return null;
  // a generic's instance (Array<...>, Record<...>) is not a schema of its own
  if (!t.aliasSymbol && (t as ts.TypeReference).typeArguments?.length) return null;
  if (t.aliasSymbol && t.aliasTypeArguments?.length) return null;
  return symbol.name;
}

/** `t` as a schema: a `$ref` to a named component (written once), or the schema itself. */
function schemaOf(t: ts.Type): Schema {
  const name = nameOf(t);
  if (!name) return shape(t);
  let id = names.get(t);
  if (!id) {
    id = name;
    for (let n = 2; schemas[id] !== undefined; n++) id = `${name}_${n}`;
    names.set(t, id);
    schemas[id] = {};
    schemas[id] = shape(t);
  }
  return { $ref: `#/components/schemas/${id}` };
}

function shape(t: ts.Type): Schema {
  const f = t.flags;
  if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
  if (f & ts.TypeFlags.StringLiteral) return { const: (t as ts.StringLiteralType).value };
  if (f & ts.TypeFlags.NumberLiteral) return { const: (t as ts.NumberLiteralType).value };
  if (f & ts.TypeFlags.BooleanLiteral) return { const: checker.typeToString(t) === "true" };
  if (f & ts.TypeFlags.String) return { type: "string" };
  if (f & ts.TypeFlags.Number) return { type: "number" };
  if (f & ts.TypeFlags.Boolean) return { type: "boolean" };
  if (f & ts.TypeFlags.Null) return { type: "null" };
  if (f & ts.TypeFlags.Union) return union((t as ts.UnionType).types);
  // `string & {}` (a model's name beyond the listed ones) is a string
  if (f & ts.TypeFlags.Intersection) {
    const parts = (t as ts.IntersectionType).types;
    if (parts.some((p) => p.flags & ts.TypeFlags.String)) return { type: "string" };
    return { allOf: parts.map(schemaOf) };
  }
  if (checker.isArrayType(t) || checker.isTupleType(t)) {
    const args = checker.getTypeArguments(t as ts.TypeReference);
    return { type: "array", items: args.length === 1 ? schemaOf(args[0] as ts.Type) : union(args) };
  }
  if (f & ts.TypeFlags.Object) return object(t);
  throw new Error(`no schema for ${checker.typeToString(t)}`);
}

function union(members: readonly ts.Type[]): Schema {
  const present = members.filter((m) => !(m.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)));
  // true | false is boolean
  const booleans = present.filter((m) => m.flags & ts.TypeFlags.BooleanLiteral);
  const rest = present.filter((m) => !(m.flags & ts.TypeFlags.BooleanLiteral));
  const literals = rest.filter((m) => m.flags & ts.TypeFlags.StringLiteral);
  const others = rest.filter((m) => !(m.flags & ts.TypeFlags.StringLiteral));
  const out: Schema[] = [];
  if (literals.length > 0)
    out.push(
      literals.length === 1
        ? shape(literals[0] as ts.Type)
        : { type: "string", enum: literals.map((l) => (l as ts.StringLiteralType).value) },
    );
  if (booleans.length === 2) out.push({ type: "boolean" });
  else for (const b of booleans) out.push(shape(b));
  for (const o of others) out.push(schemaOf(o));
  // a string alongside its listed values (a model's name): the string
  if (out.some((s) => s.type === "string" && !s.enum) && literals.length > 0) out.splice(0, 1);
  return out.length === 1 ? (out[0] as Schema) : { anyOf: out };
}

function object(t: ts.Type): Schema {
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const p of checker.getPropertiesOfType(t)) {
    const decl = p.valueDeclaration ?? p.declarations?.[0];
    const pt = decl ? checker.getTypeOfSymbolAtLocation(p, decl) : checker.getTypeOfSymbol(p);
    properties[p.name] = schemaOf(pt);
    if (!(p.flags & ts.SymbolFlags.Optional)) required.push(p.name);
  }
  const out: Schema = { type: "object", properties };
  if (required.length > 0) out.required = required;
  const index = checker.getIndexInfosOfType(t)[0];
  if (index) out.additionalProperties = schemaOf(index.type);
  return out;
}

const roots: Record<string, Schema> = {};
for (const [api, name] of Object.entries(ROOTS)) {
  const symbol = exported.get(name);
  if (!symbol) throw new Error(`${SDK} ${version} exports no ${name}`);
  roots[api] = schemaOf(checker.getDeclaredTypeOfSymbol(symbol));
}

const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
const fixture = {
  sdk: SDK,
  version,
  source: `${SDK}/${TYPES_FILE}`,
  generator: "scripts/sdk-request-schemas.ts",
  roots,
  components: { schemas: sorted },
};
const text = `${JSON.stringify(fixture, null, 1)}\n`;
if (process.argv.includes("--check")) {
  const current = readFileSync(OUT, "utf8");
  if (current !== text) {
    console.error(`${OUT} is not what ${SDK} ${version} declares: run scripts/sdk-request-schemas.ts`);
    process.exit(1);
  }
} else {
  writeFileSync(OUT, text);
  console.log(`${OUT}: ${Object.keys(sorted).length} schemas from ${SDK} ${version}`);
}
