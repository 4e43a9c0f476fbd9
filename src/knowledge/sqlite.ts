/** The knowledge index in the embedded SQLite file (the default, and one node's alone). */
import type { Storage } from "../storage/db";
import { ChatbotStore } from "./chatbot-store";
import { FaqStore } from "./faq-store";
import type { ChunkVector, KnowledgeIndex, SearchOptions, VectorHits } from "./interface";
import type { Snippet } from "./schemas";
import { searchChunks } from "./search";
import { KnowledgeStore } from "./store";

export class SqliteKnowledgeIndex implements KnowledgeIndex {
  readonly bases: KnowledgeStore;
  readonly faqs: FaqStore;
  readonly chatbots: ChatbotStore;

  constructor(private readonly storage: Storage) {
    this.bases = new KnowledgeStore(storage);
    this.faqs = new FaqStore(storage);
    this.chatbots = new ChatbotStore(storage);
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
