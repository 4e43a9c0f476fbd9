/**
 * The knowledge index in the embedded SQLite file (the default, and one node's alone). Each store is
 * a file beside its PostgreSQL twin: bases-sqlite.ts, faqs-sqlite.ts, chatbots-sqlite.ts, search-sqlite.ts.
 */
import type { Storage } from "../storage/db";
import { SqliteKnowledgeBases } from "./bases-sqlite";
import { SqliteChatbots } from "./chatbots-sqlite";
import { SqliteFaqCollections } from "./faqs-sqlite";
import type { ChunkVector, KnowledgeIndex, SearchOptions, VectorHits } from "./interface";
import type { Snippet } from "./schemas";
import { searchChunks } from "./search-sqlite";

export class SqliteKnowledgeIndex implements KnowledgeIndex {
  readonly bases: SqliteKnowledgeBases;
  readonly faqs: SqliteFaqCollections;
  readonly chatbots: SqliteChatbots;

  constructor(private readonly storage: Storage) {
    this.bases = new SqliteKnowledgeBases(storage);
    this.faqs = new SqliteFaqCollections(storage);
    this.chatbots = new SqliteChatbots(storage);
  }

  search(opts: SearchOptions, vectors?: VectorHits): Snippet[] {
    return searchChunks(this.storage.sqlite, opts, vectors);
  }

  chunkVectors(kbId: string, dims: number): ChunkVector[] {
    return this.storage.sqlite
      .query<ChunkVector, [string, number]>(
        // in id order, as on PostgreSQL: ties in similarity keep it (the kb_id index is ordered by token count too)
        "SELECT id, embedding FROM kb_chunks WHERE kb_id = ? AND embedding IS NOT NULL AND length(embedding) = ? ORDER BY id",
      )
      .all(kbId, dims * 4);
  }
}
