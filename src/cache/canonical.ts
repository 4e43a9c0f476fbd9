/** A short, fixed-length key for cache and idempotency entries (SHA-256, base64url). */
export function digest(...parts: (string | number)[]): string {
  return Bun.SHA256.hash(parts.join("\u0000"), "base64url");
}

/** JSON with object keys sorted at every level, so equal bodies give equal strings. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}
