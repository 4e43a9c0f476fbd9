/**
 * The audit trail's chain (docs/audit.md#the-chain): the canonical serialisation of an entry, its
 * SHA-256, the sealing of a draft onto the chain's head, and the walk `verify` makes.
 */
import { createHash } from "node:crypto";
import { timeOrderedId } from "../ids";
import type { AuditAction, AuditBy, AuditDraft, AuditEntry, AuditRow, VerifyResult } from "./interface";
import { maskSecrets } from "./mask";

/** The one chain of the gateway (the head row's key). */
export const CHAIN = "gateway";
/** The `prev_hash` of the first entry. */
export const GENESIS = "0".repeat(64);

/**
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, strings and numbers as
 * ECMAScript's JSON.stringify writes them (RFC 8785's rules for the values the trail holds), keys
 * whose value is undefined left out. The same value always gives the same text, whatever order its
 * keys were built in.
 */
export function canonical(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error("audit values are finite numbers");
    return JSON.stringify(v);
  }
  if (typeof v === "string" || typeof v === "boolean") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(",")}}`;
  }
  throw new Error(`audit values are JSON values, not ${typeof v}`);
}

/** A stored before/after text back to its value (the text is canonical JSON). */
const parsed = (text: string | null): Record<string, unknown> | null =>
  text === null ? null : (JSON.parse(text) as Record<string, unknown>);

/** An entry's fields after its seq, id and time, in the order the APIs answer them (before and after as values). */
const entryFields = (r: Omit<AuditRow, "hash">) => ({
  actor: r.actor,
  account_id: r.accountId,
  action: r.action,
  target_id: r.targetId,
  before: parsed(r.before),
  after: parsed(r.after),
  client: r.client,
  prev_hash: r.prevHash,
});

/**
 * The text an entry's hash is taken of: the canonical JSON of its fields but `hash` (before and
 * after as values, `at` in ms since the epoch, `prev_hash` the hash of the entry before).
 */
export function hashedText(r: Omit<AuditRow, "hash">): string {
  return canonical({ seq: r.seq, id: r.id, at: r.at, ...entryFields(r) });
}

/** The lower-case hex SHA-256 of an entry's hashed text. */
export const entryHash = (r: Omit<AuditRow, "hash">): string => createHash("sha256").update(hashedText(r)).digest("hex");

/**
 * A draft sealed onto the head: the next seq, the head's hash as `prev_hash`, its own hash. Its
 * before and after are masked here, the one way into the trail (mask.ts): an entry is kept for
 * ever and read by every owner and admin, so no secret may reach it, whichever store wrote it.
 */
export function seal(d: AuditDraft, head: { seq: number; hash: string }, at = Date.now()): AuditRow {
  const row: Omit<AuditRow, "hash"> = {
    seq: head.seq + 1,
    id: timeOrderedId("aud", at),
    at,
    actor: d.actor,
    accountId: d.accountId,
    action: d.action,
    targetId: d.targetId,
    before: d.before === null ? null : canonical(maskSecrets(d.before)),
    after: d.after === null ? null : canonical(maskSecrets(d.after)),
    client: d.client,
    prevHash: head.hash,
  };
  return { ...row, hash: entryHash(row) };
}

/** A stored row as the APIs answer it. */
export const entryView = (r: AuditRow): AuditEntry => ({
  seq: r.seq,
  id: r.id,
  time: new Date(r.at).toISOString(),
  ...entryFields(r),
  hash: r.hash,
});

/** Of two views of a thing, only the fields that differ: its before and after in an entry. */
export function changedFields(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const b: Record<string, unknown> = {};
  const a: Record<string, unknown> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (canonical(before[k] ?? null) === canonical(after[k] ?? null)) continue;
    b[k] = before[k] ?? null;
    a[k] = after[k] ?? null;
  }
  return { before: b, after: a };
}

/**
 * The walk of `verify`: the entries from seq 1 up to the head, in order, a page at a time
 * (`read(afterSeq)` answers the next rows). The first problem found is the answer: a seq missing
 * (a deleted entry), a prev_hash that is not the hash of the entry before (an entry inserted, or
 * one edited and its hash made again), a hash that is not the entry's (an edited entry), or a head
 * that the last entry does not match (entries removed from the end).
 */
export async function walkChain(
  head: { seq: number; hash: string } | null,
  read: (afterSeq: number) => Promise<AuditRow[]> | AuditRow[],
): Promise<VerifyResult> {
  if (!head) return { ok: false, entries: 0, head, broken: { seq: 0, id: null, problem: "the chain's head row is missing" } };
  let prev = { seq: 0, hash: GENESIS };
  let count = 0;
  const broken = (seq: number, id: string | null, problem: string): VerifyResult => ({
    ok: false,
    entries: count,
    head,
    broken: { seq, id, problem },
  });
  for (;;) {
    const rows = (await read(prev.seq)).filter((r) => r.seq <= head.seq);
    for (const r of rows) {
      const want = prev.seq + 1;
      if (r.seq !== want)
        return broken(want, null, `entry ${want} is missing (deleted): the entry after ${prev.seq} is ${r.seq}`);
      if (r.prevHash !== prev.hash)
        return broken(r.seq, r.id, `entry ${r.seq} does not follow entry ${prev.seq}: its prev_hash is not that entry's hash`);
      if (entryHash(r) !== r.hash)
        return broken(r.seq, r.id, `entry ${r.seq} was changed after it was written: its hash does not match`);
      prev = { seq: r.seq, hash: r.hash };
      count++;
    }
    if (rows.length === 0 || prev.seq >= head.seq) break;
  }
  if (prev.seq !== head.seq)
    return broken(prev.seq + 1, null, `entry ${prev.seq + 1} is missing (deleted): the head says the chain ends at ${head.seq}`);
  if (prev.hash !== head.hash) return broken(prev.seq, null, `the head's hash is not entry ${prev.seq}'s: the head was changed`);
  return { ok: true, entries: count, head };
}

/**
 * A change that changed nothing (its before and after given, and both empty: every field the same,
 * `keys update ID --rpm ""` of a limit already unset) is no entry: a trail of `{} -> {}` says nothing.
 */
export function changesNothing(d: AuditDraft): boolean {
  return d.before !== null && d.after !== null && Object.keys(d.before).length === 0 && Object.keys(d.after).length === 0;
}

/** An entry's id, as a store answers it after the append (for tests and logs). */
export type AppendedEntry = Pick<AuditRow, "seq" | "id" | "hash">;

/** A draft from a change's who (`by`), what and the fields before and after (null actor: the account itself). */
export function auditDraft(
  by: AuditBy,
  action: AuditAction,
  accountId: string | null,
  targetId: string | null,
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): AuditDraft {
  return { actor: by.actor ?? accountId ?? "unknown", client: by.client, action, accountId, targetId, before, after };
}
