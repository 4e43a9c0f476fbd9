/**
 * The grammar engine itself, on Harper (harper.js, a WASM grammar checker). It runs inside the
 * grammar worker (./grammar-worker.ts), never on the server's thread: Harper's set-up blocks for
 * seconds and holds about 230 MB (see ./grammar.ts). The WASM is imported as a file, so `bun build
 * --compile` embeds it (16 MB, not the 21 MB base64 copy of harper.js's inlined entry).
 *
 * One linter is created lazily and kept warm; calls are serialized because the linter is
 * stateful (its dialect) and runs synchronously anyway.
 */
import type { Lint, LocalLinter } from "harper.js";
import wasmPath from "../../node_modules/harper.js/dist/harper_wasm_bg.wasm" with { type: "file" };
import { checkCpuBudget, threadCpuMs } from "./budget";
import type { GrammarCorrection, GrammarDialect, GrammarResult } from "./grammar";

/** harper.js's Dialect enum, copied so that naming a dialect does not load the engine */
const Dialect = { American: 0, British: 1, Australian: 2, Canadian: 3, Indian: 4 } as const;
type Dialect = (typeof Dialect)[keyof typeof Dialect];

const DIALECTS: Record<GrammarDialect, Dialect> = {
  american: Dialect.American,
  british: Dialect.British,
  australian: Dialect.Australian,
  canadian: Dialect.Canadian,
  indian: Dialect.Indian,
};

// Kinds that are matters of taste; a fixer that rewrites them changes the author's voice.
const SKIP_KINDS = new Set(["Style", "Readability", "Enhancement", "WordOrder"]);
const LEXICAL_KINDS = new Set(["Spelling", "Typo", "WordChoice"]);

let current: Dialect = Dialect.American;
let queue: Promise<unknown> = Promise.resolve();

let linterPromise: Promise<LocalLinter> | null = null;

function linter(): Promise<LocalLinter> {
  linterPromise ??= createLinter();
  return linterPromise;
}

async function createLinter(): Promise<LocalLinter> {
  const harper = await import("harper.js");
  // a blob: URL, because harper.js loads a second (slim) copy of the module for a URL naming its
  // own file (harper_wasm_bg.wasm)
  const binary = harper.createBinaryModuleFromUrl(URL.createObjectURL(Bun.file(wasmPath)), "full");
  const l = new harper.LocalLinter({ binary, dialect: Dialect.American as number as typeof harper.Dialect.American });
  await l.setup();
  return l;
}

export async function warmGrammar(): Promise<void> {
  await linter();
}

function serialized<T>(job: () => Promise<T>): Promise<T> {
  const run = queue.then(job, job);
  queue = run.catch(() => undefined);
  return run;
}

interface Edit {
  start: number;
  end: number;
  replacement: string;
  kind: string;
  explanation: string;
}

/**
 * Edit distance where doubling or undoubling a letter costs half: the commonest misspellings
 * ("writting", "untill", "adress", "tommorow") are doubling slips, so "writing" should beat
 * "writhing" and "address" beat "a dress" although plain Levenshtein ties them.
 */
function typoDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const prev = new Array<number>(y.length + 1);
  const cur = new Array<number>(y.length + 1);
  const back2 = new Array<number>(y.length + 1).fill(0);
  for (let j = 0; j <= y.length; j++) prev[j] = j;
  for (let i = 1; i <= x.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= y.length; j++) {
      const del = x[i - 1] === x[i - 2] || x[i - 1] === x[i] ? 0.5 : 1;
      const ins = y[j - 1] === y[j - 2] || y[j - 1] === y[j] ? 0.5 : 1;
      const sub = x[i - 1] === y[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j] + del, cur[j - 1] + ins, prev[j - 1] + sub);
      // swapped neighbours ("recieved") are as common as doubling slips
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1] && x[i - 1] !== x[i - 2])
        cur[j] = Math.min(cur[j], back2[j - 2] + 0.5);
    }
    for (let j = 0; j <= y.length; j++) {
      back2[j] = prev[j];
      prev[j] = cur[j];
    }
  }
  return prev[y.length];
}

/** The suggestion closest to what was typed; Harper's order breaks ties, one word beats a split. */
function closestSpelling(original: string, options: readonly string[]): string {
  let best = options[0];
  let bestCost = Number.POSITIVE_INFINITY;
  for (const o of options) {
    const cost = typoDistance(original, o) + (o.includes(" ") && !original.includes(" ") ? 0.25 : 0);
    if (cost < bestCost) {
      best = o;
      bestCost = cost;
    }
  }
  return best;
}

function isSentenceStart(text: string, at: number): boolean {
  return /(?:^|[.!?]\s+|\n\s*)$/.test(text.slice(Math.max(0, at - 4), at));
}

function editsOf(text: string, lints: Lint[]): Edit[] {
  const edits: Edit[] = [];
  for (const lint of lints) {
    const kind = lint.lint_kind();
    if (SKIP_KINDS.has(kind)) continue;
    const span = lint.span();
    const original = lint.get_problem_text();
    // guard against any offset convention change upstream: never edit the wrong span
    if (text.slice(span.start, span.end) !== original) continue;
    // a capitalised word inside a sentence is most likely a name Harper does not know
    if (kind === "Spelling" && /^\p{Lu}/u.test(original) && !isSentenceStart(text, span.start)) continue;
    const options = lint.suggestions().map((sg) => {
      // SuggestionKind: 0 replace, 1 remove, 2 insert after
      const k = sg.kind();
      const repl = sg.get_replacement_text();
      return k === 1 ? "" : k === 2 ? original + repl : repl;
    });
    if (!options.length) continue;
    const replacement = kind === "Spelling" ? closestSpelling(original, options) : options[0];
    // a one-word spelling "fix" that shares little with the word ("untill" -> "distill") does more
    // harm than the typo; grammar rules (their -> they're, went -> gone) legitimately change more
    if (
      LEXICAL_KINDS.has(kind) &&
      !/\s/.test(original) &&
      !/\s/.test(replacement) &&
      original.length > 3 &&
      typoDistance(original, replacement) > 2.5
    )
      continue;
    if (replacement === original) continue;
    edits.push({ start: span.start, end: span.end, replacement, kind, explanation: lint.message() });
  }
  edits.sort((a, b) => a.start - b.start);
  const kept: Edit[] = [];
  for (const e of edits) if (!kept.length || e.start >= kept[kept.length - 1].end) kept.push(e);
  return kept;
}

function apply(text: string, edits: readonly { start: number; end: number; replacement: string }[]): string {
  let out = "";
  let at = 0;
  for (const e of edits) {
    out += text.slice(at, e.start) + e.replacement;
    at = e.end;
  }
  return out + text.slice(at);
}

// Harper's cost grows faster than linear in the length of one unbroken run (a 1,000-letter "word"
// takes 250 ms, 4,000 letters 740 ms, 4,000 brackets 900 ms); no word or sentence part is that long.
const OVERLONG_WORD = /(?<!\S)\S{64,}/gu;

async function lintChunk(l: LocalLinter, text: string): Promise<{ edits: Edit[]; deferred: number }> {
  // overlong runs are blanked for Harper (offsets kept) and nothing is changed inside or next to them
  const hidden: [number, number][] = [];
  const shown = text.replace(OVERLONG_WORD, (w, at: number) => {
    hidden.push([at, at + w.length]);
    return " ".repeat(w.length);
  });
  const touchesHidden = (e: Edit) => hidden.some(([a, b]) => e.start <= b && e.end >= a);
  const linted = editsOf(shown, await l.lint(shown, { language: "plaintext", dedup: true }));
  const all = hidden.length ? linted.filter((e) => !touchesHidden(e)) : linted;
  // Adjacent errors often cascade ("We was there" flags "there" only because of "was"):
  // apply the first and let the next pass judge its neighbour in the corrected text.
  const edits: Edit[] = [];
  let deferred = 0;
  for (const e of all) {
    const prev = edits[edits.length - 1];
    if (prev && e.start - prev.end <= 1) deferred++;
    else edits.push(e);
  }
  return { edits, deferred };
}

// Harper's cost grows faster than the text on some inputs (100 KB of "a." takes seconds in one
// call); sentences never need context beyond themselves, so long texts are linted in pieces.
const CHUNK = 1000;

/** End of the piece starting at `from`: after a sentence end, else at a space, else hard. */
function chunkEnd(text: string, from: number): number {
  const limit = from + CHUNK;
  if (limit >= text.length) return text.length;
  for (let i = limit; i > from + CHUNK / 2; i--) if (/\s/.test(text[i]) && /[.!?]/.test(text[i - 1])) return i;
  for (let i = limit; i > from + CHUNK / 2; i--) if (/\s/.test(text[i])) return i;
  return limit;
}

async function lintOnce(l: LocalLinter, text: string): Promise<{ edits: Edit[]; deferred: number }> {
  if (text.length <= CHUNK) return lintChunk(l, text);
  const edits: Edit[] = [];
  let deferred = 0;
  // Harper cannot be stopped inside a piece: a piece is not started when the last one's cost per
  // character says it would end past the CPU budget
  let msPerChar = 0;
  for (let from = 0; from < text.length; ) {
    const to = chunkEnd(text, from);
    checkCpuBudget(msPerChar * (to - from));
    const started = threadCpuMs();
    const part = await lintChunk(l, text.slice(from, to));
    msPerChar = (threadCpuMs() - started) / (to - from);
    for (const e of part.edits) edits.push({ ...e, start: e.start + from, end: e.end + from });
    deferred += part.deferred;
    from = to;
  }
  return { edits, deferred };
}

/** Where each edit's replacement sits in the corrected text. */
function shiftedSpans(edits: readonly Edit[]): [number, number][] {
  let delta = 0;
  return edits.map((e) => {
    const start = e.start + delta;
    delta += e.replacement.length - (e.end - e.start);
    return [start, start + e.replacement.length];
  });
}

/**
 * Second pass over only the sentences that changed: linting costs about linear time in the
 * text, so re-linting a whole document to check a few fixed words would double the cost.
 */
const SENTENCE_END = new Set([".", "!", "?", "\n"]);

async function relintAround(l: LocalLinter, text: string, spans: readonly [number, number][]): Promise<Edit[]> {
  const windows: [number, number][] = [];
  for (const [a, b] of spans) {
    // scan to the enclosing sentence's ends by hand: a regex over text.slice(0, a) per edit is quadratic
    let start = a;
    while (start > 0 && !SENTENCE_END.has(text[start - 1])) start--;
    let end = b;
    while (end < text.length && !SENTENCE_END.has(text[end])) end++;
    end = Math.min(text.length, end + 1);
    const last = windows[windows.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else windows.push([start, end]);
  }
  // when the changed sentences are most of the text, one lint of the whole is cheaper than many
  const covered = windows.reduce((n, [a, b]) => n + b - a, 0);
  if (covered > text.length * 0.5) return (await lintOnce(l, text)).edits;
  const out: Edit[] = [];
  for (const [a, b] of windows) {
    const { edits } = await lintOnce(l, text.slice(a, b));
    for (const e of edits) out.push({ ...e, start: e.start + a, end: e.end + a });
  }
  return out;
}

interface Segment {
  /** span in the original text */
  os: number;
  oe: number;
  /** span in the corrected text */
  ns: number;
  ne: number;
  edit: GrammarCorrection | null;
}

function segmentsOf(text: string, corrections: readonly GrammarCorrection[]): Segment[] {
  const segs: Segment[] = [];
  let o = 0;
  let n = 0;
  for (const c of corrections) {
    if (c.start > o) segs.push({ os: o, oe: c.start, ns: n, ne: n + c.start - o, edit: null });
    n += c.start - o;
    segs.push({ os: c.start, oe: c.end, ns: n, ne: n + c.replacement.length, edit: c });
    n += c.replacement.length;
    o = c.end;
  }
  segs.push({ os: o, oe: text.length, ns: n, ne: n + text.length - o, edit: null });
  return segs;
}

/**
 * Folds edits made on the corrected text back into corrections against the original, so every
 * correction's offsets point into the text the client sent.
 */
function foldSecondPass(
  text: string,
  first: GrammarCorrection[],
  corrected: string,
  second: readonly Edit[],
): GrammarCorrection[] {
  // segments and second-pass edits are both in text order: one forward walk, linear in their number
  const segs = segmentsOf(text, first);
  const absorbed = new Set<GrammarCorrection>();
  const merged: GrammarCorrection[] = [];
  let from = 0;
  for (const e of [...second].sort((x, y) => x.start - y.start)) {
    while (from < segs.length && segs[from].ne < e.start) from++;
    // original span covering the edit; edits touching an earlier correction absorb it whole
    let os = Number.POSITIVE_INFINITY;
    let oe = -1;
    let ns = Number.POSITIVE_INFINITY;
    let ne = -1;
    const touched: GrammarCorrection[] = [];
    for (let i = from; i < segs.length && segs[i].ns <= e.end; i++) {
      const sg = segs[i];
      const touches = sg.edit ? e.start <= sg.ne && e.end >= sg.ns : e.start < sg.ne && e.end > sg.ns;
      if (!touches) continue;
      if (sg.edit) touched.push(sg.edit);
      os = Math.min(os, sg.edit ? sg.os : sg.os + Math.max(0, e.start - sg.ns));
      oe = Math.max(oe, sg.edit ? sg.oe : sg.os + Math.min(sg.ne, e.end) - sg.ns);
      ns = Math.min(ns, sg.edit ? sg.ns : Math.max(sg.ns, e.start));
      ne = Math.max(ne, sg.edit ? sg.ne : Math.min(sg.ne, e.end));
    }
    // nothing to map, or a correction another second-pass edit already took over
    if (oe < 0 || touched.some((c) => absorbed.has(c))) continue;
    const replacement = corrected.slice(ns, e.start) + e.replacement + corrected.slice(e.end, ne);
    // Harper sometimes flags its own fix ("We was" -> "We were" -> "was there a"): an edit that
    // puts back what the first pass replaced is a flip-flop, and the first pass wins.
    if (touched.some((c) => replacement.slice(c.start - os, c.start - os + c.original.length) === c.original)) continue;
    for (const c of touched) absorbed.add(c);
    merged.push({
      original: text.slice(os, oe),
      replacement,
      start: os,
      end: oe,
      kind: e.kind,
      explanation: [...touched.map((c) => c.explanation), e.explanation].join(" "),
    });
  }
  return [...first.filter((c) => !absorbed.has(c)), ...merged]
    .filter((c) => c.original !== c.replacement)
    .sort((x, y) => x.start - y.start);
}

/** Corrected text and the corrections made, in the given English dialect. */
export function fixGrammar(text: string, opts: { dialect?: GrammarDialect } = {}): Promise<GrammarResult> {
  return serialized(async () => {
    const l = await linter();
    const want = DIALECTS[opts.dialect ?? "american"];
    if (want !== current) {
      await l.setDialect(want);
      current = want;
    }
    const { edits, deferred } = await lintOnce(l, text);
    let corrections: GrammarCorrection[] = edits.map((e) => ({
      original: text.slice(e.start, e.end),
      replacement: e.replacement,
      start: e.start,
      end: e.end,
      kind: e.kind,
      explanation: e.explanation,
    }));
    let correctedText = apply(text, edits);
    // A second pass judges deferred neighbours and errors a fix exposes: mostly a spelled-out
    // contraction ("they doesnt" -> "they doesn't" -> "they don't"). Other texts keep one lint.
    if (deferred > 0 || edits.some((e) => e.replacement.includes("'") && !text.slice(e.start, e.end).includes("'"))) {
      const second = await relintAround(l, correctedText, shiftedSpans(edits));
      if (second.length) {
        corrections = foldSecondPass(text, corrections, correctedText, second);
        correctedText = apply(text, corrections);
      }
    }
    return { correctedText, corrections, changed: correctedText !== text };
  });
}
