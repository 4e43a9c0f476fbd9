/**
 * FTS5's own records read back from the SQLite file: the token counts FTS5 keeps for bm25() in the
 * knowledge index (drizzle/0002, 0004, 0011). Storage-level: migration 0011 fills the counts of
 * chunks indexed before it, and the knowledge store fills those of each upload.
 */
import type { Database } from "bun:sqlite";

/** The varints of an FTS5 record (SQLite's varint format: 7 bits a byte, high bit set while more follow, the 9th byte whole). */
export function varints(blob: Uint8Array): number[] {
  const out: number[] = [];
  let i = 0;
  while (i < blob.length) {
    let v = 0;
    for (let k = 0; i < blob.length; k++) {
      const b = blob[i++] as number;
      if (k === 8) {
        v = v * 256 + b;
        break;
      }
      v = v * 128 + (b & 0x7f);
      if (b < 0x80) break;
    }
    out.push(v);
  }
  return out;
}

/** The sum of the varints of an FTS5 %_docsize blob (one per column): the row's token count. */
export const docsizeTokens = (sz: Uint8Array): number => varints(sz).reduce((a, b) => a + b, 0);

/**
 * Stores FTS5's token count (from kb_chunks_fts_docsize, which FTS5 keeps for bm25()) in each
 * chunk from id `fromId` on that has none yet: the chunks an upload just added, or every chunk
 * indexed before migration 0011. Returns how many it filled.
 */
export function fillChunkTokens(sqlite: Database, fromId = 0): number {
  const rows = sqlite
    .query<{ id: number; sz: Uint8Array }, [number]>(
      "SELECT c.id, s.sz FROM kb_chunks c JOIN kb_chunks_fts_docsize s ON s.id = c.id WHERE c.id >= ? AND c.tokens = 0",
    )
    .all(fromId);
  const set = sqlite.query("UPDATE kb_chunks SET tokens = ? WHERE id = ?");
  for (const r of rows) set.run(docsizeTokens(r.sz), r.id);
  return rows.length;
}
