/**
 * Enforcement of the caller's allowed lists (allowed_categories, allowed_departments...). The result
 * schema already carries them as enums; these helpers let postprocess fix harmless spelling drift
 * ("Billing" for "billing") and let check name the field that strayed.
 */

/** The caller's spelling of `value` when it matches an allowed value ignoring case and spacing. */
export function canonical<T extends string>(value: T, allowed: readonly string[] | undefined): T {
  if (!allowed || allowed.length === 0 || allowed.includes(value)) return value;
  const key = squash(value);
  return (allowed.find((a) => squash(a) === key) as T | undefined) ?? value;
}

/** One problem line when `value` is outside a given allowed list, none otherwise. */
export function outside(field: string, value: string | undefined, allowed: readonly string[] | undefined): string[] {
  if (!allowed || allowed.length === 0 || value === undefined || allowed.includes(value)) return [];
  return [`${field} "${value}" is not one of the allowed values (${allowed.join(", ")})`];
}

const squash = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, "");
