/**
 * Splits documents into overlapping chunks for the index. Chunks end on sentence or word
 * boundaries; the overlap repeats the tail of one chunk at the head of the next, so a passage
 * that straddles a cut is still found whole in one of them.
 */
import type { PreparedDocument } from "./interface";
import type { DocumentInput } from "./schemas";

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

/** Documents as sent (texts or objects), trimmed and chunked for storage. */
export function prepareDocuments(docs: DocumentInput[]): PreparedDocument[] {
  return docs.map((d) => {
    const doc = typeof d === "string" ? { content: d } : d;
    return {
      title: doc.title?.trim() || null,
      content: doc.content,
      metadata: doc.metadata ?? {},
      chunks: chunkText(doc.content),
    };
  });
}
