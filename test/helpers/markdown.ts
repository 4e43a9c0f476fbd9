import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Glob } from "bun";

/**
 * What the docs tests read of the project's Markdown (issue 36): the files a reader follows
 * (docFiles below), their fenced blocks, inline code spans, links and heading anchors, each with
 * the line it starts on, so a failure names file:line.
 */
export const ROOT = resolve(import.meta.dir, "../..");

/**
 * The documents, relative to the root: README.md, ARCHITECTURE.md, docs/*.md, bench/README.md, and
 * test/eval/README.md (where the docs send a reader for the evaluation's data sets).
 */
export function docFiles(): string[] {
  const docs = [...new Glob("docs/*.md").scanSync({ cwd: ROOT })].sort();
  return ["README.md", "ARCHITECTURE.md", ...docs, "bench/README.md", "test/eval/README.md"];
}

export interface Fence {
  /** the info string's first word, lower case ("sh", "toml", "" for none) */
  lang: string;
  /** 1-based line of the opening fence */
  line: number;
  /** the content lines, without the fences */
  lines: string[];
  /** the HTML comment on the nearest non-blank line above the opening fence, if any ("test: runs") */
  note?: string;
}

export interface CodeSpan {
  text: string;
  line: number;
}

export interface Link {
  target: string;
  line: number;
}

export interface ParsedDoc {
  file: string;
  text: string;
  fences: Fence[];
  /** the text outside fenced blocks (fenced lines blanked, so offsets and line numbers hold) */
  prose: string;
  spans: CodeSpan[];
  /** the prose with inline code spans blanked (links are read from this) */
  plain: string;
}

/** A function from an offset of the text to its 1-based line (newline offsets found once, then a binary search). */
function lineIndex(text: string): (offset: number) => number {
  const breaks: number[] = [];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) breaks.push(i);
  return (offset) => {
    let lo = 0;
    let hi = breaks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (breaks[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
}

/** Fenced blocks (``` or ~~~, also indented inside list items) and the prose around them. */
function splitFences(text: string): { fences: Fence[]; prose: string } {
  const lines = text.split("\n");
  const fences: Fence[] = [];
  const prose: string[] = [];
  let open: { char: string; length: number; fence: Fence } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (open) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1]![0] === open.char && close[1]!.length >= open.length) {
        open = undefined;
      } else {
        open.fence.lines.push(line);
      }
      prose.push("");
      continue;
    }
    const start = /^\s*(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/.exec(line);
    if (start) {
      let note: string | undefined;
      for (let j = i - 1; j >= 0; j--) {
        const above = lines[j]!.trim();
        if (!above) continue;
        const comment = /^<!--\s*(.*?)\s*-->$/.exec(above);
        if (comment) note = comment[1];
        break;
      }
      const fence: Fence = { lang: start[2]!.toLowerCase(), line: i + 1, lines: [], note };
      fences.push(fence);
      open = { char: start[1]![0]!, length: start[1]!.length, fence };
      prose.push("");
      continue;
    }
    prose.push(line);
  }
  return { fences, prose: prose.join("\n") };
}

/**
 * Inline code spans, CommonMark's way: a run of n backticks opens, the next run of exactly n closes;
 * a span may cross a line break but not a blank line (the end of a paragraph). Returns the spans and
 * the prose with each span blanked to spaces (line breaks kept).
 */
function codeSpans(prose: string): { spans: CodeSpan[]; plain: string } {
  const spans: CodeSpan[] = [];
  const out = prose.split("");
  const runs = [...prose.matchAll(/`+/g)];
  const lineAt = lineIndex(prose);
  for (let i = 0; i < runs.length; i++) {
    const opening = runs[i]!;
    const ticks = opening[0].length;
    const from = opening.index + ticks;
    let closing: number | undefined;
    for (let j = i + 1; j < runs.length; j++) {
      const run = runs[j]!;
      if (prose.slice(from, run.index).includes("\n\n")) break;
      if (run[0].length === ticks) {
        closing = j;
        break;
      }
    }
    if (closing === undefined) continue;
    const end = runs[closing]!.index;
    let content = prose.slice(from, end).replace(/\n\s*/g, " ");
    if (/^ .*[^ ].* $/.test(content)) content = content.slice(1, -1);
    spans.push({ text: content, line: lineAt(opening.index) });
    for (let k = opening.index; k < end + ticks; k++) if (out[k] !== "\n") out[k] = " ";
    i = closing;
  }
  return { spans, plain: out.join("") };
}

const cache = new Map<string, ParsedDoc>();

export function parseDoc(file: string): ParsedDoc {
  const cached = cache.get(file);
  if (cached) return cached;
  const text = readFileSync(join(ROOT, file), "utf8");
  const { fences, prose } = splitFences(text);
  const { spans, plain } = codeSpans(prose);
  const doc = { file, text, fences, prose, spans, plain };
  cache.set(file, doc);
  return doc;
}

/** Every link target of a document: [text](target), ![alt](src), [ref]: target, href="…", src="…". */
export function linksOf(doc: ParsedDoc): Link[] {
  const links: Link[] = [];
  const { plain } = doc;
  const lineAt = lineIndex(plain);
  for (const m of plain.matchAll(/\]\(\s*(<[^>\n]*>|[^()\s]+(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) {
    links.push({ target: m[1]!.replace(/^<|>$/g, ""), line: lineAt(m.index) });
  }
  for (const m of plain.matchAll(/^ {0,3}\[[^\]\n]+\]:\s*(\S+)/gm)) {
    links.push({ target: m[1]!, line: lineAt(m.index) });
  }
  for (const m of plain.matchAll(/<(?:a|img)\s[^>]*?\b(?:href|src)\s*=\s*("([^"]*)"|'([^']*)')/gi)) {
    links.push({ target: m[2] ?? m[3]!, line: lineAt(m.index) });
  }
  return links;
}

/**
 * GitHub's anchor of a heading: the rendered text (code kept, link targets, emphasis markers and
 * HTML tags dropped), lower case, every character that is not a letter, mark, digit, connector
 * punctuation, space or hyphen removed, each space a hyphen.
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/&[a-z]+;|&#\d+;/gi, "")
    .replace(/`/g, "")
    .replace(/(\*\*|__)(.+?)\1/g, "$2")
    .replace(/(^|[^\p{L}\p{N}])[*_](.+?)[*_](?=[^\p{L}\p{N}]|$)/gu, "$1$2");
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors a document offers: its headings' (a repeated one gets -1, -2, …) and explicit <a id|name>. */
export function anchorsOf(doc: ParsedDoc): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of doc.prose.split("\n")) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!heading) continue;
    const slug = githubSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const m of doc.prose.matchAll(/<a\s[^>]*?\b(?:id|name)\s*=\s*("([^"]*)"|'([^']*)')/gi)) {
    anchors.add(m[2] ?? m[3]!);
  }
  return anchors;
}

/** The shell languages of fenced blocks whose every line is a command ("console": only lines after a "$ " prompt). */
export const SHELL_LANGS = new Set(["sh", "bash", "shell", "zsh", "console", "shell-session"]);

export interface ShellLine {
  /** one logical command line: continuation lines joined, the comment cut off */
  text: string;
  /** 1-based line in the document where it starts */
  line: number;
}

/** Cuts a trailing comment (a # at a word start, outside quotes) off a shell line. */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "\\") i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

/**
 * The command lines of a shell block: a line ending in "\" continues on the next; a heredoc's body
 * (<<EOF … EOF) is data, not commands; blank lines and comments are left out. In a "console" block
 * only the lines after a "$ " prompt are commands.
 */
export function shellLines(fence: Fence): ShellLine[] {
  const out: ShellLine[] = [];
  let pending: ShellLine | undefined;
  let heredoc: string | undefined;
  fence.lines.forEach((raw, i) => {
    const line = fence.line + 1 + i;
    if (heredoc !== undefined) {
      if (raw.trim() === heredoc) heredoc = undefined;
      return;
    }
    let text = raw;
    if (!pending && (fence.lang === "console" || fence.lang === "shell-session")) {
      const prompt = /^\s*\$ (.*)$/.exec(raw);
      if (!prompt) return;
      text = prompt[1]!;
    }
    const continues = /\\$/.test(text) && !/^\s*#/.test(text);
    const part = continues ? text.slice(0, -1) : withoutComment(text);
    if (pending) pending.text = `${pending.text.trimEnd()} ${part.trim()}`;
    else pending = { text: part.trim(), line };
    if (continues) return;
    const done = pending;
    pending = undefined;
    const marker = /<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1/.exec(done.text);
    if (marker) heredoc = marker[2];
    if (done.text) out.push(done);
  });
  if (pending?.text) out.push(pending);
  return out;
}

/** The index just past the ")" that closes the "(" at `open`, quotes inside skipped. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "\\") i++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
  }
  return text.length;
}

/**
 * The simple commands of a command line: split at |, ||, &&, ;, & and subshell parentheses
 * (outside quotes; the & of a redirection such as 2>&1 is not a separator), and the commands
 * inside each $( … ) and ` … ` substitution, in or out of double quotes.
 */
export function simpleCommands(line: string): string[] {
  const out: string[] = [];
  const inner: string[] = [];
  let current = "";
  const flush = () => {
    if (current.trim()) out.push(current.trim());
    current = "";
  };
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      current += c;
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === "\\") {
      current += line.slice(i, i + 2);
      i++;
      continue;
    }
    if (c === "$" && line[i + 1] === "(" && line[i + 2] !== "(") {
      const end = closingParen(line, i + 1);
      inner.push(line.slice(i + 2, end - 1));
      current += "$(…)";
      i = end - 1;
      continue;
    }
    if (c === "`") {
      const end = line.indexOf("`", i + 1);
      inner.push(line.slice(i + 1, end === -1 ? line.length : end));
      current += "`…`";
      i = end === -1 ? line.length : end;
      continue;
    }
    if (quote === '"') {
      current += c;
      if (c === '"') quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      current += c;
      continue;
    }
    const redirection = c === "&" && (line[i - 1] === ">" || line[i - 1] === "<" || line[i + 1] === ">");
    if (!redirection && (c === "|" || c === "&" || c === ";" || c === "(" || c === ")")) {
      flush();
      continue;
    }
    current += c;
  }
  flush();
  return [...out, ...inner.flatMap(simpleCommands)];
}

/** Shell words of a simple command (quotes removed; good enough to name the executable and its first arguments). */
export function words(command: string): string[] {
  return (command.match(/(?:[^\s'"]+|'[^']*'|"(?:[^"\\]|\\.)*")+/g) ?? []).map((w) =>
    w.replace(/'([^']*)'|"((?:[^"\\]|\\.)*)"/g, (_, a, b) => a ?? b),
  );
}

/** What a block's HTML comment asks: `test: runs`, `test: needs a, b` (several joined by ";"). */
export function notesOf(fence: Fence): { runs: boolean; needs: Set<string> } {
  const needs = new Set<string>();
  let runs = false;
  const note = fence.note?.replace(/^test:\s*/, "") ?? "";
  if (fence.note?.startsWith("test:")) {
    for (const part of note.split(";").map((p) => p.trim())) {
      if (part === "runs") runs = true;
      const need = /^needs\s+(.*)$/.exec(part);
      if (need) for (const name of need[1]!.split(/[\s,]+/)) if (name) needs.add(name);
    }
  }
  return { runs, needs };
}
