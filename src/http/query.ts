import { invalidRequest } from "../errors";

/**
 * A whole number from a query parameter, the one reading every paging route shares: absent or
 * empty is `fallback`; otherwise decimal digits only (no sign, exponent, fraction or spaces), from
 * `min` to `max`, else 400 invalid_request naming the parameter. `max` is at most
 * Number.MAX_SAFE_INTEGER, so what reaches SQLite or PostgreSQL is an exact integer they accept.
 */
export function queryInt(
  query: Record<string, string | undefined>,
  name: string,
  range: { fallback: number; min: number; max: number },
): number {
  const raw = query[name];
  if (raw === undefined || raw === "") return range.fallback;
  const max = Math.min(range.max, Number.MAX_SAFE_INTEGER);
  const n = /^[0-9]{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= range.min && n <= max)) throw invalidRequest(`${name} must be a whole number from ${range.min} to ${max}`, name);
  return n;
}

/** `?limit=&offset=` of a listing: limit from 1 to `maxLimit` (`defaultLimit` when absent), offset from 0. */
export function limitOffset(
  query: Record<string, string | undefined>,
  defaultLimit: number,
  maxLimit: number,
): { limit: number; offset: number } {
  return {
    limit: queryInt(query, "limit", { fallback: defaultLimit, min: 1, max: maxLimit }),
    offset: queryInt(query, "offset", { fallback: 0, min: 0, max: Number.MAX_SAFE_INTEGER }),
  };
}
