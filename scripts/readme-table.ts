/**
 * The function table of docs/api.md, generated from the registry so it cannot drift from the code.
 * `bun run docs:table` rewrites the section between the markers; a test fails when it is stale.
 */

import type { AnyFunctionDef } from "../src/functions/define";
import { FUNCTIONS, KNOWLEDGE_FUNCTIONS } from "../src/functions/registry";

export const TABLE_START = "<!-- functions:start -->";
export const TABLE_END = "<!-- functions:end -->";

const TEXT_PROVIDERS = "openai / groq / openai-compatible / mock";
/** groq has no image API; the mock answers with a tiny PNG. */
const IMAGE_PROVIDERS = "openai / openai-compatible / mock";

/** Every function an API user can call: the registry's, then the knowledge ones. */
export function documentedFunctions(): AnyFunctionDef[] {
  return [...FUNCTIONS, ...KNOWLEDGE_FUNCTIONS];
}

function providersOf(def: AnyFunctionDef): string {
  const remote = def.kind === "image" ? IMAGE_PROVIDERS : TEXT_PROVIDERS;
  return def.local ? `local / ${remote}` : remote;
}

function returnsOf(def: AnyFunctionDef): string {
  const keys = Object.keys((def.result.properties ?? {}) as Record<string, unknown>);
  return keys.map((k) => `\`${k}\``).join(", ");
}

const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");

/** The Markdown table of every function in `defs`. */
export function functionsTable(defs: AnyFunctionDef[] = documentedFunctions()): string {
  const rows = defs.map((def) =>
    [
      `\`${def.name}\``,
      [def.path, ...(def.aliases ?? [])].map((p) => `\`POST ${p}\``).join("<br>"),
      String(def.cost),
      def.rateClass,
      cell(def.summary),
      returnsOf(def),
      providersOf(def),
    ].join(" | "),
  );
  return [
    "| function | endpoint | credits | rate class | what it does | returns (`data.result`) | providers |",
    "|---|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r} |`),
  ].join("\n");
}

/** `readme` with the section between the markers replaced by `table`, or null when the markers are missing. */
export function withTable(readme: string, table: string = functionsTable()): string | null {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) return null;
  return `${readme.slice(0, start + TABLE_START.length)}\n${table}\n${readme.slice(end)}`;
}

if (import.meta.main) {
  const path = new URL("../docs/api.md", import.meta.url).pathname;
  if (!process.argv.includes("--write")) {
    process.stdout.write(`${functionsTable()}\n`);
  } else {
    const readme = await Bun.file(path).text();
    const updated = withTable(readme);
    if (updated === null) {
      process.stderr.write(`docs/api.md has no ${TABLE_START} ... ${TABLE_END} section to fill\n`);
      process.exit(1);
    }
    if (updated !== readme) await Bun.write(path, updated);
    process.stdout.write(
      updated === readme ? "docs/api.md function table is up to date\n" : "docs/api.md function table rewritten\n",
    );
  }
}
