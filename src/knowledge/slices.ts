/**
 * CPU work of a large upload (chunking, term keys, FTS5 tokens) cut into slices with a turn of the
 * event loop between them: a 1 MB upload takes about a second of CPU on a busy machine, and no
 * other request (a health check, a charge) should wait for it.
 */

/** How long one slice may hold the loop. */
export const SLICE_MS = 15;

/** Lets the event loop run whatever is ready (timers, sockets) before the next slice. */
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `step` over every item, in order, yielding after every SLICE_MS of work. */
export async function mapInSlices<T, R>(items: readonly T[], step: (item: T, i: number) => R): Promise<R[]> {
  const out: R[] = [];
  let since = performance.now();
  for (let i = 0; i < items.length; i++) {
    out.push(step(items[i] as T, i));
    if (performance.now() - since >= SLICE_MS) {
      await yieldToLoop();
      since = performance.now();
    }
  }
  return out;
}
