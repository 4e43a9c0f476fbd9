import type { MonthSummary, UsageFigures } from "./interface";

/** One row of the daily usage rollups, as both stores read it. */
export interface UsageRow {
  day: string;
  kind: "charge" | "grant";
  function: string;
  provider: string;
  requests: number;
  credits: number;
  cached: number;
  /** tokens of /v1 charges (0 for function calls and grants) */
  input_tokens: number;
  output_tokens: number;
}

/** The first instant of the UTC month of `now` (ms): where a key's monthly spend starts. */
export function monthStart(now = Date.now()): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

const DAY_MS = 86_400_000;
/** the last day asked for: every charge of a batch (and most batches of a day) ask for the same one */
let lastDay = { from: Number.NaN, day: "" };

/** The UTC day of an instant, as the rollups key it: YYYY-MM-DD. */
export function dayOf(ms: number): string {
  if (ms >= lastDay.from && ms < lastDay.from + DAY_MS) return lastDay.day;
  const day = new Date(ms).toISOString().slice(0, 10);
  lastDay = { from: Math.floor(ms / DAY_MS) * DAY_MS, day };
  return day;
}

/** Month-to-date usage from the month's rollup rows (oldest day first). */
export function monthToDateFrom(
  accountId: string,
  acc: { balance: number; plan: string } | null,
  rows: UsageRow[],
  from: number,
  now: Date,
): UsageFigures {
  const byFn = new Map<
    string,
    { function: string; requests: number; credits: number; cached: number; input_tokens: number; output_tokens: number }
  >();
  const byProvider = new Map<string, { provider: string; requests: number; credits: number }>();
  const byDay = new Map<string, { day: string; requests: number; credits_used: number; credits_granted: number }>();
  let granted = 0;
  for (const r of rows) {
    let d = byDay.get(r.day);
    if (!d) {
      d = { day: r.day, requests: 0, credits_used: 0, credits_granted: 0 };
      byDay.set(r.day, d);
    }
    if (r.kind !== "charge") {
      granted += r.credits;
      d.credits_granted += r.credits;
      continue;
    }
    d.requests += r.requests;
    d.credits_used += r.credits;
    const f = byFn.get(r.function) ?? {
      function: r.function || "unknown",
      requests: 0,
      credits: 0,
      cached: 0,
      input_tokens: 0,
      output_tokens: 0,
    };
    f.requests += r.requests;
    f.credits += r.credits;
    f.cached += r.cached;
    f.input_tokens += Number(r.input_tokens ?? 0);
    f.output_tokens += Number(r.output_tokens ?? 0);
    byFn.set(r.function, f);
    const p = byProvider.get(r.provider) ?? { provider: r.provider || "none", requests: 0, credits: 0 };
    p.requests += r.requests;
    p.credits += r.credits;
    byProvider.set(r.provider, p);
  }
  const fns = [...byFn.values()].sort((a, b) => b.credits - a.credits || (a.function < b.function ? -1 : 1));
  return {
    account_id: accountId,
    plan: acc?.plan ?? "free",
    balance: acc?.balance ?? 0,
    period: { start: new Date(from).toISOString(), end: new Date(now.getTime() + 1).toISOString() },
    requests: fns.reduce((s, r) => s + r.requests, 0),
    credits_used: fns.reduce((s, r) => s + r.credits, 0),
    credits_granted: granted,
    cached_requests: fns.reduce((s, r) => s + r.cached, 0),
    input_tokens: fns.reduce((s, r) => s + r.input_tokens, 0),
    output_tokens: fns.reduce((s, r) => s + r.output_tokens, 0),
    by_function: fns,
    by_provider: [...byProvider.values()].sort((a, b) => b.credits - a.credits),
    by_day: [...byDay.values()],
  };
}

/** Monthly summaries from rollup rows grouped by month, kind and function (newest month first). */
export function monthlyFrom(rows: (UsageRow & { month: string })[], months: number): MonthSummary[] {
  const byMonth = new Map<string, MonthSummary>();
  for (const r of rows) {
    let m = byMonth.get(r.month);
    if (!m) {
      m = {
        month: r.month,
        requests: 0,
        credits_used: 0,
        credits_granted: 0,
        input_tokens: 0,
        output_tokens: 0,
        by_function: [],
      };
      byMonth.set(r.month, m);
    }
    if (r.kind === "charge") {
      m.requests += r.requests;
      m.credits_used += r.credits;
      m.input_tokens += Number(r.input_tokens ?? 0);
      m.output_tokens += Number(r.output_tokens ?? 0);
      m.by_function.push({
        function: r.function || "unknown",
        requests: r.requests,
        credits: r.credits,
        input_tokens: Number(r.input_tokens ?? 0),
        output_tokens: Number(r.output_tokens ?? 0),
      });
    } else m.credits_granted += r.credits;
  }
  return [...byMonth.values()].slice(0, months);
}
