import { GatewayError } from "../errors";
import type { AuthInfo, KeyStore } from "./interface";
import { expired } from "./policy";

/** The presented key, by the contract's precedence: x-api-key, then Authorization: Bearer, then body api_key. */
export function presentedKey(headers: Headers, body: Record<string, unknown> | null): string | null {
  const header = headers.get("x-api-key");
  if (header) return header.trim();
  const authz = headers.get("authorization");
  if (authz && /^bearer\s+/i.test(authz)) return authz.replace(/^bearer\s+/i, "").trim();
  if (body && typeof body.api_key === "string" && body.api_key) return body.api_key;
  return null;
}

/**
 * Authenticates and removes `api_key` from the body before anything else (validation, cache key,
 * providers, logs) can see it.
 */
export async function authenticate(keys: KeyStore, headers: Headers, body: Record<string, unknown> | null): Promise<AuthInfo> {
  const key = presentedKey(headers, body);
  if (body && "api_key" in body) delete body.api_key;
  if (!key) {
    // an Authorization header without its scheme ("Authorization: tai_live_…") is the likeliest slip: said so
    const authz = headers.get("authorization");
    const slip = authz && !/^\S+\s/.test(authz.trim()) ? ` (the Authorization header needs its scheme: "Bearer <key>")` : "";
    throw new GatewayError(
      "missing_api_key",
      `no API key: send it in the x-api-key header, as Authorization: Bearer <key>, or as api_key in the JSON body${slip}`,
    );
  }
  const info = await keys.authenticate(key);
  if (!info) throw new GatewayError("invalid_api_key", "the API key is not valid");
  if (expired(info.policy))
    throw new GatewayError("expired_api_key", `the API key expired at ${info.policy?.expires_at}; ask for a new one`);
  return info;
}
