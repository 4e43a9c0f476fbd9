/** Counts and their nouns, as every page, CLI line and message writes them. */

/**
 * A noun's plural by English's regular rules: entry → entries, day → days, box → boxes, key → keys.
 * An irregular one is given to `counted` or `noun` as `many`.
 */
export const pluralOf = (one: string): string =>
  /[^aeiou]y$/i.test(one) ? `${one.slice(0, -1)}ies` : /(s|x|z|ch|sh)$/i.test(one) ? `${one}es` : `${one}s`;

/** The noun for a count: "credit" for 1, "credits" for any other (where the count is written apart from it). */
export const noun = (n: number, one: string, many = pluralOf(one)): string => (n === 1 ? one : many);

/** "1 account", "3 accounts", "1 entry", "2 entries": a count and its noun, never "account(s)" or "1 entries". */
export const counted = (n: number, one: string, many = pluralOf(one)): string => `${n} ${noun(n, one, many)}`;
