import { safeEqual } from "../auth/keys";
import type { Config } from "../config";

/** Whether the request carries the admin token (`Authorization: Bearer …`); false while none is configured. */
export function presentsAdminToken(config: Pick<Config, "adminToken">, request: Request): boolean {
  if (!config.adminToken) return false;
  const presented = (request.headers.get("authorization") ?? "").replace(/^bearer\s+/i, "");
  return presented !== "" && safeEqual(presented, config.adminToken);
}
