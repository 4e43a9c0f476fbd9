/** The hand-written PII sets alone (tuning set + held-out set): messier texts than the generated one. */
import type { Evaluator } from "../registry";
import { evaluatePii, loadHandwrittenPii } from "./pii";

const evaluator: Evaluator = {
  name: "pii-handwritten",
  run: () => evaluatePii(loadHandwrittenPii(), "pii (hand-written + held-out)"),
};
export default evaluator;
