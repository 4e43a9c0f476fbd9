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
