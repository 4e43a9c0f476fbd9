import { safeEqual } from "../auth/keys";
import type { Config } from "../config";
import { guessAdminToken, retryAfter } from "../dashboard/guessing";
import type { SignInAttempts } from "../dashboard/interface";
import { type Peer, requestOrigin } from "../dashboard/security";
import { GatewayError } from "../errors";

/**
 * The admin token a request presents (`Authorization: Bearer …`), judged as a guess: a wrong one
 * counts against the client's address like a wrong operator sign-in (docs/security.md), is slowed,
 * and past the limit is refused (429 with Retry-After); the right one is never refused. "none" when
 * no token is presented or none is configured: no guess, nothing counted.
 */
export async function adminTokenOf(
  deps: { config: Pick<Config, "adminToken" | "dashboard">; signIns: SignInAttempts },
  request: Request,
  server: Peer,
): Promise<"none" | "right" | "wrong"> {
  const { adminToken, dashboard } = deps.config;
  if (!adminToken) return "none";
  const presented = (request.headers.get("authorization") ?? "").replace(/^bearer\s+/i, "");
  if (!presented) return "none";
  const peer = server?.requestIP(request)?.address ?? null;
  const { client } = requestOrigin(request, peer, dashboard.trustedProxies, dashboard.ipv6PrefixBits);
  const v = await guessAdminToken(deps.signIns, safeEqual(presented, adminToken), client);
  if (!v.allowed)
    throw new GatewayError("rate_limited", "too many wrong admin tokens from this address; try again later", {
      headers: retryAfter(v),
    });
  return v.right ? "right" : "wrong";
}
