import { createHash, timingSafeEqual } from "node:crypto";

export const KEY_PREFIX = "tai_live_";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SECRET_LENGTH = 43; // 43 base62 chars carry ~256 bits

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

export function generateApiKey(): string {
  return KEY_PREFIX + randomBase62(SECRET_LENGTH);
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function maskKey(prefix: string, last4: string): string {
  return `${prefix}…${last4}`;
}

/** Constant-time string comparison for secrets (admin token). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}
