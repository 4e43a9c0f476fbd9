/**
 * The lingering close. An answer given before the client has sent its whole body (a 413 for a
 * declared or counted size over the limit, a 401 or 404 to a body nobody reads) ends its connection.
 * Bun.serve closes a `Connection: close` connection as soon as the answer is written, and the bytes
 * the client is still sending then make the kernel reset the connection: the client sees a reset
 * instead of the answer. Bun has no half-close for it (no shutdown of the sending side while the
 * socket still reads), so the answer goes out as a stream: its bytes at once, and the stream ends
 * only once the rest of the body has been read and dropped, or at a bound (LINGER_MAX_BYTES,
 * LINGER_MAX_MS in all, LINGER_IDLE_MS without a byte). Nothing of the body is kept.
 */

import type { BodyReader } from "../bytes";

/** the most of a body read and dropped after its answer */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;
/** the longest a connection lingers after its answer ... */
export const LINGER_MAX_MS = 5000;
/** ... or without a byte from the client */
export const LINGER_IDLE_MS = 1000;

/** The readers left mid-body by a read that stopped at the size limit (body.ts), to drop the rest from. */
const leftOver = new WeakMap<Request, BodyReader>();

/** Notes the reader of `request`'s body that a read left unfinished (at the size limit). */
export function leaveUnread(request: Request, reader: BodyReader): void {
  leftOver.set(request, reader);
}

/** Whether some of `request`'s body may still be on its way, unread. */
export function bodyMayFollow(request: Request): boolean {
  if (leftOver.has(request)) return true;
  if (request.bodyUsed || !request.body) return false;
  return request.headers.has("transfer-encoding") || Number(request.headers.get("content-length")) > 0;
}

/** The reader of the rest of `request`'s body, when some may still be on its way; null when there is none. */
function unread(request: Request): BodyReader | null {
  const left = leftOver.get(request);
  if (left) {
    leftOver.delete(request);
    return left;
  }
  return bodyMayFollow(request) ? request.body!.getReader() : null;
}

/**
 * `response` as the last answer of its connection (Connection: close). When some of the request's
 * body may still be coming, the answer is sent at once and its connection lingers (see above).
 */
export function closingAnswer(request: Request, response: Response): Response {
  response.headers.set("connection", "close");
  const reader = unread(request);
  if (!reader) return response;
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  const answer = response;
  // a client that goes away while its connection lingers cancels the stream: nothing is written or
  // closed after that (a close of a cancelled stream throws, and a throw here ended the process)
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      void (async () => {
        try {
          const bytes = new Uint8Array(await answer.arrayBuffer());
          // (an empty chunk would read as the end of a chunked body)
          if (bytes.byteLength > 0 && !cancelled) controller.enqueue(bytes);
        } catch {
          // the answer had no readable body, or the client went away
        }
        await discard(reader);
        if (cancelled) return;
        try {
          controller.close();
        } catch {
          // cancelled meanwhile
        }
      })();
    },
    cancel() {
      cancelled = true;
    },
  });
  return new Response(stream, { status: response.status, statusText: response.statusText, headers });
}

/** Reads and drops the rest of a body, within the bounds above; then lets go of it. */
async function discard(reader: BodyReader): Promise<void> {
  const end = Date.now() + LINGER_MAX_MS;
  let dropped = 0;
  try {
    while (dropped <= LINGER_MAX_BYTES) {
      const wait = Math.min(LINGER_IDLE_MS, end - Date.now());
      if (wait <= 0) break;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const next = await Promise.race([
        reader.read(),
        new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), wait);
        }),
      ]);
      clearTimeout(timer);
      if (next === null || next.done) break;
      dropped += next.value?.byteLength ?? 0;
    }
  } catch {
    // the client went away: nothing more to drop
  }
  reader.cancel().catch(() => {});
}
