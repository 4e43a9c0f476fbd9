/** What of a stream's reader is used here (Bun's and the DOM's types of it differ) */
export interface BodyReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(reason?: unknown): Promise<void>;
}

/**
 * The bytes of a body, read to `max` at most: past it the reader is cancelled (the rest is never
 * read), or handed to `leave`, and `tooLarge()` is thrown. For bodies whose length is not known up front: a request sent
 * chunked (http/body.ts), an upstream answer sent chunked or decompressed (providers/http-transport.ts).
 */
export async function readAtMost(
  body: ReadableStream<Uint8Array> | null,
  max: number,
  tooLarge: () => Error,
  /** past `max`, the reader is handed to this instead of cancelled (a request body's rest is dropped later: http/linger.ts) */
  leave?: (reader: BodyReader) => void,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      if (leave) leave(reader);
      else await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, total);
}
