/**
 * Knowledge bases and their documents in PostgreSQL (drizzle/pg 0002_knowledge), always scoped to
 * one account, with the SQLite one's limits and messages (bases-sqlite.ts). Uploads under the
 * base's row lock and the account's knowledge lock, so two nodes cannot pass a limit together.
 */
import type { KnowledgeQuota } from "../config";
import { invalidRequest, notFound } from "../errors";
import { newId } from "../ids";
import { type PgStorage, pgCall } from "../storage/postgres";
import { tokenizeRowsInSlices, tsvectorLiteral } from "./fts-tokens";
import type {
  DocumentView,
  KbStatus,
  KnowledgeBaseRef,
  KnowledgeBases,
  KnowledgeBaseView,
  KnowledgeUsage,
  Page,
  Paged,
  PreparedDocument,
} from "./interface";
import { paged } from "./interface";
import { lockAccount, withinLimit } from "./limits-postgres";
import { basesQuotaError, checkDocumentsQuota } from "./quota";
import { chunkTerms } from "./ranking";
import { LIMITS } from "./schemas";
import { mapInSlices } from "./slices";

const iso = (ms: unknown) => new Date(Number(ms)).toISOString();

/** What the account stores (its quota's figures), one query: documents, FAQ collections (their questions' and answers' UTF-8 bytes), chatbots. */
export const USAGE = `SELECT (SELECT count(*)::int FROM knowledge_bases WHERE account_id = $1) AS bases,
  count(d.kb_id)::int AS documents, coalesce(sum(d.bytes), 0)::bigint AS bytes,
  (SELECT count(*)::int FROM faq_collections WHERE account_id = $1) AS faqs,
  (SELECT coalesce(sum(octet_length(e.question) + octet_length(e.answer)), 0)::bigint FROM faq_entries e
    WHERE e.collection_id IN (SELECT id FROM faq_collections WHERE account_id = $1)) AS faq_bytes,
  (SELECT count(*)::int FROM chatbots WHERE account_id = $1) AS chatbots
  FROM kb_documents d WHERE d.kb_id IN (SELECT id FROM knowledge_bases WHERE account_id = $1)`;

export const usageOf = (r: Record<string, unknown> | undefined): KnowledgeUsage => ({
  bases: Number(r?.bases ?? 0),
  documents: Number(r?.documents ?? 0),
  bytes: Number(r?.bytes ?? 0) + Number(r?.faq_bytes ?? 0),
  faqCollections: Number(r?.faqs ?? 0),
  chatbots: Number(r?.chatbots ?? 0),
});

type KbRow = {
  id: string;
  name: string;
  description: string | null;
  status: KbStatus;
  revision: number;
  created_at: string;
  updated_at: string;
  documents: number;
  chunks: number;
};

const KB_VIEW = `SELECT k.id, k.name, k.description, k.status, k.revision, k.created_at, k.updated_at,
  (SELECT count(*)::int FROM kb_documents d WHERE d.kb_id = k.id) AS documents,
  (SELECT coalesce(sum(d.chunk_count), 0)::int FROM kb_documents d WHERE d.kb_id = k.id) AS chunks
  FROM knowledge_bases k`;

const kbView = (r: KbRow): KnowledgeBaseView => ({
  id: r.id,
  name: r.name,
  description: r.description,
  status: r.status,
  document_count: Number(r.documents),
  chunk_count: Number(r.chunks),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

type DocRow = {
  id: string;
  kb_id: string;
  title: string | null;
  content: string;
  /** JSON text, as stored (json keeps the keys in the order they were sent) */
  metadata: string;
  chunk_count: number;
  created_at: string;
};

const documentView = (r: DocRow): DocumentView => ({
  id: r.id,
  knowledge_base_id: r.kb_id,
  title: r.title,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  characters: r.content.length,
  chunk_count: Number(r.chunk_count),
  preview: r.content.slice(0, 200),
  created_at: iso(r.created_at),
});

/** Rows per INSERT of chunks (9 parameters each, under PostgreSQL's 65,535). */
const CHUNK_BATCH = 500;

export class PostgresKnowledgeBases implements KnowledgeBases {
  constructor(private readonly pg: PgStorage) {}

  create(
    accountId: string,
    input: { name: string; description?: string; status?: KbStatus },
    maxBases: number = LIMITS.knowledgeBasesPerAccount,
  ): Promise<KnowledgeBaseView> {
    return pgCall(this.pg, async () => {
      const id = newId("kb");
      await this.pg.sql.begin(async (tx) => {
        await withinLimit(tx, accountId, "knowledge_bases", maxBases, "knowledge bases", () => basesQuotaError(maxBases));
        await tx`
          INSERT INTO knowledge_bases (id, account_id, name, description, status)
          VALUES (${id}, ${accountId}, ${input.name}, ${input.description ?? null}, ${input.status ?? "active"})`;
      });
      return this.get(accountId, id);
    });
  }

  row(accountId: string, id: string): Promise<KnowledgeBaseRef> {
    return pgCall(this.pg, async () => {
      const [r] = await this.pg.sql`
        SELECT id, revision, status FROM knowledge_bases WHERE id = ${id} AND account_id = ${accountId}`;
      if (!r) throw notFound("knowledge base");
      return { id: r.id, revision: Number(r.revision), status: r.status };
    });
  }

  get(accountId: string, id: string): Promise<KnowledgeBaseView> {
    return pgCall(this.pg, async () => {
      const [r] = (await this.pg.sql.unsafe(`${KB_VIEW} WHERE k.id = $1 AND k.account_id = $2`, [id, accountId])) as KbRow[];
      if (!r) throw notFound("knowledge base");
      return kbView(r);
    });
  }

  list(accountId: string, page: Page): Promise<Paged<KnowledgeBaseView>> {
    return pgCall(this.pg, async () => {
      const [[total], rows] = await Promise.all([
        this.pg.sql`SELECT count(*)::int AS n FROM knowledge_bases WHERE account_id = ${accountId}`,
        this.pg.sql.unsafe(`${KB_VIEW} WHERE k.account_id = $1 ORDER BY k.created_at DESC, k.id DESC LIMIT $2 OFFSET $3`, [
          accountId,
          page.limit,
          page.offset,
        ]) as Promise<KbRow[]>,
      ]);
      return paged(rows.map(kbView), Number(total?.n ?? 0), page);
    });
  }

  update(
    accountId: string,
    id: string,
    patch: { name?: string; description?: string; status?: KbStatus },
  ): Promise<KnowledgeBaseView> {
    return pgCall(this.pg, async () => {
      await this.row(accountId, id);
      const params: unknown[] = [Date.now()];
      const set = ["updated_at = $1"];
      for (const [column, value] of Object.entries(patch)) {
        if (value === undefined || !["name", "description", "status"].includes(column)) continue;
        params.push(value);
        set.push(`${column} = $${params.length}`);
      }
      params.push(id, accountId);
      await this.pg.sql.unsafe(
        `UPDATE knowledge_bases SET ${set.join(", ")} WHERE id = $${params.length - 1} AND account_id = $${params.length}`,
        params,
      );
      return this.get(accountId, id);
    });
  }

  /** Deletes the base (documents and chunks by cascade); the account's chatbots stop naming it, in the same transaction. */
  delete(accountId: string, id: string): Promise<void> {
    return pgCall(this.pg, async () => {
      await this.pg.sql.begin(async (tx) => {
        const gone = await tx`DELETE FROM knowledge_bases WHERE id = ${id} AND account_id = ${accountId} RETURNING id`;
        if (gone.length === 0) throw notFound("knowledge base");
        await tx`UPDATE chatbots SET knowledge_base_ids = knowledge_base_ids - ${id}::text
          WHERE account_id = ${accountId} AND knowledge_base_ids @> ${JSON.stringify([id])}::text::jsonb`;
      });
    });
  }

  usage(accountId: string): Promise<KnowledgeUsage> {
    return pgCall(this.pg, async () => usageOf((await this.pg.sql.unsafe(USAGE, [accountId]))[0]));
  }

  async addDocuments(
    accountId: string,
    kbId: string,
    prepared: PreparedDocument[],
    quota?: Pick<KnowledgeQuota, "documents" | "bytes">,
  ): Promise<DocumentView[]> {
    // FTS5's tokens, the tsvectors and term keys, outside the transaction and in slices: the CPU
    // work holds no lock and leaves the event loop free between slices
    const docs = prepared.map((d) => ({ ...d, id: newId("doc") }));
    const rows = docs.flatMap((d) =>
      d.chunks.map((content, ord) => ({ doc: d, content, ord, vector: d.vectors?.[ord] ?? null })),
    );
    const tokens = await tokenizeRowsInSlices(rows.map((r) => ({ kbId, title: r.doc.title, content: r.content })));
    const indexed = await mapInSlices(rows, (r, i) => {
      const t = tokens[i] as Parameters<typeof tsvectorLiteral>[0];
      return { count: t.count, tsv: tsvectorLiteral(t), terms: r.doc.terms?.[r.ord] ?? chunkTerms(r.doc.title, r.content) };
    });
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        // the account's lock first (as base creation takes it), then the base's row: one order, no deadlock
        if (quota) await lockAccount(tx, accountId);
        const [kb] = await tx`SELECT id FROM knowledge_bases WHERE id = ${kbId} AND account_id = ${accountId} FOR UPDATE`;
        if (!kb) throw notFound("knowledge base");
        const [have] = await tx`
          SELECT count(*)::int AS documents, coalesce(sum(chunk_count), 0)::int AS chunks FROM kb_documents WHERE kb_id = ${kbId}`;
        const documents = Number(have?.documents ?? 0);
        const chunks = Number(have?.chunks ?? 0);
        const newChunks = docs.reduce((s, d) => s + d.chunks.length, 0);
        if (documents + docs.length > LIMITS.documentsPerKnowledgeBase) {
          throw invalidRequest(
            `a knowledge base holds at most ${LIMITS.documentsPerKnowledgeBase} documents (it has ${documents})`,
            "documents",
          );
        }
        if (chunks + newChunks > LIMITS.chunksPerKnowledgeBase) {
          throw invalidRequest(
            `a knowledge base holds at most ${LIMITS.chunksPerKnowledgeBase} chunks (it has ${chunks}, these documents add ${newChunks})`,
            "documents",
          );
        }
        if (docs.some((d) => d.chunks.length === 0)) throw invalidRequest("a document has no text", "documents");
        if (quota) checkDocumentsQuota(usageOf((await tx.unsafe(USAGE, [accountId]))[0]), docs, quota);
        const views: DocumentView[] = [];
        // one by one: each document's created_at follows the previous one, as on SQLite
        for (const d of docs) {
          const [row] = await tx`
            INSERT INTO kb_documents (id, kb_id, title, content, metadata, chunk_count, bytes)
            VALUES (${d.id}, ${kbId}, ${d.title}, ${d.content}, ${JSON.stringify(d.metadata)}::text::json, ${d.chunks.length}, ${d.bytes})
            RETURNING id, kb_id, title, content, metadata::text AS metadata, chunk_count, created_at`;
          views.push(documentView(row as DocRow));
        }
        for (let at = 0; at < rows.length; at += CHUNK_BATCH) {
          const params: unknown[] = [];
          const values = rows.slice(at, at + CHUNK_BATCH).map((r, i) => {
            const x = indexed[at + i] as (typeof indexed)[number];
            params.push(
              kbId,
              r.doc.id,
              r.ord,
              r.doc.title,
              r.content,
              x.terms,
              x.count,
              x.tsv,
              r.vector ? Buffer.from(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength) : null,
            );
            const p = params.length - 9;
            return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6}, $${p + 7}, $${p + 8}::tsvector, $${p + 9}::bytea)`;
          });
          await tx.unsafe(
            `INSERT INTO kb_chunks (kb_id, document_id, ord, title, content, terms, tokens, tsv, embedding) VALUES ${values.join(", ")}`,
            params,
          );
        }
        await tx`UPDATE knowledge_bases SET revision = revision + 1, updated_at = ${Date.now()} WHERE id = ${kbId}`;
        return views;
      }),
    );
  }

  listDocuments(accountId: string, kbId: string, page: Page): Promise<Paged<DocumentView>> {
    return pgCall(this.pg, async () => {
      await this.row(accountId, kbId);
      const [[total], rows] = await Promise.all([
        this.pg.sql`SELECT count(*)::int AS n FROM kb_documents WHERE kb_id = ${kbId}`,
        this.pg.sql`
          SELECT id, kb_id, title, content, metadata::text AS metadata, chunk_count, created_at FROM kb_documents WHERE kb_id = ${kbId}
          ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}` as Promise<DocRow[]>,
      ]);
      return paged(rows.map(documentView), Number(total?.n ?? 0), page);
    });
  }

  deleteDocument(accountId: string, kbId: string, docId: string): Promise<void> {
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const [kb] = await tx`SELECT id FROM knowledge_bases WHERE id = ${kbId} AND account_id = ${accountId} FOR UPDATE`;
        if (!kb) throw notFound("knowledge base");
        const gone = await tx`DELETE FROM kb_documents WHERE id = ${docId} AND kb_id = ${kbId} RETURNING id`;
        if (gone.length === 0) throw notFound("document");
        await tx`UPDATE knowledge_bases SET revision = revision + 1, updated_at = ${Date.now()} WHERE id = ${kbId}`;
      }),
    );
  }
}
