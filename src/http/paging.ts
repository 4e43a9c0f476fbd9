import { GatewayError } from "../errors";

/** The largest offset a listing accepts: past it a page is an error, not a database overflow. */
export const MAX_OFFSET = 1_000_000_000;

/** A whole number in [min, max] from a query parameter, `fallback` when absent; 400 naming it otherwise. */
export function queryInt(
  query: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = query[name];
  if (raw === undefined || raw === "") return fallback;
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new GatewayError("invalid_request", `${name} must be a whole number from ${min} to ${max}`, { param: name });
  return n;
}

/** `limit` (1 to `maxLimit`) and `offset` (0 to MAX_OFFSET) of a listing. */
export function pageQuery(
  query: Record<string, string | undefined>,
  opts: { defaultLimit: number; maxLimit: number },
): { limit: number; offset: number } {
  return {
    limit: queryInt(query, "limit", opts.defaultLimit, 1, opts.maxLimit),
    offset: queryInt(query, "offset", 0, 0, MAX_OFFSET),
  };
}
