/**
 * Stored resources of the knowledge features: knowledge bases with their documents and chunks,
 * FAQ collections and chatbots. Every row carries the owning account so each lookup is scoped.
 * The FTS5 index over chunks lives in a custom migration (drizzle cannot express virtual tables).
 */
import { sql } from "drizzle-orm";
import { blob, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./schema";

const now = sql`(cast(unixepoch('subsec') * 1000 as integer))`;

export const knowledgeBases = sqliteTable(
  "knowledge_bases",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull(),
    description: text("description"),
    status: text("status", { enum: ["active", "inactive"] })
      .notNull()
      .default("active"),
    /** bumped on every document change: search requests carry it, so cached answers never go stale */
    revision: integer("revision").notNull().default(0),
    createdAt: integer("created_at").notNull().default(now),
    updatedAt: integer("updated_at").notNull().default(now),
  },
  (t) => [index("knowledge_bases_account_idx").on(t.accountId, t.createdAt)],
);

export const kbDocuments = sqliteTable(
  "kb_documents",
  {
    id: text("id").primaryKey(),
    kbId: text("kb_id")
      .notNull()
      .references(() => knowledgeBases.id, { onDelete: "cascade" }),
    title: text("title"),
    content: text("content").notNull(),
    /** JSON object of scalar values; search filters on it with json_extract */
    metadata: text("metadata").notNull().default("{}"),
    chunkCount: integer("chunk_count").notNull().default(0),
    createdAt: integer("created_at").notNull().default(now),
    /** UTF-8 bytes of content, title and metadata: what the account's knowledge_bytes quota counts */
    bytes: integer("bytes").notNull().default(0),
  },
  (t) => [
    index("kb_documents_kb_idx").on(t.kbId, t.createdAt),
    // covers an account's usage (count and bytes per base) without reading the documents
    index("kb_documents_bytes_idx").on(t.kbId, t.bytes),
  ],
);

/** Overlapping pieces of a document; the FTS5 table kb_chunks_fts indexes (kb_id, title, content) by rowid = id. */
export const kbChunks = sqliteTable(
  "kb_chunks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    kbId: text("kb_id").notNull(),
    documentId: text("document_id")
      .notNull()
      .references(() => kbDocuments.id, { onDelete: "cascade" }),
    ord: integer("ord").notNull(),
    title: text("title"),
    content: text("content").notNull(),
    /** the chunk's canonical search keys (stems, synonyms folded), space-separated: search scores coverage from them without re-tokenizing */
    terms: text("terms").notNull().default(""),
    /** FTS5's token count of the chunk's row (base id, title, content): BM25's document length; 0 until stored (migration 0011 fills old rows) */
    tokens: integer("tokens").notNull().default(0),
    /** float32 vector from a provider's embeddings, when one is configured */
    embedding: blob("embedding", { mode: "buffer" }),
  },
  (t) => [index("kb_chunks_doc_idx").on(t.documentId), index("kb_chunks_kb_idx").on(t.kbId, t.id, t.tokens)],
);

export const faqCollections = sqliteTable(
  "faq_collections",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [index("faq_collections_account_idx").on(t.accountId, t.createdAt)],
);

export const faqEntries = sqliteTable(
  "faq_entries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    collectionId: text("collection_id")
      .notNull()
      .references(() => faqCollections.id, { onDelete: "cascade" }),
    ord: integer("ord").notNull(),
    question: text("question").notNull(),
    answer: text("answer").notNull(),
    /** the id the account sees (publicIdSql) */
    publicId: text("public_id"),
  },
  (t) => [index("faq_entries_collection_idx").on(t.collectionId, t.ord), uniqueIndex("faq_entries_public_id_idx").on(t.publicId)],
);

export const chatbots = sqliteTable(
  "chatbots",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull(),
    mode: text("mode", { enum: ["support", "assistant"] }).notNull(),
    /** JSON array of knowledge base ids (checked against the account on create) */
    knowledgeBaseIds: text("knowledge_base_ids").notNull().default("[]"),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [index("chatbots_account_idx").on(t.accountId, t.createdAt)],
);

export type KnowledgeBaseRow = typeof knowledgeBases.$inferSelect;
export type KbDocumentRow = typeof kbDocuments.$inferSelect;
export type FaqCollectionRow = typeof faqCollections.$inferSelect;
export type FaqEntryRow = typeof faqEntries.$inferSelect;
export type ChatbotRow = typeof chatbots.$inferSelect;
