/** Markup already escaped (or built by `html`), inserted as is. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

function part(v: unknown): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(part).join("");
  return escapeHtml(String(v));
}

/** Tagged template: every interpolated value is escaped unless it is Html (or an array of them). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1];
  return new Html(out);
}

export const raw = (s: string): Html => new Html(s);

/** A bar, as a link when it has one (to the requests it counts); the link spans the bar's whole column. */
const barOf = (b: { label: string; href?: string }, rect: Html): Html =>
  b.href ? html`<a href="${b.href}" aria-label="Requests of ${b.label}">${rect}</a>` : rect;

/** A bar chart as inline SVG: no script, no library, readable by a screen reader through its table twin. */
export function barChart(
  title: string,
  bars: { label: string; value: number; href?: string }[],
  opts: { width?: number; height?: number } = {},
): Html {
  const w = opts.width ?? 640;
  const h = opts.height ?? 180;
  const pad = { l: 40, b: 24, t: 10, r: 8 };
  const max = Math.max(1, ...bars.map((b) => b.value));
  const slot = bars.length ? (w - pad.l - pad.r) / bars.length : 0;
  const y = (v: number) => pad.t + (h - pad.t - pad.b) * (1 - v / max);
  const every = Math.max(1, Math.ceil(bars.length / 10));
  return html`<svg class="chart" viewBox="0 0 ${w} ${h}" role="img" aria-label="${title}" preserveAspectRatio="none">
<line x1="${pad.l}" y1="${h - pad.b}" x2="${w - pad.r}" y2="${h - pad.b}" class="axis"/>
<text x="${pad.l - 6}" y="${pad.t + 8}" text-anchor="end" class="tick">${max}</text>
<text x="${pad.l - 6}" y="${h - pad.b}" text-anchor="end" class="tick">0</text>
${bars.map(
  (b, i) =>
    html`${barOf(b, html`<rect x="${(pad.l + i * slot + slot * 0.15).toFixed(1)}" y="${y(b.value).toFixed(1)}" width="${Math.max(1, slot * 0.7).toFixed(1)}" height="${(h - pad.b - y(b.value)).toFixed(1)}" class="bar"><title>${b.label}: ${b.value}</title></rect>`)}${
      i % every === 0
        ? html`<text x="${(pad.l + i * slot + slot / 2).toFixed(1)}" y="${h - 8}" text-anchor="middle" class="tick">${b.label}</text>`
        : ""
    }`,
)}
</svg>`;
}

/** "1 account", "3 accounts": a count and its noun, never "account(s)". */
export const counted = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
