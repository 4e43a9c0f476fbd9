/** The hand-written PII set alone: harder, messier texts than the generated one. */
import type { Evaluator } from "../registry";
import { evaluatePii, loadHandwrittenPii } from "./pii";

const evaluator: Evaluator = { name: "pii-handwritten", run: () => evaluatePii(loadHandwrittenPii(), "pii (hand-written only)") };
export default evaluator;
