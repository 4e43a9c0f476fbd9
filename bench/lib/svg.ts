/** Hand-written SVG chart of a bench report: throughput and p99 latency per scenario and connection count. */

interface ChartPoint {
  connections: number;
  rps: number;
  p99: number;
  ok: boolean;
}
interface ChartScenario {
  id: string;
  status: string;
  points: ChartPoint[];
}
export interface ChartReport {
  date: string;
  machine: { nproc: number; cpu: string; bun: string };
  scenarios: ChartScenario[];
}

const COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"];
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function panel(
  x0: number,
  y0: number,
  w: number,
  h: number,
  title: string,
  unit: string,
  scenarios: ChartScenario[],
  conns: number[],
  value: (p: ChartPoint) => number,
  log = false,
): string {
  const vals = scenarios.flatMap((s) => s.points.filter((p) => p.ok).map(value));
  const max = niceMax(Math.max(...vals, 0));
  const minLog = 0.01;
  const scale = (v: number) =>
    log ? (Math.log10(Math.max(v, minLog)) - Math.log10(minLog)) / (Math.log10(max) - Math.log10(minLog)) : v / max;
  const out: string[] = [`<text x="${x0}" y="${y0 - 12}" class="t">${esc(title)}</text>`];
  const ticks = log
    ? Array.from({ length: Math.round(Math.log10(max) - Math.log10(minLog)) + 1 }, (_, i) => minLog * 10 ** i)
    : [0, 0.25, 0.5, 0.75, 1].map((f) => f * max);
  for (const t of ticks) {
    const y = y0 + h - scale(t) * h;
    out.push(`<line x1="${x0}" x2="${x0 + w}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" class="g"/>`);
    out.push(
      `<text x="${x0 - 6}" y="${(y + 4).toFixed(1)}" class="a" text-anchor="end">${t >= 1000 ? `${t / 1000}k` : t}</text>`,
    );
  }
  out.push(
    `<text x="${x0 - 44}" y="${y0 + h / 2}" class="a" transform="rotate(-90 ${x0 - 44} ${y0 + h / 2})" text-anchor="middle">${esc(unit)}</text>`,
  );
  const groupW = w / Math.max(1, scenarios.length);
  const barW = (groupW * 0.8) / Math.max(1, conns.length);
  scenarios.forEach((s, i) => {
    const gx = x0 + i * groupW + groupW * 0.1;
    conns.forEach((c, j) => {
      const p = s.points.find((q) => q.connections === c);
      const bx = gx + j * barW;
      if (!p?.ok) {
        out.push(
          `<text x="${(bx + barW / 2).toFixed(1)}" y="${y0 + h - 4}" class="a" text-anchor="middle">${s.status === "skipped" ? "s" : "x"}</text>`,
        );
        return;
      }
      const v = value(p);
      const bh = Math.max(1, scale(v) * h);
      out.push(
        `<rect x="${bx.toFixed(1)}" y="${(y0 + h - bh).toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${bh.toFixed(1)}" fill="${COLORS[j % COLORS.length]}"><title>${esc(`${s.id}, ${c} conn: ${v.toFixed(v >= 100 ? 0 : 3)} ${unit}`)}</title></rect>`,
      );
    });
    out.push(`<text x="${(gx + groupW * 0.4).toFixed(1)}" y="${y0 + h + 16}" class="a" text-anchor="middle">${esc(s.id)}</text>`);
  });
  out.push(`<line x1="${x0}" x2="${x0 + w}" y1="${y0 + h}" y2="${y0 + h}" class="x"/>`);
  return out.join("\n");
}

export function renderSvg(report: ChartReport): string {
  const scenarios = report.scenarios;
  const conns = [...new Set(scenarios.flatMap((s) => s.points.map((p) => p.connections)))].sort((a, b) => a - b);
  const W = 980;
  const H = 640;
  const legend = conns
    .map(
      (c, j) =>
        `<rect x="${700 + j * 90}" y="22" width="12" height="12" fill="${COLORS[j % COLORS.length]}"/><text x="${716 + j * 90}" y="33" class="a">${c} conn</text>`,
    )
    .join("\n");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">
<title>Text-AI Gateway benchmark ${esc(report.date)}: throughput and p99 latency by scenario</title>
<style>.t{font-size:15px;font-weight:bold}.a{font-size:11px;fill:#333}.g{stroke:#ddd}.x{stroke:#333}</style>
<rect width="${W}" height="${H}" fill="#fff"/>
<text x="20" y="30" class="t">Text-AI Gateway benchmark ${esc(report.date)}</text>
<text x="20" y="48" class="a">${esc(`${report.machine.nproc} CPUs, ${report.machine.cpu}, Bun ${report.machine.bun}; gateway pinned to one core; median of repeats; x = failed check, s = skipped`)}</text>
${legend}
${panel(80, 90, 860, 200, "Throughput (requests/s, higher is better)", "req/s", scenarios, conns, (p) => p.rps)}
${panel(80, 380, 860, 200, "p99 latency (ms, log scale, lower is better)", "ms", scenarios, conns, (p) => p.p99, true)}
</svg>
`;
}
