import { readFileSync } from "node:fs";
import { Kind, type TSchema } from "@sinclair/typebox";
import type { AnyFunctionDef } from "../../src/functions/define";
import { FUNCTIONS } from "../../src/functions/registry";

/**
 * Texts shaped to make backtracking patterns or nested loops blow up (long runs of punctuation, of
 * one letter, of spaces, of emoji, nesting), for the linear-time tests and `bun run chaos`.
 */
export const SIZE = 100_000;
export const fill = (unit: string, size = SIZE) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
export const PROSE =
  "The delivery was late again and the box was damaged, which is really disappointing. Otherwise the product " +
  "works great and the battery life is excellent! Can you refund order 4471 by March 3? Thanks, Maria\n";

export const SHAPES: Record<string, (size: number) => string> = {
  dots: (n) => fill(".", n),
  "exclamation marks": (n) => fill("!", n),
  "mixed terminators": (n) => fill(".!?…", n),
  "one letter": (n) => fill("a", n),
  spaces: (n) => `a${fill(" ", n - 2)}a`,
  // a sign-off may follow a sentence's end on its line: "(?<=[.!?])[ \t]+[ \t]*thanks" was quadratic here
  "a sentence end, then blanks": (n) => `Ok.${fill(" \t", n - 4)}x`,
  "blank lines": (n) => `a${fill("\n", n - 2)}a`,
  emoji: (n) => fill("😀", n),
  "nested brackets": (n) => fill("([{", n / 2) + fill("}])", n / 2),
  "nested quotes": (n) => fill(`"'“‘«`, n),
  "short sentences": (n) => fill("Ab. ", n),
  "greeting lines": (n) => fill("hi\n", n),
  "slashed dates": (n) => fill("1/2 ", n),
  "code-like ids": (n) => fill("A-1 ", n),
  "a label, then spaces": (n) => `order #${fill(" ", n - 8)}x`,
  "insult chains": (n) => `you ${fill("such a ", n - 5)}!`,
  "Romance street names": (n) => `12 rue ${fill("della ", n - 8)}x`,
  "phone-like": (n) => fill("+1 ", n),
  // issue 41's passes of 2026-12-06: emails written for people, record fields, mail headers, scanned digits
  "spoken at and dots": (n) => fill("a at b dot ", n),
  "spaced at signs": (n) => fill("a @ b . ", n),
  "header labels": (n) => fill("To: Aa ", n),
  "digits a scanner misread": (n) => fill("O1l ", n),
};

/** The text field each offline function reads; its other fields come from its example. */
export const TEXT_FIELD: Record<string, string> = {
  "intent-detection": "text",
  "sentiment-analysis": "text",
  "text-summarize": "text",
  "email-analyze": "email_content",
  "email-workflow": "email_content",
  "email-classification": "email_content",
  "review-analyze": "review",
  "review-summary": "reviews",
  "review-insights": "reviews",
  "comment-analyze": "comment",
  "comment-moderate": "comment",
  "ticket-analyze": "ticket",
  "ticket-workflow": "ticket",
  "json-extractor": "text",
  "search-query-parse": "query",
  "spam-detection": "text",
  "pii-redaction": "text",
};

/** A JSON Schema object nested `levels` deep ({type: object, properties: {a: ...}}): two JSON levels each. */
const nestedSchema = (levels: number): unknown =>
  levels === 0 ? { type: "string" } : { type: "object", properties: { a: nestedSchema(levels - 1) } };

/**
 * Caller schemas shaped to make a schema parser, or the result schema and prompt built from one,
 * blow up (issue 25.1): each well under the 1 MiB body limit and within max_json_depth, so only
 * the schema's own bounds stand in the way. Sent to every function field that takes a schema.
 */
export const SCHEMA_SHAPES: Record<string, () => unknown> = {
  // 98 KB: peeling one "[]" at a time copied the string at each level (2 to 6 s, then a RangeError)
  "[] suffixes": () => ({ email: `string${"[]".repeat(49_000)}` }),
  "nested objects": () => ({ root: nestedSchema(14) }),
  "nested arrays in JSON text": () => `{"a":${'{"type":"array","items":'.repeat(700)}{"type":"string"}${"}".repeat(700)}}`,
  "many fields": () => Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`field_${i}`, "string"])),
  "a long name": () => ({ [fill("n", 90_000)]: "string" }),
  "many allowed values": () => ({ color: Array.from({ length: 5_000 }, (_, i) => `c${i}`) }),
  "allowed values in every field": () =>
    Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f${i}`, Array.from({ length: 100 }, (_, j) => `v${j}`)])),
  "long descriptions": () =>
    Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f${i}`, { type: "string", description: fill("d", 4000) }])),
};

/** Whether a request field takes free-form structure (a schema): somewhere in it a value of any shape. */
function freeForm(s: unknown): boolean {
  if (!s || typeof s !== "object") return false;
  const kind = (s as TSchema)[Kind];
  return kind === "Unknown" || kind === "Any" || Object.values(s).some(freeForm);
}

/** Every (function, request field) that takes a schema, read from the registry so a new one is covered too. */
export function schemaTakingFields(): [AnyFunctionDef, string][] {
  return FUNCTIONS.flatMap((def) =>
    Object.entries(def.request.properties as Record<string, TSchema>)
      .filter(([, s]) => freeForm(s))
      .map(([field]): [AnyFunctionDef, string] => [def, field]),
  );
}

/** The longest /health answer time while `work` runs, probing every 20 ms: how long one request held the thread. */
export async function healthWhile<T>(url: string, work: Promise<T>): Promise<{ result: T; worstMs: number; probes: number }> {
  let done = false;
  const tracked = work.finally(() => {
    done = true;
  });
  let worstMs = 0;
  let probes = 0;
  while (!done) {
    const t = performance.now();
    await fetch(`${url}/health`).then((r) => r.arrayBuffer());
    worstMs = Math.max(worstMs, performance.now() - t);
    probes++;
    await Bun.sleep(20);
  }
  return { result: await tracked, worstMs, probes };
}

/** CPU milliseconds a process's main thread (its event loop) has run so far, from /proc (Linux; 10 ms steps). */
export function mainThreadCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime, fields 14 and 15, in clock ticks (100 a second)
  return (Number(f[11]) + Number(f[12])) * 10;
}

/**
 * /health polled every `everyMs` while `work` runs, each poll sent when due without waiting for the
 * one before, so a held event loop keeps every poll sent meanwhile waiting. For each poll: how long
 * it waited (wall, from the moment it was due) and how much CPU the gateway's main thread (`pid`)
 * ran meanwhile. A poll waits while that thread runs something else: the CPU is the hold, and unlike
 * the wait it does not grow when a busy machine deschedules the gateway or this process.
 */
export async function healthLag<T>(
  url: string,
  work: Promise<T>,
  opts: { everyMs?: number; pid?: number } = {},
): Promise<{ result: T; worstMs: number; worstCpuMs: number; probes: number }> {
  const everyMs = opts.everyMs ?? 10;
  const cpu = opts.pid === undefined ? () => 0 : () => mainThreadCpuMs(opts.pid as number);
  let done = false;
  const tracked = work.finally(() => {
    done = true;
  });
  const waits: Promise<{ ms: number; cpuMs: number }>[] = [];
  const start = performance.now();
  for (let k = 0; !done; k++) {
    const due = start + k * everyMs;
    const ahead = due - performance.now();
    if (ahead > 0) await Bun.sleep(ahead);
    if (done) break;
    const cpu0 = cpu();
    waits.push(
      fetch(`${url}/health`)
        .then((r) => r.arrayBuffer())
        .then(() => ({ ms: performance.now() - due, cpuMs: cpu() - cpu0 })),
    );
  }
  const all = await Promise.all(waits);
  return {
    result: await tracked,
    worstMs: Math.max(0, ...all.map((w) => w.ms)),
    worstCpuMs: Math.max(0, ...all.map((w) => w.cpuMs)),
    probes: all.length,
  };
}

/** The request field's maxLength (a text shaped for a function is cut to what it accepts), else SIZE. */
export function textLimit(def: AnyFunctionDef, field: string): number {
  const s = (def.request.properties as Record<string, TSchema>)[field] as { maxLength?: number } | undefined;
  return Math.min(SIZE, s?.maxLength ?? SIZE);
}

/** The json-extractor request of issue 35.1: one field named by 24 words, a text of 82 of them; 1.1 s of held thread on d793a1c. */
export const FIELD_NAME_FREEZE = {
  text: Array.from({ length: 82 }, () => "a").join(" "),
  schema: { [Array.from({ length: 24 }, () => "a").join("_")]: "string" },
  model: "local",
};
