import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { Glob } from "bun";
import ts from "typescript";

/**
 * Issue 21: the layer map of ARCHITECTURE.md holds. Every `import`, `import type`, `export … from`,
 * dynamic `import()`, `typeof import()` and `require()` between the modules of src/ is read (TypeScript's own
 * pre-processor, so comments and strings do not count), and
 *  - every module belongs to a layer of the fenced `layers` block in ARCHITECTURE.md (the doc is the
 *    rule: change the block and this test follows),
 *  - no import runs from a lower layer to a higher one,
 *  - no import circle exists (Tarjan's strongly connected components over the module graph).
 * Issue 37: folders are the layers. The block names folders (and the files at the top of src/, which sit in
 * no folder), never a file inside a folder, and the same two checks hold with every module collapsed
 * to its folder: no circle and no upward import between folders.
 */
const ROOT = resolve(import.meta.dir, "../..");
const SRC = join(ROOT, "src");

interface Layer {
  name: string;
  rank: number;
  entries: string[];
}

/**
 * The ```layers block of ARCHITECTURE.md: one layer a line, bottom first, `name  entry entry …`;
 * a line `! from.ts -> to.ts` is a known exception (an import left out of both checks until fixed).
 */
function parseLayers(markdown: string): { layers: Layer[]; exceptions: string[] } {
  const block = /```layers\n([\s\S]*?)```/.exec(markdown);
  if (!block) throw new Error("ARCHITECTURE.md has no ```layers block");
  const layers: Layer[] = [];
  const exceptions: string[] = [];
  for (const raw of block[1]!.split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) continue;
    if (line.startsWith("!")) {
      exceptions.push(line.slice(1).trim().replace(/\s+/g, " "));
      continue;
    }
    const [name, ...entries] = line.split(/\s+/);
    layers.push({ name: name!, rank: layers.length, entries });
  }
  return { layers, exceptions };
}

/** The layer of a module (path relative to src/): the longest entry that names it or a folder holding it. */
function layerOf(layers: Layer[], file: string): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of layers) {
    for (const entry of layer.entries) {
      const hit = entry.endsWith("/") ? file.startsWith(entry) : file === entry;
      if (hit && (!best || entry.length > best.length)) best = { layer, length: entry.length };
    }
  }
  return best?.layer;
}

/** Entries that name a file inside a folder: an override of that folder's layer. */
function overrides(layers: Layer[]): string[] {
  return layers.flatMap((l) => l.entries).filter((e) => !e.endsWith("/") && e.includes("/"));
}

/**
 * The folder a module counts in: the longest folder entry of the map that holds it (so `http/routes/…`
 * is `http/routes/`, `functions/offline/…` is `functions/`); a file at the top of src/ is itself.
 */
function folderOf(layers: Layer[], file: string): string {
  let best = file;
  for (const entry of layers.flatMap((l) => l.entries)) {
    if (entry.endsWith("/") && file.startsWith(entry) && (best === file || entry.length > best.length)) best = entry;
  }
  return best;
}

/** The module graph with every module collapsed to its folder (imports within one folder left out). */
function folderGraph(layers: Layer[], graph: Map<string, string[]>): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const [from, targets] of graph) {
    const a = folderOf(layers, from);
    const set = out.get(a) ?? new Set<string>();
    out.set(a, set);
    for (const to of targets) {
      const b = folderOf(layers, to);
      if (b !== a) set.add(b);
    }
  }
  return new Map([...out].map(([k, v]) => [k, [...v].sort()]));
}

/** The modules of src/ a source imports (relative specifiers resolved; packages and non-TS files left out). */
function importsOf(file: string, source: string, exists: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const { fileName } of ts.preProcessFile(source, true, true).importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const base = resolve(SRC, dirname(file), fileName).replace(/\.js$/, "");
    const found = [`${base}.ts`, `${base}/index.ts`, base].find((p) => p.endsWith(".ts") && exists(p));
    if (!found) continue;
    const rel = relative(SRC, found);
    if (!rel.startsWith("..")) out.push(rel);
  }
  return out;
}

/** Strongly connected components of more than one module, or of one that imports itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** Imports from a lower layer to a higher one, as `from (layer) -> to (layer)`. */
function upward(layers: Layer[], graph: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const a = layerOf(layers, from);
    for (const to of targets) {
      const b = layerOf(layers, to);
      if (a && b && b.rank > a.rank) out.push(`${from} (${a.name}) -> ${to} (${b.name})`);
    }
  }
  return out.sort();
}

const isFile = (p: string) => existsSync(p) && statSync(p).isFile();

function sourceGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of [...new Glob("**/*.ts").scanSync(SRC)].sort()) {
    graph.set(file, [...new Set(importsOf(file, readFileSync(join(SRC, file), "utf8"), isFile))]);
  }
  return graph;
}

describe("the checker", () => {
  test("reads every kind of import, and no comment or string", () => {
    const source = [
      'import type { A } from "./a";',
      'export * from "./b";',
      'export type { C } from "../c";',
      'import "./d";',
      'const e = await import("./e");',
      'type F = typeof import("./f");',
      'const r = require("./r");',
      'import sql from "../../drizzle/0000_init.sql" with { type: "text" };',
      'import { t } from "typebox";',
      '// import { g } from "./g";',
      "const h = \"import { h } from './h'\";",
    ].join("\n");
    const exists = (p: string) => p.endsWith(".ts") && !p.endsWith("/h.ts") && !p.endsWith("/g.ts");
    expect(importsOf("x/y.ts", source, exists)).toEqual(["x/a.ts", "x/b.ts", "c.ts", "x/d.ts", "x/e.ts", "x/f.ts", "x/r.ts"]);
  });

  test("finds a circle through a type import and an import that runs up", () => {
    const { layers } = parseLayers("```layers\nlow a/\nhigh b/ a/high.ts\n```");
    const graph = new Map([
      ["a/one.ts", ["a/two.ts"]],
      ["a/two.ts", ["a/three.ts"]],
      ["a/three.ts", ["a/one.ts", "b/page.ts"]],
      ["b/page.ts", ["a/one.ts"]],
      ["a/high.ts", ["b/page.ts"]],
    ]);
    expect(circles(graph)).toEqual([["a/one.ts", "a/three.ts", "a/two.ts", "b/page.ts"]]);
    expect(upward(layers, graph)).toEqual(["a/three.ts (low) -> b/page.ts (high)"]);
  });
});

describe("the folder checker", () => {
  const { layers } = parseLayers("```layers\nlow top.ts a/ b/\nhigh c/ c/sub/ d/\n```");

  test("names a file inside a folder as an override, and a top-level file or a folder not", () => {
    expect(overrides(parseLayers("```layers\nlow top.ts a/ a/sub/\nhigh b/ a/high.ts\n```").layers)).toEqual(["a/high.ts"]);
    expect(overrides(layers)).toEqual([]);
  });

  test("collapses a module to the longest folder entry holding it, a top-level file to itself", () => {
    expect(folderOf(layers, "a/x/y.ts")).toBe("a/");
    expect(folderOf(layers, "c/sub/z.ts")).toBe("c/sub/");
    expect(folderOf(layers, "c/z.ts")).toBe("c/");
    expect(folderOf(layers, "top.ts")).toBe("top.ts");
  });

  test("finds a circle between folders that no two modules form", () => {
    const graph = new Map([
      ["a/one.ts", ["b/one.ts"]],
      ["b/one.ts", []],
      ["b/two.ts", ["a/two.ts"]],
      ["a/two.ts", ["top.ts"]],
      ["c/sub/z.ts", ["c/z.ts"]],
      ["c/z.ts", ["d/w.ts"]],
      ["d/w.ts", ["c/sub/z.ts"]],
      ["top.ts", []],
    ]);
    expect(circles(graph)).toEqual([["c/sub/z.ts", "c/z.ts", "d/w.ts"]]);
    const folders = folderGraph(layers, graph);
    expect(folders.get("a/")).toEqual(["b/", "top.ts"]);
    expect(circles(folders)).toEqual([
      ["a/", "b/"],
      ["c/", "c/sub/", "d/"],
    ]);
  });
});

describe("src/ keeps the layers of ARCHITECTURE.md", () => {
  const { layers, exceptions } = parseLayers(readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8"));
  const full = sourceGraph();
  const graph = new Map([...full].map(([from, to]) => [from, to.filter((t) => !exceptions.includes(`${from} -> ${t}`))]));

  test("every known exception is still an import (a fixed one leaves the list)", () => {
    const edges = new Set([...full].flatMap(([from, to]) => to.map((t) => `${from} -> ${t}`)));
    expect(exceptions.filter((e) => !edges.has(e))).toEqual([]);
  });

  test("every module belongs to a layer", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect([...graph.keys()].filter((f) => !layerOf(layers, f))).toEqual([]);
  });

  test("every entry of the layer map names a module or folder that exists", () => {
    const missing = layers.flatMap((l) => l.entries).filter((e) => !existsSync(join(SRC, e)));
    expect(missing).toEqual([]);
  });

  test("no import runs from a lower layer to a higher one", () => {
    expect(upward(layers, graph)).toEqual([]);
  });

  test("no import circle, type imports included", () => {
    expect(circles(graph)).toEqual([]);
  });

  test("the layer map names folders and top-level files only: no file inside a folder (an override)", () => {
    expect(overrides(layers)).toEqual([]);
  });

  test("no import circle between folders", () => {
    expect(circles(folderGraph(layers, graph))).toEqual([]);
  });

  test("no import runs from a lower layer to a higher one between folders", () => {
    const folders = folderGraph(layers, graph);
    const up: string[] = [];
    for (const [from, targets] of folders) {
      const a = layerOf(layers, from);
      for (const to of targets) {
        const b = layerOf(layers, to);
        if (a && b && b.rank > a.rank) up.push(`${from} (${a.name}) -> ${to} (${b.name})`);
      }
    }
    expect(up.sort()).toEqual([]);
  });
});

/** Whether a map's text names `entry` (a file, or a folder ending in "/") as a word of its own. */
function names(text: string, entry: string): boolean {
  const escaped = entry.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?:^|[\\s,;(])${escaped}`, "m").test(text);
}

describe("ARCHITECTURE.md's Layout names every part", () => {
  const doc = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");
  const block = /## Layout\n\n```\n([\s\S]*?)```/.exec(doc)?.[1] ?? "";
  const srcPart = block.slice(block.indexOf("src/"), block.indexOf("\ntest/"));
  const testPart = block.slice(block.indexOf("\ntest/"), block.indexOf("\ndrizzle/"));
  const entries = (dir: string, foldersOnly: boolean) =>
    readdirSync(dir, { withFileTypes: true })
      .filter((e) => (e.isDirectory() ? true : !foldersOnly && e.name.endsWith(".ts")))
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
      .sort();

  test("the checker: a name counts as a word of its own", () => {
    expect(names("  ids.ts       random ids; bytes.ts a read", "bytes.ts")).toBe(true);
    expect(names("  dialog.ts    a dialog", "log.ts")).toBe(false);
    expect(names("  http/edge.ts the edge", "http/")).toBe(true);
  });

  test("every folder and file at the top of src/", () => {
    expect(srcPart.length).toBeGreaterThan(0);
    expect(entries(SRC, false).filter((e) => !names(srcPart, e))).toEqual([]);
  });

  test("every folder of test/", () => {
    expect(testPart.length).toBeGreaterThan(0);
    expect(entries(join(ROOT, "test"), true).filter((e) => !names(testPart, e))).toEqual([]);
  });
});
