/**
 * When the offline engine's CPU budget runs out, the gateway refuses the call 413 only when the
 * overrun is the call's own work. A run whose overrun holds one long stretch without a safe point
 * (a collection of the heap stops the thread for 60 to 270 ms on a 500 MB heap: CI once refused a
 * 40-character knowledge-base query that way) is run once more; a call that needs more than its
 * budget, safe point after safe point, is refused on its first run and not paid for twice.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Type as T } from "@sinclair/typebox";
import { defineFunction } from "../../src/functions/define";
import { checkCpuBudget, threadCpuMs } from "../../src/offline-engine/budget";
import { startGateway, type TestGateway } from "../helpers/gateway";

const runs = { count: 0 };
const paused = new Set<string>();
const spin = (ms: number) => {
  const until = threadCpuMs() + ms;
  while (threadCpuMs() < until) {}
};

const budgetProbe = defineFunction({
  name: "budget-probe",
  path: "/api/v1/ai/budget-probe",
  summary: "Works as told, under the offline engine's budget",
  request: T.Object({
    text: T.String({ minLength: 1 }),
    mode: T.Union([T.Literal("quick"), T.Literal("pause"), T.Literal("heavy")]),
  }),
  result: T.Object({ words: T.Integer({ minimum: 0 }) }),
  cost: 1,
  rateClass: "standard",
  promptVersion: 1,
  prompt: (req) => [{ role: "user", content: req.text }],
  preferLocal: true,
  local: (req) => {
    runs.count++;
    if (req.mode === "pause" && !paused.has(req.text)) {
      // the first run of this text: the thread stops 80 ms (as for a collection), then a safe point
      paused.add(req.text);
      spin(80);
      checkCpuBudget();
    }
    if (req.mode === "heavy")
      for (;;) {
        spin(0.2);
        checkCpuBudget();
      }
    return { words: req.text.split(/\s+/).length };
  },
  example: { request: { text: "hello world", mode: "quick" }, result: { words: 2 } },
});

let gw: TestGateway;
let key = "";
let accountId = "";
beforeAll(async () => {
  gw = await startGateway({ functions: [budgetProbe] });
  ({ key, accountId } = gw.newKey({ credits: 1000 }));
  // the function's first budgeted call has its own second run (code not compiled yet): past it
  expect((await probe("warm up", "quick")).status).toBe(200);
});
afterAll(() => gw.close());

const probe = (text: string, mode: string) => gw.post("/api/v1/ai/budget-probe", { text, mode }, { "x-api-key": key });

test("a run stopped by a long stretch that is not its own work is run again and answered", async () => {
  const before = runs.count;
  const res = await probe("a short text", "pause");
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  expect(res.json.data.result).toEqual({ words: 3 });
  expect(runs.count - before).toBe(2);
});

test("a call that needs more than its budget at every safe point is refused on its first run, uncharged", async () => {
  const balance = await gw.deps.ledger.balance(accountId);
  Bun.gc(true);
  const before = runs.count;
  const res = await probe("a long computation", "heavy");
  expect(res.status, JSON.stringify(res.json)).toBe(413);
  expect(res.json.error.code).toBe("payload_too_large");
  expect(runs.count - before).toBe(1);
  expect(await gw.deps.ledger.balance(accountId)).toBe(balance);
});
