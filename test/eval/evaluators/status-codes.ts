/**
 * ticket-analyze on HTTP status codes as people write them ("error 500", "a 502", "getting 504s",
 * "5xx", "502 Bad Gateway"): a ticket reporting a 5xx failure is an outage (priority critical,
 * escalated) and technical; one 5xx that went away on retry is not, nor a number that is no status
 * (room 502, 500 units, $503, flight 504, 500 MB) or a 4xx. status-codes-dev.jsonl is tuned on
 * (--errors lists its misses); status-codes-blind.jsonl was written at the same sitting, committed
 * before any change, and runs only with STATUS_CODES_BLIND=1; its misses are never printed.
 */
import { join } from "node:path";
import ticketAnalyze from "../../../src/functions/ticket-analyze";
import { prf, readJsonl } from "../metrics";
import type { EvalReport, Evaluator, Metric } from "../registry";

interface Item {
  text: string;
  outage: boolean;
}
const load = (file: string) => readJsonl(join(import.meta.dir, "../../fixtures/eval", file), (x) => x as Item);

async function part(name: string, items: Item[], printMisses: boolean) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let right = 0;
  let technical = 0;
  const errors: string[] = [];
  for (const it of items) {
    const r = (await ticketAnalyze.local?.({ ticket: it.text }, { accountId: "acct_eval" })) as Record<string, unknown>;
    const outage = r.priority === "critical" && r.escalate === true;
    if (outage === it.outage) right++;
    if (outage && it.outage) tp++;
    if (outage && !it.outage) fp++;
    if (!outage && it.outage) fn++;
    if (it.outage && r.category === "technical") technical++;
    if (printMisses && (outage !== it.outage || (it.outage && r.category !== "technical")))
      errors.push(`${name}: outage ${it.outage} -> ${outage} (${r.priority}, escalate ${r.escalate}, ${r.category}): ${it.text}`);
  }
  const p = prf({ tp, fp, fn });
  const outages = items.filter((i) => i.outage).length;
  const metrics: Metric[] = [
    { name: `outage right, ${name} (${items.length})`, value: right / items.length },
    { name: `outage precision, ${name}`, value: p.precision },
    { name: `outage recall, ${name} (${outages})`, value: p.recall },
    { name: `outages filed technical, ${name}`, value: technical / outages },
  ];
  return { metrics, errors, items: items.length };
}

const evaluator: Evaluator = {
  name: "status-codes",
  run: async (): Promise<EvalReport> => {
    const parts = [await part("dev", load("status-codes-dev.jsonl"), true)];
    if (process.env.STATUS_CODES_BLIND === "1") parts.push(await part("blind", load("status-codes-blind.jsonl"), false));
    return {
      capability: `ticket-analyze on HTTP status codes as people write them (dev${parts.length > 1 ? " + blind" : ""})`,
      items: parts.reduce((n, p) => n + p.items, 0),
      metrics: parts.flatMap((p) => p.metrics),
      errors: parts.flatMap((p) => p.errors),
    };
  },
};
export default evaluator;
