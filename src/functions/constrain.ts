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

export type Lists = Record<string, readonly string[] | undefined>;

/**
 * postprocess and check for result fields pinned to lists in the request, e.g.
 * `pinned((req) => ({ category: req.allowed_categories }))`: spelling drift is mapped to the
 * caller's spelling, and a value outside its list is a problem the model is asked to repair.
 */
export function pinned<Req, Res extends object>(listsOf: (req: Req) => Lists) {
  return {
    postprocess: (req: Req, res: Res): Res => {
      const fixes: Record<string, string> = {};
      for (const [field, allowed] of Object.entries(listsOf(req))) {
        const value: unknown = Reflect.get(res, field);
        if (typeof value === "string") fixes[field] = canonical(value, allowed);
      }
      return { ...res, ...fixes };
    },
    check: (req: Req, res: Res): string[] =>
      Object.entries(listsOf(req)).flatMap(([field, allowed]) => {
        const value: unknown = Reflect.get(res, field);
        return typeof value === "string" ? outside(field, value, allowed) : [];
      }),
  };
}
