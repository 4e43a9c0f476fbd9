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

/**
 * An email that may break after its "@" and before each "." of its domain, never inside a part
 * ("walker@" / "example.com", not "walke" / "r@ex" / "ampl": a table at 375 px squeezed emails to a
 * few letters a line when they could break anywhere).
 */
export function breakableEmail(email: string): Html {
  const at = email.lastIndexOf("@");
  if (at < 0) return html`${email}`;
  // each part on one line (app.css .part: a hyphen inside one is no place to break either)
  const parts = [
    `${email.slice(0, at)}@`,
    ...email
      .slice(at + 1)
      .split(".")
      .map((p, i) => (i === 0 ? p : `.${p}`)),
  ];
  return raw(parts.map((p) => `<span class="part">${escapeHtml(p)}</span>`).join("<wbr>"));
}

type Bar = { label: string; value: number; href?: string };

/** A column's bar, as a link when it has one (to the requests it counts). */
const barOf = (b: Bar, inner: Html): Html =>
  b.href ? html`<a href="${b.href}" aria-label="Requests of ${b.label}">${inner}</a>` : inner;

/** labels this short (days of the month) stand under their columns; longer ones get a row each */
const SHORT_LABEL = 3;
/** at most this many labels under a column chart, so that they never touch at any width (375 px up) */
const COLUMN_LABELS = 8;

/**
 * A bar chart without script or library: the bars are inline SVG (stretched to the chart's width, no
 * text in it: a stretched label is unreadable), every label and figure is HTML text, which keeps its
 * size at any width. Short labels (a day's "06") stand under their columns, at most COLUMN_LABELS of
 * them; longer ones (a function's name) make a horizontal bar chart, one row per bar with its label
 * on the left (wrapped, never cut) and its value on the right. Readable by a screen reader through
 * its table twin and its links' names. (2026-12-06: every label was SVG text under its column, so
 * function names overlapped and the last was cut off at 1440 and at 375 px.)
 */
export function barChart(title: string, bars: Bar[]): Html {
  const max = Math.max(1, ...bars.map((b) => b.value));
  return bars.every((b) => b.label.length <= SHORT_LABEL) ? columnChart(title, bars, max) : rowChart(title, bars, max);
}

function columnChart(title: string, bars: Bar[], max: number): Html {
  const every = Math.max(1, Math.ceil(bars.length / COLUMN_LABELS));
  const w = Math.max(1, bars.length) * 10;
  return html`<div class="chart columns" role="group" aria-label="${title}">
<div class="yaxis" aria-hidden="true"><span class="label">${max}</span><span class="label">0</span></div>
<svg class="plot" viewBox="0 0 ${w} 100" preserveAspectRatio="none">${bars.map((b, i) => {
    const h = (100 * b.value) / max;
    return barOf(
      b,
      html`<rect x="${i * 10 + 1.5}" y="${(100 - h).toFixed(2)}" width="7" height="${h.toFixed(2)}" class="bar"><title>${b.label}: ${b.value}</title></rect>`,
    );
  })}</svg>
<div class="xlabels" aria-hidden="true">${bars.map(
    (b, i) => html`<span class="slot">${i % every === 0 ? html`<span class="label">${b.label}</span>` : ""}</span>`,
  )}</div>
</div>`;
}

function rowChart(title: string, bars: Bar[], max: number): Html {
  return html`<div class="chart rows" role="group" aria-label="${title}">${bars.map((b) => {
    const inner = html`<span class="label">${b.label}</span><svg class="track" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true"><rect x="0" y="0" width="${((100 * b.value) / max).toFixed(2)}" height="10" class="bar"/></svg><span class="value">${b.value}</span>`;
    return b.href
      ? html`<a class="row" href="${b.href}" aria-label="Requests of ${b.label}" title="${b.label}: ${b.value}">${inner}</a>`
      : html`<div class="row" title="${b.label}: ${b.value}">${inner}</div>`;
  })}</div>`;
}

// the count words of every page, the CLI's and the messages' (src/words.ts)
export { counted, noun, pluralOf } from "../../../words";
