type Labels = Record<string, string>;

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const UNSAFE = /["\\\n]/;

/** `a="x",b="y"` in key order; on every request, so no sort/map/join for the usual one or two labels */
function labelKey(l: Labels): string {
  const keys = Object.keys(l);
  if (keys.length > 1) keys.sort();
  let out = "";
  for (const k of keys) {
    let v = String(l[k]);
    if (UNSAFE.test(v)) v = v.replace(/["\\\n]/g, "_");
    out += out ? `,${k}="${v}"` : `${k}="${v}"`;
  }
  return out;
}

/**
 * Label sets kept per counter or histogram. The gateway labels by function, status, provider and
 * outcome only (a few hundred sets at most); should a label ever carry a key, a request or any
 * other unbounded value, new sets past this many are counted under `overflow="true"` instead of
 * growing the registry (and the process) for ever.
 */
export const MAX_LABEL_SETS = 2000;
const OVERFLOW = labelKey({ overflow: "true" });

const frozenKeys = new WeakMap<Labels, string>();

/**
 * Label sets a caller builds once and passes on every request (`Object.freeze`d, as `fixedLabels`
 * makes them) have their key made once; any other is keyed afresh.
 */
function keyOf(l: Labels): string {
  if (!Object.isFrozen(l)) return labelKey(l);
  let k = frozenKeys.get(l);
  if (k === undefined) {
    k = labelKey(l);
    frozenKeys.set(l, k);
  }
  return k;
}

/**
 * What `make` builds for `id` (a label set, or an object of them, each frozen), once: kept in
 * `cache`, at most MAX_LABEL_SETS of them (past that built afresh each time). For the label sets
 * of every request, whose keys are then made once.
 */
export function fixedLabels<L extends object>(cache: Map<string, L>, id: string, make: () => L): L {
  let l = cache.get(id);
  if (l === undefined) {
    l = Object.freeze(make());
    if (cache.size < MAX_LABEL_SETS) cache.set(id, l);
  }
  return l;
}

/** The stored key for these labels, or the overflow key when the metric is full. */
function seriesKey(values: Map<string, unknown>, labels: Labels): string {
  const k = keyOf(labels);
  return values.has(k) || values.size < MAX_LABEL_SETS ? k : OVERFLOW;
}

/** A small Prometheus registry: counters, histograms, and gauges read at scrape time. */
export class Metrics {
  private counters = new Map<string, { help: string; values: Map<string, number> }>();
  private histograms = new Map<
    string,
    { help: string; values: Map<string, { buckets: number[]; sum: number; count: number }> }
  >();
  private gauges = new Map<string, { help: string; read: () => [Labels, number][]; type: "gauge" | "counter" }>();

  inc(name: string, help: string, labels: Labels = {}, by = 1): void {
    let c = this.counters.get(name);
    if (!c) {
      c = { help, values: new Map() };
      this.counters.set(name, c);
    }
    const k = seriesKey(c.values, labels);
    c.values.set(k, (c.values.get(k) ?? 0) + by);
  }

  observe(name: string, help: string, labels: Labels, seconds: number): void {
    let h = this.histograms.get(name);
    if (!h) {
      h = { help, values: new Map() };
      this.histograms.set(name, h);
    }
    const k = seriesKey(h.values, labels);
    let v = h.values.get(k);
    if (!v) {
      v = { buckets: BUCKETS.map(() => 0), sum: 0, count: 0 };
      h.values.set(k, v);
    }
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) v.buckets[i]++;
    v.sum += seconds;
    v.count++;
  }

  /** A counter's sum over the label sets `where` accepts (its `a="x",b="y"` key), as /metrics shows it. */
  total(name: string, where: (series: string) => boolean = () => true): number {
    let sum = 0;
    for (const [k, v] of this.counters.get(name)?.values ?? []) if (where(k)) sum += v;
    return sum;
  }

  /** A value read when /metrics is rendered; `type` "counter" for a total kept elsewhere (it only grows). */
  gauge(name: string, help: string, read: () => [Labels, number][], type: "gauge" | "counter" = "gauge"): void {
    this.gauges.set(name, { help, read, type });
  }

  render(): string {
    const out: string[] = [];
    for (const [name, c] of this.counters) {
      out.push(`# HELP ${name} ${c.help}`, `# TYPE ${name} counter`);
      for (const [k, v] of c.values) out.push(`${name}${k ? `{${k}}` : ""} ${v}`);
    }
    for (const [name, h] of this.histograms) {
      out.push(`# HELP ${name} ${h.help}`, `# TYPE ${name} histogram`);
      for (const [k, v] of h.values) {
        const sep = k ? `${k},` : "";
        for (const [i, b] of BUCKETS.entries()) out.push(`${name}_bucket{${sep}le="${b}"} ${v.buckets[i]}`);
        out.push(`${name}_bucket{${sep}le="+Inf"} ${v.count}`);
        out.push(`${name}_sum${k ? `{${k}}` : ""} ${v.sum}`, `${name}_count${k ? `{${k}}` : ""} ${v.count}`);
      }
    }
    for (const [name, g] of this.gauges) {
      out.push(`# HELP ${name} ${g.help}`, `# TYPE ${name} ${g.type}`);
      for (const [l, v] of g.read()) {
        const k = labelKey(l);
        out.push(`${name}${k ? `{${k}}` : ""} ${v}`);
      }
    }
    return `${out.join("\n")}\n`;
  }
}
