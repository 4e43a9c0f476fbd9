/**
 * The bytes of a body, read to `max` at most: past it the reader is cancelled (the rest is never
 * read) and `tooLarge()` is thrown. For bodies whose length is not known up front: a request sent
 * chunked (http/body.ts), an upstream answer sent chunked or decompressed (providers/http-transport.ts).
 */
export async function readAtMost(
  body: ReadableStream<Uint8Array> | null,
  max: number,
  tooLarge: () => Error,
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
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, total);
}
