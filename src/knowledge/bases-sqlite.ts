/**
 * Knowledge bases and their documents in SQLite, always scoped to one account: a row of another
 * account is reported exactly like a missing one (404 not_found).
 */
import { and, count, desc, eq, sql } from "drizzle-orm";
import type { KnowledgeQuota } from "../config";
import { invalidRequest, notFound } from "../errors";
import { newId } from "../ids";
import type { Storage } from "../storage/db";
import { fillChunkTokens } from "../storage/fts5";
import { chatbots, type KbDocumentRow, type KnowledgeBaseRow, kbDocuments, knowledgeBases } from "../storage/schema-kb";
import { toBlob } from "./embeddings";
import type {
  DocumentView,
  KbStatus,
  KnowledgeBases,
  KnowledgeBaseView,
  KnowledgeUsage,
  Page,
  Paged,
  PreparedDocument,
} from "./interface";
import { basesQuotaError, checkDocumentsQuota } from "./quota";
import { chunkTerms } from "./ranking";
import { LIMITS } from "./schemas";
import { yieldToLoop } from "./slices";
import { SqliteKnowledgeStore } from "./sqlite-store";

const iso = (ms: number) => new Date(ms).toISOString();

/** Chunks per write transaction of an upload: about 25 KB of text, a few milliseconds of FTS5 indexing. */
const CHUNK_SLICE = 25;

/** Knowledge bases in the embedded SQLite file; chunks indexed by FTS5 (drizzle/0002, 0004). */
export class SqliteKnowledgeBases extends SqliteKnowledgeStore implements KnowledgeBases {
  create(
    accountId: string,
    input: { name: string; description?: string; status?: KbStatus },
    maxBases = LIMITS.knowledgeBasesPerAccount,
  ): KnowledgeBaseView {
    const owned =
      this.db.select({ n: count() }).from(knowledgeBases).where(eq(knowledgeBases.accountId, accountId)).get()?.n ?? 0;
    if (owned >= maxBases) throw basesQuotaError(maxBases);
    const id = newId("kb");
    this.db
      .insert(knowledgeBases)
      .values({ id, accountId, name: input.name, description: input.description ?? null, status: input.status ?? "active" })
      .run();
    return this.get(accountId, id);
  }

  /** The row, or 404 when it does not exist or belongs to another account. */
  row(accountId: string, id: string): KnowledgeBaseRow {
    return this.ownedRow(knowledgeBases, accountId, id, "knowledge base");
  }

  get(accountId: string, id: string): KnowledgeBaseView {
    return this.view(this.row(accountId, id));
  }

  list(accountId: string, page: Page): Paged<KnowledgeBaseView> {
    const order = [desc(knowledgeBases.createdAt), desc(knowledgeBases.id)];
    return this.pageOf(knowledgeBases, eq(knowledgeBases.accountId, accountId), order, page, (r) => this.view(r));
  }

  update(accountId: string, id: string, patch: { name?: string; description?: string; status?: KbStatus }): KnowledgeBaseView {
    this.row(accountId, id);
    const set: Partial<KnowledgeBaseRow> = { updatedAt: Date.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.status !== undefined) set.status = patch.status;
    this.db.update(knowledgeBases).set(set).where(eq(knowledgeBases.id, id)).run();
    return this.get(accountId, id);
  }

  /**
   * Deletes the base; documents and chunks go by cascade and the FTS triggers drop them from the
   * index; the account's chatbots stop naming it (they listed a deleted base, declining every chat
   * for it, with no way to change their bases), in the same transaction.
   */
  delete(accountId: string, id: string): void {
    this.row(accountId, id);
    this.storage.sqlite.transaction(() => {
      this.db.delete(knowledgeBases).where(eq(knowledgeBases.id, id)).run();
      const bots = this.db
        .select({ id: chatbots.id, kbIds: chatbots.knowledgeBaseIds })
        .from(chatbots)
        .where(and(eq(chatbots.accountId, accountId), sql`instr(${chatbots.knowledgeBaseIds}, ${JSON.stringify(id)}) > 0`))
        .all();
      for (const b of bots) {
        const kept = (JSON.parse(b.kbIds) as string[]).filter((k) => k !== id);
        this.db
          .update(chatbots)
          .set({ knowledgeBaseIds: JSON.stringify(kept) })
          .where(eq(chatbots.id, b.id))
          .run();
      }
    })();
  }

  usage(accountId: string): KnowledgeUsage {
    return sqliteKnowledgeUsage(this.storage, accountId);
  }

  /**
   * Stores and indexes documents (chunked by `prepareDocuments`, with vectors when hybrid search
   * is on). The limits and the quota are checked and the documents' rows written in one write
   * transaction, so concurrent uploads cannot pass them together; the chunks then go in slices of
   * their own transactions with the event loop free between them (FTS5 indexes about 100 ms of
   * text a MB). Should a slice fail, the documents are deleted again: all or none.
   */
  async addDocuments(
    accountId: string,
    kbId: string,
    prepared: PreparedDocument[],
    quota?: Pick<KnowledgeQuota, "documents" | "bytes">,
  ): Promise<DocumentView[]> {
    this.row(accountId, kbId);
    if (prepared.some((d) => d.chunks.length === 0)) throw invalidRequest("a document has no text", "documents");
    const docs = prepared.map((d) => ({ ...d, id: newId("doc") }));
    this.storage.sqlite
      .transaction(() => {
        const have = this.counts(kbId);
        const newChunks = prepared.reduce((s, d) => s + d.chunks.length, 0);
        if (have.documents + prepared.length > LIMITS.documentsPerKnowledgeBase) {
          throw invalidRequest(
            `a knowledge base holds at most ${LIMITS.documentsPerKnowledgeBase} documents (it has ${have.documents})`,
            "documents",
          );
        }
        if (have.chunks + newChunks > LIMITS.chunksPerKnowledgeBase) {
          throw invalidRequest(
            `a knowledge base holds at most ${LIMITS.chunksPerKnowledgeBase} chunks (it has ${have.chunks}, these documents add ${newChunks})`,
            "documents",
          );
        }
        if (quota) checkDocumentsQuota(this.usage(accountId), prepared, quota);
        for (const d of docs) {
          this.db
            .insert(kbDocuments)
            .values({
              id: d.id,
              kbId,
              title: d.title,
              content: d.content,
              metadata: JSON.stringify(d.metadata),
              chunkCount: d.chunks.length,
              bytes: d.bytes,
            })
            .run();
        }
      })
      .immediate();
    try {
      await this.insertChunks(kbId, docs);
    } catch (err) {
      // the chunks already in go with their documents (cascade, and the FTS triggers)
      this.storage.sqlite.transaction(() => {
        for (const d of docs) this.db.delete(kbDocuments).where(eq(kbDocuments.id, d.id)).run();
        this.touch(kbId);
      })();
      this.row(accountId, kbId); // the base deleted meanwhile (its documents went with it): 404
      throw err;
    }
    return docs.map((d) =>
      this.documentView(this.db.select().from(kbDocuments).where(eq(kbDocuments.id, d.id)).get() as KbDocumentRow),
    );
  }

  /** The documents' chunks, CHUNK_SLICE to a transaction, yielding to the event loop between them. */
  private async insertChunks(kbId: string, docs: (PreparedDocument & { id: string })[]): Promise<void> {
    // A prepared statement, not the query builder: a large upload inserts thousands of chunks.
    const addChunk = this.storage.sqlite.query(
      "INSERT INTO kb_chunks (kb_id, document_id, ord, title, content, terms, embedding) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    const rows = docs.flatMap((d) => d.chunks.map((chunk, ord) => ({ d, chunk, ord })));
    for (let at = 0; at < rows.length; at += CHUNK_SLICE) {
      if (at > 0) await yieldToLoop();
      this.storage.sqlite
        .transaction(() => {
          let firstChunk: number | undefined;
          for (const { d, chunk, ord } of rows.slice(at, at + CHUNK_SLICE)) {
            const vector = d.vectors?.[ord];
            const terms = d.terms?.[ord] ?? chunkTerms(d.title, chunk);
            const added = addChunk.run(kbId, d.id, ord, d.title, chunk, terms, vector ? toBlob(vector) : null);
            firstChunk ??= Number(added.lastInsertRowid);
          }
          // each chunk's token count, BM25's document length, as FTS5 counted it
          if (firstChunk !== undefined) fillChunkTokens(this.storage.sqlite, firstChunk);
          if (at + CHUNK_SLICE >= rows.length) this.touch(kbId);
        })
        .immediate();
    }
  }

  listDocuments(accountId: string, kbId: string, page: Page): Paged<DocumentView> {
    this.row(accountId, kbId);
    const order = [kbDocuments.createdAt, kbDocuments.id];
    return this.pageOf(kbDocuments, eq(kbDocuments.kbId, kbId), order, page, (r) => this.documentView(r));
  }

  deleteDocument(accountId: string, kbId: string, docId: string): void {
    this.row(accountId, kbId);
    this.storage.sqlite.transaction(() => {
      const gone = this.db
        .delete(kbDocuments)
        .where(and(eq(kbDocuments.id, docId), eq(kbDocuments.kbId, kbId)))
        .returning({ id: kbDocuments.id })
        .all();
      if (gone.length === 0) throw notFound("document");
      this.touch(kbId);
    })();
  }

  private touch(kbId: string): void {
    this.db
      .update(knowledgeBases)
      .set({ revision: sql`${knowledgeBases.revision} + 1`, updatedAt: Date.now() })
      .where(eq(knowledgeBases.id, kbId))
      .run();
  }

  private counts(kbId: string): { documents: number; chunks: number } {
    const r = this.db
      .select({ documents: count(), chunks: sql<number>`coalesce(sum(${kbDocuments.chunkCount}), 0)` })
      .from(kbDocuments)
      .where(eq(kbDocuments.kbId, kbId))
      .get();
    return { documents: r?.documents ?? 0, chunks: Number(r?.chunks ?? 0) };
  }

  private view(r: KnowledgeBaseRow): KnowledgeBaseView {
    const c = this.counts(r.id);
    return {
      id: r.id,
      name: r.name,
      description: r.description,
      status: r.status,
      document_count: c.documents,
      chunk_count: c.chunks,
      created_at: iso(r.createdAt),
      updated_at: iso(r.updatedAt),
    };
  }

  private documentView(r: KbDocumentRow): DocumentView {
    return {
      id: r.id,
      knowledge_base_id: r.kbId,
      title: r.title,
      metadata: JSON.parse(r.metadata) as Record<string, unknown>,
      characters: r.content.length,
      chunk_count: r.chunkCount,
      preview: r.content.slice(0, 200),
      created_at: iso(r.createdAt),
    };
  }
}

/**
 * What the account stores (its quota's figures), one query. kb_documents_bytes_idx covers the
 * documents' sums (the documents themselves are never read); the FAQs' bytes are their questions'
 * and answers' UTF-8 lengths.
 */
export function sqliteKnowledgeUsage(storage: Storage, accountId: string): KnowledgeUsage {
  const r = storage.sqlite
    .query<{ bases: number; documents: number; bytes: number; faqs: number; faq_bytes: number; chatbots: number }, [string]>(
      `SELECT (SELECT count(*) FROM knowledge_bases WHERE account_id = ?1) AS bases, count(d.kb_id) AS documents,
        coalesce(sum(d.bytes), 0) AS bytes,
        (SELECT count(*) FROM faq_collections WHERE account_id = ?1) AS faqs,
        (SELECT coalesce(sum(length(CAST(e.question AS BLOB)) + length(CAST(e.answer AS BLOB))), 0) FROM faq_entries e
          WHERE e.collection_id IN (SELECT id FROM faq_collections WHERE account_id = ?1)) AS faq_bytes,
        (SELECT count(*) FROM chatbots WHERE account_id = ?1) AS chatbots
        FROM kb_documents d WHERE d.kb_id IN (SELECT id FROM knowledge_bases WHERE account_id = ?1)`,
    )
    .get(accountId);
  return {
    bases: r?.bases ?? 0,
    documents: r?.documents ?? 0,
    bytes: (r?.bytes ?? 0) + (r?.faq_bytes ?? 0),
    faqCollections: r?.faqs ?? 0,
    chatbots: r?.chatbots ?? 0,
  };
}
