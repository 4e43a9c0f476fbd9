/**
 * Vectors for hybrid search, when a configured provider offers embeddings (an `embedding_model`
 * on an OpenAI-compatible or Groq provider, or the mock). Chunk vectors are stored beside the
 * chunks (kb_chunks.embedding, float32, unit length) in SQLite or PostgreSQL alike; a knowledge
 * base's vectors are held in memory per node and revision, so a query costs one embedding call
 * and one pass of dot products (PostgreSQL has no pgvector here: see docs/cluster.md).
 */
import { awaitOutsideCpuBudget } from "../offline-engine/budget";
import type { Provider } from "../providers/types";
import type { KnowledgeIndex } from "./interface";

export interface Embedder {
  /** provider name, for logs */
  name: string;
  /** the model it embeds with, which a key's allowed_models must allow (embedderFor) */
  model: string;
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

/** Texts per embeddings call: providers cap the batch, and smaller batches fail smaller. */
const BATCH = 64;

/** The first configured provider (config order) that can embed, or null: then search is BM25 only. */
export function pickEmbedder(providers: ReadonlyMap<string, Provider>): Embedder | null {
  for (const p of providers.values()) {
    const embed = p.embed?.bind(p);
    if (embed) return { name: p.name, model: p.modelFor("embeddings"), embed };
  }
  return null;
}

/**
 * The embedder a call may use under its key's policy (`allowModel`, from allowed_models): the
 * embedder when the policy allows its model (as `model` or `provider/model`), else null, and the
 * call then indexes or searches by keywords alone, calling and charging no embedding. Every
 * embedding the gateway makes for a caller (uploads, searches, chatbots) goes through this.
 */
export function embedderFor(embedder: Embedder | null, allowModel?: (model: string) => boolean): Embedder | null {
  if (!embedder || !allowModel) return embedder;
  return allowModel(embedder.model) || allowModel(`${embedder.name}/${embedder.model}`) ? embedder : null;
}

function unit(v: number[]): Float32Array {
  const out = Float32Array.from(v);
  let norm = 0;
  for (const x of out) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / norm;
  return out;
}

/** Unit vectors for `texts`, or null when the provider fails: the caller indexes or searches without them. */
export async function embedAll(embedder: Embedder, texts: string[], signal?: AbortSignal): Promise<Float32Array[] | null> {
  try {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const batch = texts.slice(i, i + BATCH);
      const vectors = await embedder.embed(batch, signal);
      if (vectors.length !== batch.length) return null;
      for (const v of vectors) out.push(unit(v));
    }
    return out;
  } catch {
    return null;
  }
}

export const toBlob = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

interface KbVectors {
  revision: number;
  dims: number;
  ids: Int32Array;
  matrix: Float32Array;
}

/**
 * Most similar chunks of some knowledge bases, by cosine similarity; vectors cached per base and
 * revision, least recently used first out. Bounded by floats held, not bases: 10,000 chunks of
 * 1,536-dimension vectors alone take 61 MB.
 */
export class VectorCache {
  private readonly cache = new Map<string, KbVectors>();

  constructor(private readonly maxFloats = 64 * 1024 * 1024) {}

  private held(): number {
    let n = 0;
    for (const e of this.cache.values()) n += e.matrix.length;
    return n;
  }

  private async load(
    index: Pick<KnowledgeIndex, "chunkVectors">,
    kbId: string,
    revision: number,
    dims: number,
  ): Promise<KbVectors> {
    const hit = this.cache.get(kbId);
    if (hit && hit.revision === revision && hit.dims === dims) return hit;
    const rows = await awaitOutsideCpuBudget(index.chunkVectors(kbId, dims));
    const ids = new Int32Array(rows.length);
    const matrix = new Float32Array(rows.length * dims);
    rows.forEach((r, i) => {
      ids[i] = r.id;
      matrix.set(new Float32Array(r.embedding.buffer, r.embedding.byteOffset, dims), i * dims);
    });
    const entry = { revision, dims, ids, matrix };
    // Map order is insertion order: re-inserting marks it most recently used.
    this.cache.delete(kbId);
    this.cache.set(kbId, entry);
    while (this.cache.size > 1 && this.held() > this.maxFloats) this.cache.delete(this.cache.keys().next().value as string);
    return entry;
  }

  async nearest(
    index: Pick<KnowledgeIndex, "chunkVectors">,
    bases: { id: string; revision: number }[],
    query: Float32Array,
    n: number,
  ): Promise<{ id: number; similarity: number }[]> {
    const dims = query.length;
    const best: { id: number; similarity: number }[] = [];
    for (const base of bases) {
      const { ids, matrix } = await this.load(index, base.id, base.revision, dims);
      for (let row = 0; row < ids.length; row++) {
        let dot = 0;
        const off = row * dims;
        for (let j = 0; j < dims; j++) dot += (matrix[off + j] as number) * (query[j] as number);
        if (best.length < n || dot > (best[best.length - 1] as { similarity: number }).similarity) {
          best.push({ id: ids[row] as number, similarity: dot });
          best.sort((a, b) => b.similarity - a.similarity);
          if (best.length > n) best.pop();
        }
      }
    }
    return best;
  }
}

/** The texts an upload sends to the embedding provider: each chunk, after its document's title. */
export const embeddingTexts = (docs: { chunks: string[]; title: string | null }[]): string[] =>
  docs.flatMap((d) => d.chunks.map((c) => (d.title ? `${d.title}\n${c}` : c)));

/** Adds chunk vectors to prepared documents; without an embedder, or when it fails, they stay BM25-only. */
export async function attachVectors(
  embedder: Embedder | null,
  docs: { chunks: string[]; title: string | null; vectors?: Float32Array[] }[],
  signal?: AbortSignal,
): Promise<void> {
  if (!embedder) return;
  const texts = embeddingTexts(docs);
  const vectors = await embedAll(embedder, texts, signal);
  if (!vectors) return;
  let at = 0;
  for (const d of docs) {
    d.vectors = vectors.slice(at, at + d.chunks.length);
    at += d.chunks.length;
  }
}

/** Hybrid search inputs for a query over some bases, or undefined when search stays BM25-only. */
export async function vectorHits(
  index: Pick<KnowledgeIndex, "chunkVectors">,
  embedder: Embedder | null,
  cache: VectorCache,
  bases: { id: string; revision: number }[],
  query: string,
  signal?: AbortSignal,
): Promise<{ query: Float32Array; nearest: { id: number; similarity: number }[] } | undefined> {
  if (!embedder || bases.length === 0) return undefined;
  // the provider's answer is waited for off the offline call's CPU budget
  const [vector] = (await awaitOutsideCpuBudget(embedAll(embedder, [query], signal))) ?? [];
  if (!vector) return undefined;
  return { query: vector, nearest: await cache.nearest(index, bases, vector, NEAREST) };
}

/** Vector candidates per query, fused with BM25's. */
const NEAREST = 50;

/** What the functions that read stored resources are built with (functions/registry.ts knowledgeFunctions). */
export interface KnowledgeServices {
  index: KnowledgeIndex;
  /** hybrid search: null when no provider embeds */
  embedder: Embedder | null;
  vectors: VectorCache;
}
