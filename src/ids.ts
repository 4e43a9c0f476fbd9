const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Base62 string from a CSPRNG, without modulo bias (bytes >= 248 are redrawn). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

/** A record id: `acc_…`, `key_…`, `kb_…`, `doc_…` (about 119 random bits). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const pool = new Uint8Array(4096);
let poolAt = pool.length;

/**
 * A public id that sorts by time: `<prefix>_` and 32 hex digits, the first 12 the milliseconds
 * since 1970, the last 20 from a CSPRNG (80 bits, fresh for every id). Nothing in it counts:
 * two ids tell only when each was made. A unique index on ids like these takes each new one at
 * its end, where random ones land on a random page each (for the ledger, written on every charge,
 * random ids made a cache hit cost about 15 µs more: bench/README.md, 2026-11-26).
 */
export function timeOrderedId(prefix: string, now = Date.now()): string {
  if (poolAt + 10 > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  let out = `${prefix}_${Math.floor(now).toString(16).padStart(12, "0").slice(-12)}`;
  for (let i = 0; i < 10; i++) out += HEX[pool[poolAt++] as number];
  return out;
}
