/**
 * Splits documents into overlapping chunks for the index. Chunks end on sentence or word
 * boundaries; the overlap repeats the tail of one chunk at the head of the next, so a passage
 * that straddles a cut is still found whole in one of them.
 */
import type { PreparedDocument } from "./interface";
import { chunkTerms } from "./ranking";
import type { DocumentInput } from "./schemas";
import { mapInSlices } from "./slices";

export interface ChunkOptions {
  /** target chunk length in characters */
  size: number;
  /** characters repeated from the previous chunk */
  overlap: number;
}

export const DEFAULT_CHUNKING: ChunkOptions = { size: 1000, overlap: 150 };

export function chunkText(text: string, opts: ChunkOptions = DEFAULT_CHUNKING): string[] {
  const clean = text
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+/g, " ")
    .trim();
  if (clean.length <= opts.size) return clean ? [clean] : [];
  const chunks: string[] = [];
  let start = 0;
  while (start < clean.length) {
    let end = Math.min(clean.length, start + opts.size);
    if (end < clean.length) end = cutPoint(clean, start, end);
    chunks.push(clean.slice(start, end).trim());
    if (end >= clean.length) break;
    // Start the next chunk `overlap` characters back, at a word start, and always move forward.
    let next = Math.max(end - opts.overlap, start + 1);
    while (next < end && !/\s/.test(clean[next - 1] as string)) next++;
    start = next;
  }
  return chunks.filter((c) => c.length > 0);
}

/** The best place to end a chunk in the last third of [start, end): paragraph, sentence, then word. */
function cutPoint(text: string, start: number, end: number): number {
  const min = start + Math.floor(((end - start) * 2) / 3);
  const window = text.slice(min, end);
  for (const re of [/\n\s*\n/g, /[.!?]["')\]]?\s/g, /\n/g, /\s/g]) {
    let last = -1;
    for (const m of window.matchAll(re)) last = (m.index ?? 0) + m[0].length;
    if (last > 0) return min + last;
  }
  return end;
}

/** What a document counts against the account's knowledge_bytes quota: UTF-8 bytes of content, title and metadata. */
export function documentBytes(d: { title: string | null; content: string; metadata: Record<string, unknown> }): number {
  return Buffer.byteLength(d.content) + Buffer.byteLength(d.title ?? "") + Buffer.byteLength(JSON.stringify(d.metadata));
}

function prepareOne(d: DocumentInput): PreparedDocument {
  const doc = typeof d === "string" ? { content: d } : d;
  const prepared = { title: doc.title?.trim() || null, content: doc.content, metadata: doc.metadata ?? {} };
  return { ...prepared, chunks: chunkText(doc.content), bytes: documentBytes(prepared) };
}

/** Documents as sent (texts or objects), trimmed and chunked for storage. */
export function prepareDocuments(docs: DocumentInput[]): PreparedDocument[] {
  return docs.map(prepareOne);
}

/**
 * prepareDocuments for an upload: chunked and each chunk's term keys computed in slices that
 * leave the event loop free between them (slices.ts), so the store's write has only SQL left.
 */
export async function prepareDocumentsInSlices(docs: DocumentInput[]): Promise<PreparedDocument[]> {
  const prepared = await mapInSlices(docs, prepareOne);
  const pieces = prepared.flatMap((d) => d.chunks.map((chunk) => ({ d, chunk })));
  const terms = await mapInSlices(pieces, ({ d, chunk }) => chunkTerms(d.title, chunk));
  let at = 0;
  for (const d of prepared) {
    d.terms = terms.slice(at, at + d.chunks.length);
    at += d.chunks.length;
  }
  return prepared;
}
