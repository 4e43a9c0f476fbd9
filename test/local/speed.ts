/** Median wall time of `fn` in milliseconds, after a warm-up (JIT, lazy tables). */
export function medianMs(fn: () => unknown, runs = 301): number {
  for (let i = 0; i < 50; i++) fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)];
}

/** About 1 KB of realistic support text with several kinds of PII and opinions. */
export const ONE_KB_TEXT = (
  "Hi team, this is Sarah Johnson from the Denver office. Please send the contract to sarah.j@example.com " +
  "or call me at +1 415-555-0132. The delivery to 742 Evergreen Terrace, Springfield, IL 62704 was late again " +
  "and the box was damaged, which is really disappointing. My card 4111 1111 1111 1111 was charged twice. " +
  "Server 192.168.1.20 logged the errors. Otherwise the product works great and the battery life is excellent! "
)
  .repeat(3)
  .slice(0, 1024);
