/**
 * Hash-style redaction tokens: HMAC-SHA-256, never a plain hash. A plain SHA-256 of a phone number
 * or a name is reversed by hashing every candidate; an HMAC cannot be without its key. The key is
 * per account, derived from the deployment's secret (kept in the database, see storage/secrets.ts)
 * and the account id: the same value gives the same token on every call of one account (joins
 * still work) and unrelated tokens in two accounts (no correlation across tenants).
 */

/** Name of the deployment secret in gateway_secrets. */
export const PII_HASH_SECRET = "pii-hash";

function hmacHex(key: string, message: string): string {
  return new Bun.CryptoHasher("sha256", key).update(message).digest("hex");
}

/** The account's redaction key (hex): HMAC-SHA-256 of a purpose label and the account id under the deployment secret. */
export function accountHashKey(secret: string, accountId: string): string {
  return hmacHex(secret, `textai pii-redaction hash v1\n${accountId}`);
}

/** The token that replaces `value`: lowercase hex HMAC-SHA-256 under the account's key (64 characters). */
export function keyedHash(accountKey: string, value: string): string {
  return hmacHex(accountKey, value);
}
