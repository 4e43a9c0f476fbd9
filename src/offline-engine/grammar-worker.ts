/**
 * The grammar worker's entry (started by ./grammar.ts; listed as an entry point of `bun run build`
 * so the compiled binary holds it). Messages: { id, op: "warm" } and { id, op: "fix", text, dialect };
 * replies: { id, result } or { id, error }.
 */
import { CpuBudgetExceeded, withCpuBudget } from "./budget";
import type { GrammarDialect } from "./grammar";
import { fixGrammar, warmGrammar } from "./grammar-engine";

declare const self: Worker;

type Request = { id: number; op: "warm" } | { id: number; op: "fix"; text: string; dialect?: GrammarDialect; budgetMs?: number };

self.onmessage = async (e: MessageEvent<Request>) => {
  const m = e.data;
  try {
    if (m.op === "warm") {
      await warmGrammar();
      self.postMessage({ id: m.id });
    } else {
      const fix = () => fixGrammar(m.text, { dialect: m.dialect });
      const result = await (m.budgetMs === undefined ? fix() : withCpuBudget(m.budgetMs, fix));
      self.postMessage({ id: m.id, result });
    }
  } catch (err) {
    if (err instanceof CpuBudgetExceeded) self.postMessage({ id: m.id, budgetMs: err.budgetMs });
    else self.postMessage({ id: m.id, error: (err as Error).message });
  }
};
