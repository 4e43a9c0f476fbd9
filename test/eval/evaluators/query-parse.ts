/**
 * Search query parsing: share of queries whose every expected part (keywords, each filter, no
 * extra filter, sort, negations, date start) is right, and share of parts right.
 * query-parse.jsonl guided the rules; query-parse-holdout.jsonl was written afterwards (first
 * run: 9/10; "last month" reads as the last 30 days, the label says the calendar month).
 */
import { join } from "node:path";
import { type ParsedQuery, parseSearchQuery } from "../../../src/offline-engine/query-parse";
import { readJsonl } from "../metrics";
import { type EvalReport, type Evaluator, tuningAndHeldOut } from "../registry";

export interface QueryItem {
  query: string;
  expect: {
    keywords?: string[];
    filters?: Record<string, unknown>;
    sort?: { field: string; order: string };
    negations?: string[];
    date_start?: string;
  };
}

export const QUERY_TARGETS = { queries: 0.75, parts: 0.9 };
export const QUERY_REFERENCE_DATE = new Date("2026-11-21T12:00:00Z");

export function loadQueryFixture(file = "query-parse.jsonl"): QueryItem[] {
  return readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as QueryItem);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sorted = (xs: string[]) => [...xs].sort();

/** One named check per expected part of the parse. */
export function queryChecks(q: ParsedQuery, want: QueryItem["expect"]): [string, boolean][] {
  const out: [string, boolean][] = [];
  if (want.keywords) out.push(["keywords", same(sorted(q.keywords), sorted(want.keywords))]);
  for (const [k, v] of Object.entries(want.filters ?? {})) out.push([`filters.${k}`, same(q.filters[k], v)]);
  out.push(["no extra filter", Object.keys(q.filters).every((k) => k in (want.filters ?? {}))]);
  out.push(["sort", want.sort ? q.sort?.field === want.sort.field && q.sort?.order === want.sort.order : q.sort === undefined]);
  out.push(["negations", same(q.negations, want.negations ?? [])]);
  out.push(["date", want.date_start ? q.dateRange?.start === want.date_start : q.dateRange === undefined]);
  return out;
}

export function evaluateQueryParse(items: QueryItem[], capability = "query-parse"): EvalReport {
  let full = 0;
  let parts = 0;
  let partsRight = 0;
  const errors: string[] = [];
  for (const it of items) {
    const q = parseSearchQuery(it.query, { referenceDate: QUERY_REFERENCE_DATE });
    const checks = queryChecks(q, it.expect);
    parts += checks.length;
    partsRight += checks.filter(([, ok]) => ok).length;
    if (checks.every(([, ok]) => ok)) full++;
    else
      errors.push(
        `${it.query}: wrong ${checks
          .filter(([, ok]) => !ok)
          .map(([n]) => n)
          .join(", ")} -> ${JSON.stringify(q)}`,
      );
  }
  return {
    capability,
    items: items.length,
    metrics: [
      { name: "queries fully right", value: full / items.length, target: QUERY_TARGETS.queries },
      { name: "parts right", value: partsRight / parts, target: QUERY_TARGETS.parts },
    ],
    errors,
  };
}

const evaluator: Evaluator = {
  name: "query-parse",
  run: () => {
    const dev = evaluateQueryParse(loadQueryFixture());
    const holdout = evaluateQueryParse(loadQueryFixture("query-parse-holdout.jsonl"));
    return tuningAndHeldOut("search query parse", dev, holdout);
  },
};
export default evaluator;
