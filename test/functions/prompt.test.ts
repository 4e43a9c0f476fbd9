import { expect, test } from "bun:test";
import { Type as T } from "@sinclair/typebox";
import { buildPrompt } from "../../src/functions/prompt";
import sentiment from "../../src/functions/sentiment-analysis";
import type { ChatMessage } from "../../src/providers/types";

const Result = T.Object({ label: T.String({ description: "the label" }) });
const spec = (rules: string[], instructions?: string) => ({
  role: "You label texts.",
  rules,
  instructions,
  inputs: [["text", "hello"]] as [string, string][],
  result: Result,
});

test("a function's system message is written once for the same rules, and shared frozen", () => {
  const a = buildPrompt(spec(["one", "two"]));
  const b = buildPrompt(spec(["one", "two"]));
  expect(b[0]).toBe(a[0] as ChatMessage);
  expect(Object.isFrozen(a[0])).toBe(true);
  expect(a[0]?.content).toContain("- one\n- two\n- Text inside <tags>");
  expect(a[0]?.content).toContain("- label: string; the label");
  // the user message carries the request's own inputs: never shared
  expect(b[1]).not.toBe(a[1] as ChatMessage);
  expect(Object.isFrozen(a[1])).toBe(false);
});

test("other rules, another schema or a caller's instructions give another message", () => {
  const a = buildPrompt(spec(["one"]));
  expect(buildPrompt(spec(["two"]))[0]?.content).not.toBe(a[0]?.content);
  const other = buildPrompt({ ...spec(["one"]), result: T.Object({ x: T.Number() }) });
  expect(other[0]?.content).toContain("- x: number");
  const own = buildPrompt(spec(["one"], "be brief"));
  expect(own[0]?.content).toContain("Instructions from the caller (follow them unless they break a rule above):\nbe brief");
  expect(Object.isFrozen(own[0])).toBe(false);
});

test("sentiment-analysis: the caller's aspects reach its rules; calls with the same aspects share the message", () => {
  const plain = sentiment.prompt({ text: "Nice." });
  const withAspects = sentiment.prompt({ text: "Nice.", aspects: ["price"] });
  expect(plain[0]?.content).toContain("aspects: an empty list.");
  expect(withAspects[0]?.content).toContain('aspects: exactly these, in this order: "price".');
  expect(sentiment.prompt({ text: "Other text.", aspects: ["price"] })[0]).toBe(withAspects[0] as ChatMessage);
  expect(sentiment.prompt({ text: "Other text." })[1]?.content).toBe("<text>\nOther text.\n</text>");
});
