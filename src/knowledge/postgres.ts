/**
 * The knowledge index in PostgreSQL (drizzle/pg 0002_knowledge), shared by every node: the same
 * resources, limits and messages as the SQLite one (sqlite.ts). Each store is a file beside its
 * SQLite twin: bases-postgres.ts, faqs-postgres.ts, chatbots-postgres.ts, search-postgres.ts;
 * creations pass the account's limits under an advisory lock (limits-postgres.ts).
 */
import { type PgStorage, pgCall } from "../storage/postgres";
import { PostgresKnowledgeBases } from "./bases-postgres";
import { PostgresChatbots } from "./chatbots-postgres";
import { PostgresFaqCollections } from "./faqs-postgres";
import type { ChunkVector, KnowledgeIndex, SearchOptions, VectorHits } from "./interface";
import type { Snippet } from "./schemas";
import { MAX_CANDIDATES, searchPostgres } from "./search-postgres";

export class PostgresKnowledgeIndex implements KnowledgeIndex {
  readonly bases: PostgresKnowledgeBases;
  readonly faqs: PostgresFaqCollections;
  readonly chatbots: PostgresChatbots;

  /** `maxCandidates`: matching chunks BM25 scores per search (tests lower it to reach the ts_rank path) */
  constructor(
    private readonly pg: PgStorage,
    private readonly maxCandidates = MAX_CANDIDATES,
  ) {
    this.bases = new PostgresKnowledgeBases(pg);
    this.faqs = new PostgresFaqCollections(pg);
    this.chatbots = new PostgresChatbots(pg);
  }

  search(opts: SearchOptions, vectors?: VectorHits): Promise<Snippet[]> {
    return pgCall(this.pg, () => searchPostgres(this.pg, opts, vectors, this.maxCandidates));
  }

  chunkVectors(kbId: string, dims: number): Promise<ChunkVector[]> {
    return pgCall(this.pg, async () => {
      const rows = await this.pg.sql`
        SELECT id, embedding FROM kb_chunks WHERE kb_id = ${kbId} AND embedding IS NOT NULL AND length(embedding) = ${dims * 4}
        ORDER BY id`;
      return (rows as { id: number; embedding: Uint8Array }[]).map((r) => ({ id: Number(r.id), embedding: r.embedding }));
    });
  }
}
