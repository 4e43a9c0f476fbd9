import { timingSafeEqual } from "node:crypto";
import { randomBase62 } from "../ids";
import type { KeyView } from "./interface";
import { policyFromColumn, policyView } from "./policy";

export const KEY_PREFIX = "tai_live_";
const SECRET_LENGTH = 43; // 43 base62 chars carry ~256 bits

export function generateApiKey(): string {
  return KEY_PREFIX + randomBase62(SECRET_LENGTH);
}

// Bun's one-shot hash: on every authenticated request, about half the CPU of node:crypto's createHash
export function hashApiKey(key: string): string {
  return Bun.SHA256.hash(key, "hex");
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

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A key as listed (never its secret), from its row in either database. */
export function keyView(
  r: {
    id: string;
    label: string;
    accountId: string;
    plan: string;
    status: "active" | "revoked";
    prefix: string;
    last4: string;
    createdAt: number;
    lastUsedAt: number | null;
    revokedAt: number | null;
    policy: string | null;
  },
  pendingUse?: number,
): KeyView {
  return {
    id: r.id,
    label: r.label,
    account_id: r.accountId,
    plan: r.plan,
    status: r.status,
    masked_key: maskKey(r.prefix, r.last4),
    prefix: r.prefix,
    created_at: iso(r.createdAt)!,
    last_used_at: iso(Math.max(pendingUse ?? 0, r.lastUsedAt ?? 0) || null),
    revoked_at: iso(r.revokedAt),
    policy: policyView(policyFromColumn(r.policy)),
  };
}
