import { describe, expect, test } from "bun:test";
import { documentedFunctions, functionsTable, TABLE_END, TABLE_START, withTable } from "../../scripts/readme-table";
import { FUNCTIONS, getFunction } from "../../src/functions/registry";

const API_DOC = new URL("../../docs/api.md", import.meta.url).pathname;
const doc = await Bun.file(API_DOC).text();

const rowOf = (name: string) =>
  functionsTable()
    .split("\n")
    .find((line) => line.startsWith(`| \`${name}\` |`)) ?? "";

describe("the function table of docs/api.md", () => {
  test("has one row per function, with its path, aliases, cost and rate class", () => {
    const lines = functionsTable().split("\n");
    const defs = documentedFunctions();
    expect(lines.length).toBe(defs.length + 2);
    for (const def of FUNCTIONS) expect(defs).toContain(def);
    expect(defs.map((d) => d.name)).toEqual(expect.arrayContaining(["faq-match", "knowledge-base-search", "chatbot-chat"]));
    for (const def of defs) {
      const row = lines.find((line) => line.includes(`\`POST ${def.path}\``)) ?? "";
      expect(row).toContain(`POST ${def.path}`);
      for (const alias of def.aliases ?? []) expect(row).toContain(`POST ${alias}`);
      expect(row).toContain(`| ${def.cost} | ${def.rateClass} |`);
    }
  });

  test("names the providers that can serve each function", () => {
    const image = rowOf("image-generation");
    expect(image).not.toContain("groq");
    expect(image).not.toContain("local");
    expect(rowOf("chat")).toMatch(/\| openai \/ groq \/ openai-compatible \/ mock \|$/);
    const local = FUNCTIONS.find((d) => d.local && d.kind !== "image");
    if (local) expect(rowOf(local.name)).toContain("| local / openai");
    expect(rowOf("email-analyze")).toContain("`category`, `intent`, `priority`");
    expect(getFunction("email-analyze")).toBeDefined();
  });

  test("replaces only the section between the markers, and nothing without them", () => {
    const doc = `# T\n\nintro\n${TABLE_START}\nold table\n${TABLE_END}\n\nmore\n`;
    const updated = withTable(doc, "NEW");
    expect(updated).toBe(`# T\n\nintro\n${TABLE_START}\nNEW\n${TABLE_END}\n\nmore\n`);
    expect(withTable(updated ?? "", "NEW")).toBe(updated);
    expect(withTable("# no markers", "NEW")).toBeNull();
  });

  test("docs/api.md carries the table, up to date (run `bun run docs:table`)", () => {
    expect(doc).toContain(TABLE_START);
    expect(doc).toContain(TABLE_END);
    expect(withTable(doc)).toBe(doc);
  });
});
