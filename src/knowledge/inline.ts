/**
 * The inline search variant: documents sent with the request are chunked into a throwaway
 * in-memory SQLite database with the same schema and FTS5 index as the stored ones, searched with
 * the same code, and dropped. Nothing reaches the disk.
 */
import { Database } from "bun:sqlite";
import { migrate } from "../storage/db";
import { fillChunkTokens } from "../storage/fts5";
import { chunkText } from "./chunking";
import type { DocumentInput, FilterMetadata, Snippet } from "./schemas";
import { chunkTerms, searchChunks } from "./search-sqlite";

let template: Uint8Array | null = null;

/** A migrated empty database, serialized once: deserializing it is much cheaper than migrating per request. */
function emptyIndex(): Database {
  if (!template) {
    const db = new Database(":memory:");
    migrate(db);
    template = db.serialize();
    db.close();
  }
  return Database.deserialize(template);
}

/**
 * The inline base's id: two FTS5 tokens, like a stored base's (`kb_` and 20 characters), so each
 * chunk's token count, BM25's document length, is the same inline and stored, and so are the scores.
 */
const INLINE_KB = "kb_inline";

export function searchInline(
  documents: DocumentInput[],
  query: string,
  topK: number,
  filter?: FilterMetadata,
  minScore?: number,
): Snippet[] {
  const db = emptyIndex();
  try {
    const addDoc = db.query(
      "INSERT INTO kb_documents (id, kb_id, title, content, metadata, chunk_count) VALUES (?, ?, ?, ?, ?, ?)",
    );
    const addChunk = db.query("INSERT INTO kb_chunks (kb_id, document_id, ord, title, content, terms) VALUES (?, ?, ?, ?, ?, ?)");
    db.transaction(() => {
      documents.forEach((d, i) => {
        const doc = typeof d === "string" ? { content: d } : d;
        const chunks = chunkText(doc.content);
        const id = `doc_${i}`;
        const title = doc.title?.trim() || null;
        addDoc.run(id, INLINE_KB, title, doc.content, JSON.stringify(doc.metadata ?? {}), chunks.length);
        for (const [ord, c] of chunks.entries()) addChunk.run(INLINE_KB, id, ord, title, c, chunkTerms(title, c));
      });
      fillChunkTokens(db);
    })();
    // Inline documents have no stored id; the snippet says which one by its position.
    return searchChunks(db, { kbIds: [INLINE_KB], query, topK, filter, minScore }).map(({ knowledge_base_id: _kb, ...s }) => ({
      ...s,
      document_index: Number(s.document_id?.slice(4)),
      document_id: null,
    }));
  } finally {
    db.close();
  }
}
