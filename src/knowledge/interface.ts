/**
 * The knowledge index: knowledge bases with their documents and chunks, full-text plus vector
 * search over them, FAQ collections and chatbots. Every call is scoped to one account: a row of
 * another account is reported exactly like a missing one (404 not_found). Two implementations:
 * the embedded SQLite file (sqlite.ts, FTS5) and PostgreSQL (postgres.ts, tsvector), shared by
 * every node. Methods answer at once (SQLite) or later (PostgreSQL).
 */
import type { KnowledgeQuota } from "../config";
import type { MaybePromise } from "../maybe";
import type { CHATBOT_MODES, FilterMetadata, KB_STATUSES, Snippet } from "./schemas";

export type KbStatus = (typeof KB_STATUSES)[number];
export type ChatbotMode = (typeof CHATBOT_MODES)[number];

export interface Page {
  limit: number;
  offset: number;
}

export interface Paged<T> {
  data: T[];
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

export function paged<T>(data: T[], total: number, page: Page): Paged<T> {
  return { data, total, limit: page.limit, offset: page.offset, has_more: page.offset + data.length < total };
}

export interface KnowledgeBaseView {
  id: string;
  name: string;
  description: string | null;
  status: KbStatus;
  document_count: number;
  chunk_count: number;
  created_at: string;
  updated_at: string;
}

export interface DocumentView {
  id: string;
  knowledge_base_id: string;
  title: string | null;
  metadata: Record<string, unknown>;
  characters: number;
  chunk_count: number;
  preview: string;
  created_at: string;
}

export interface FaqCollectionView {
  id: string;
  name: string;
  faq_count: number;
  created_at: string;
  faqs?: { id: string; question: string; answer: string }[];
}

export interface ChatbotView {
  id: string;
  name: string;
  mode: ChatbotMode;
  knowledge_base_ids: string[];
  created_at: string;
}

/** What search and the answer cache need of a base: its revision moves on every document change. */
export interface KnowledgeBaseRef {
  id: string;
  revision: number;
  status: KbStatus;
}

export interface PreparedDocument {
  title: string | null;
  content: string;
  metadata: Record<string, unknown>;
  chunks: string[];
  /** UTF-8 bytes of content, title and metadata (chunking.ts documentBytes): the quota's measure */
  bytes: number;
  /** each chunk's term keys (ranking.ts chunkTerms), when computed ahead of the write */
  terms?: string[];
  /** one unit vector per chunk, when a provider embeds them */
  vectors?: Float32Array[];
}

/** What an account stores, counted over all its knowledge bases, FAQ collections and chatbots (docs/quotas.md). */
export interface KnowledgeUsage {
  bases: number;
  documents: number;
  /** UTF-8 bytes of its documents (content, title, metadata) and of its FAQ collections' questions and answers */
  bytes: number;
  faqCollections: number;
  chatbots: number;
}

export interface SearchOptions {
  kbIds: string[];
  query: string;
  topK: number;
  filter?: FilterMetadata;
  /** hits scoring below this are left out; when absent DEFAULT_MIN_SCORE (0: recall-first) */
  minScore?: number;
}

/** The query's unit vector and the knowledge bases' nearest chunks to it (hybrid search). */
export interface VectorHits {
  query: Float32Array;
  nearest: { id: number; similarity: number }[];
}

/** A chunk's stored vector (float32, unit length). */
export interface ChunkVector {
  id: number;
  embedding: Uint8Array;
}

export interface KnowledgeBases {
  /** 403 forbidden when the account already holds `maxBases` (its plan's knowledge_bases quota). */
  create(
    accountId: string,
    input: { name: string; description?: string; status?: KbStatus },
    maxBases?: number,
  ): MaybePromise<KnowledgeBaseView>;
  /** The account's bases, documents and bytes over all its bases. */
  usage(accountId: string): MaybePromise<KnowledgeUsage>;
  /** The base's reference, or 404 when it does not exist or belongs to another account. */
  row(accountId: string, id: string): MaybePromise<KnowledgeBaseRef>;
  get(accountId: string, id: string): MaybePromise<KnowledgeBaseView>;
  list(accountId: string, page: Page): MaybePromise<Paged<KnowledgeBaseView>>;
  update(
    accountId: string,
    id: string,
    patch: { name?: string; description?: string; status?: KbStatus },
  ): MaybePromise<KnowledgeBaseView>;
  /** Deletes the base with its documents, chunks and their index entries. */
  delete(accountId: string, id: string): MaybePromise<void>;
  /**
   * Stores and indexes documents (400 past a base's limits, 403 past the account's `quota`, all
   * or none); the revision moves. The quota is checked and the documents' rows written in one
   * transaction, so concurrent uploads cannot pass it together.
   */
  addDocuments(
    accountId: string,
    kbId: string,
    prepared: PreparedDocument[],
    quota?: Pick<KnowledgeQuota, "documents" | "bytes">,
  ): MaybePromise<DocumentView[]>;
  listDocuments(accountId: string, kbId: string, page: Page): MaybePromise<Paged<DocumentView>>;
  deleteDocument(accountId: string, kbId: string, docId: string): MaybePromise<void>;
}

/** FAQ collections: immutable once created. */
export interface FaqCollections {
  /**
   * 403 forbidden past the account's plan quota (its FAQ collections, or the bytes it stores with
   * this collection's questions and answers), checked in the transaction that writes.
   */
  create(
    accountId: string,
    input: { name: string; faqs: { question: string; answer: string }[] },
    quota?: Pick<KnowledgeQuota, "faqCollections" | "bytes">,
  ): MaybePromise<FaqCollectionView>;
  /** The collection's FAQs in their order (404 when not the account's). */
  faqs(accountId: string, id: string): MaybePromise<{ id: string; question: string; answer: string }[]>;
  get(accountId: string, id: string): MaybePromise<FaqCollectionView>;
  list(accountId: string, page: Page): MaybePromise<Paged<FaqCollectionView>>;
  delete(accountId: string, id: string): MaybePromise<void>;
}

/** Chatbots; their knowledge bases must belong to the same account. */
export interface Chatbots {
  /** 403 forbidden past the account's plan quota of chatbots, checked in the transaction that writes. */
  create(
    accountId: string,
    input: { name: string; mode: ChatbotMode; knowledge_base_ids?: string[] },
    quota?: Pick<KnowledgeQuota, "chatbots">,
  ): MaybePromise<ChatbotView>;
  get(accountId: string, id: string): MaybePromise<ChatbotView>;
  list(accountId: string, page: Page): MaybePromise<Paged<ChatbotView>>;
  delete(accountId: string, id: string): MaybePromise<void>;
  /** The chatbot's knowledge bases that still exist and are active (deleted ones drop out silently). */
  activeKnowledgeBases(accountId: string, ids: string[]): MaybePromise<{ id: string; revision: number }[]>;
}

export interface KnowledgeIndex {
  bases: KnowledgeBases;
  faqs: FaqCollections;
  chatbots: Chatbots;
  /**
   * Best chunks of the bases first (the bases' ownership is checked by the caller). Both
   * implementations rank with the same code (ranking.ts): BM25 as SQLite's FTS5 computes it,
   * coverage of the query, and with vectors the blend with cosine similarity.
   */
  search(opts: SearchOptions, vectors?: VectorHits): MaybePromise<Snippet[]>;
  /** The stored vectors of a base with `dims` dimensions, for the per-node vector cache. */
  chunkVectors(kbId: string, dims: number): MaybePromise<ChunkVector[]>;
}
