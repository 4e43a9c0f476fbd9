/** StreamRestorer as a unit: the pieces of a stream a simulator cannot easily cut (tool-call arguments, a text that ends mid-placeholder). */
import { describe, expect, test } from "bun:test";
import { RequestGuard, StreamRestorer } from "../../src/providers/guardrails";

const EMAIL = "ann.lee@example.com";

function guard(): RequestGuard {
  const g = new RequestGuard({ redactPii: ["email"], restorePii: true, blockPii: [], blockModeration: [] });
  g.inspect([`write to ${EMAIL}`]);
  expect(g.redact(`write to ${EMAIL}`)).toBe("write to [EMAIL_1]");
  return g;
}
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe("StreamRestorer", () => {
  test("tool-call arguments cut inside a placeholder are restored", () => {
    const r = new StreamRestorer(guard(), "chat/completions");
    const out = [
      ...r.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"to":"[EMA' } }] })),
      ...r.push(chunk({ tool_calls: [{ index: 0, function: { arguments: 'IL_1]"}' } }] })),
      ...r.push(chunk({}, "tool_calls")),
      ...r.end(),
    ] as ReturnType<typeof chunk>[];
    const args = out
      .flatMap((e) => (e.choices[0]?.delta.tool_calls as { function: { arguments: string } }[] | undefined) ?? [])
      .map((t) => t.function.arguments)
      .join("");
    expect(args).toBe(`{"to":"${EMAIL}"}`);
  });

  test("the deprecated function_call's arguments are restored as JSON, cut inside a placeholder or not", () => {
    const g = new RequestGuard({ redactPii: ["address"], restorePii: true, blockPii: [], blockModeration: [] });
    const address = "12 Main Street\nSpringfield, IL 62704";
    g.inspect([address]);
    expect(g.redact(address)).toBe("[ADDRESS_1]");
    const r = new StreamRestorer(g, "chat/completions");
    const out = [
      ...r.push(chunk({ function_call: { name: "ship", arguments: '{"to":"[ADD' } })),
      ...r.push(chunk({ function_call: { arguments: 'RESS_1]"}' } })),
      ...r.push(chunk({}, "function_call")),
    ] as ReturnType<typeof chunk>[];
    const args = out
      .map((e) => (e.choices[0]?.delta.function_call as { arguments?: string } | undefined)?.arguments ?? "")
      .join("");
    expect(JSON.parse(args)).toEqual({ to: address });
  });

  test("what is held when the choice ends goes with its last chunk; a bracket that starts no placeholder is not held", () => {
    const r = new StreamRestorer(guard(), "chat/completions");
    const a = r.push(chunk({ content: "see [" })) as ReturnType<typeof chunk>[];
    expect(a[0]?.choices[0]?.delta.content).toBe("see ");
    const b = r.push(chunk({ content: "EM" }, "stop")) as ReturnType<typeof chunk>[];
    expect(b[0]?.choices[0]?.delta.content).toBe("[EM");
    expect(r.end()).toEqual([]);
    const c = r.push(chunk({ content: "list [x] and [" })) as ReturnType<typeof chunk>[];
    expect(c[0]?.choices[0]?.delta.content).toBe("list [x] and ");
    const d = r.push(chunk({ content: "Q]" })) as ReturnType<typeof chunk>[];
    expect(d[0]?.choices[0]?.delta.content).toBe("[Q]");
  });

  test("a streamed refusal (and any other text field of a delta) is restored, cut inside a placeholder or not", () => {
    const r = new StreamRestorer(guard(), "chat/completions");
    const out = [
      ...r.push(chunk({ refusal: "I cannot write to [EMA" })),
      ...r.push(chunk({ refusal: "IL_1] for you, nor [EMAIL_1]." })),
      ...r.push(chunk({ reasoning_content: "the user gave [EMAIL_1" })),
      ...r.push(chunk({ reasoning_content: "]" }, "stop")),
    ] as ReturnType<typeof chunk>[];
    const field = (name: string) => out.map((e) => (e.choices[0]?.delta[name] as string | undefined) ?? "").join("");
    expect(field("refusal")).toBe(`I cannot write to ${EMAIL} for you, nor ${EMAIL}.`);
    expect(field("reasoning_content")).toBe(`the user gave ${EMAIL}`);
    expect(out.every((e) => e.choices[0]?.delta.content === undefined)).toBe(true);
  });

  test("a refusal still held when the stream ends without a finishing chunk is sent as a refusal", () => {
    const r = new StreamRestorer(guard(), "chat/completions");
    r.push(chunk({ role: "assistant", refusal: "no: [EMAIL_" }));
    const tail = r.end() as ReturnType<typeof chunk>[];
    expect(tail[0]?.choices[0]?.delta).toEqual({ refusal: "[EMAIL_" });
  });

  test("a stream that ends without a finishing chunk sends what is held", () => {
    const r = new StreamRestorer(guard(), "chat/completions");
    r.push(chunk({ content: "mail [EMAIL_" }));
    const tail = r.end() as ReturnType<typeof chunk>[];
    expect(tail[0]?.choices[0]?.delta.content).toBe("[EMAIL_");
  });

  test("without restore_pii nothing is changed", () => {
    const g = new RequestGuard({ redactPii: ["email"], restorePii: false, blockPii: [], blockModeration: [] });
    g.inspect([EMAIL]);
    g.redact(EMAIL);
    expect(g.restore("[EMAIL_1]")).toBe("[EMAIL_1]");
  });

  test("a placeholder the client wrote itself is never given out", () => {
    const g = new RequestGuard({ redactPii: ["email"], restorePii: true, blockPii: [], blockModeration: [] });
    const text = `the template says [EMAIL_1]; mine is ${EMAIL}`;
    g.inspect([text]);
    expect(g.redact(text)).toBe("the template says [EMAIL_1]; mine is [EMAIL_2]");
    expect(g.restore("[EMAIL_1] / [EMAIL_2]")).toBe(`[EMAIL_1] / ${EMAIL}`);
  });
});

describe("RequestGuard.restoreJson", () => {
  const text = `ship to Kaštielska 5\n34 030 Martin, mail ${EMAIL}`;
  const address = "Kaštielska 5\n34 030 Martin";
  function twoValues(): RequestGuard {
    const g = new RequestGuard({ redactPii: ["address", "email"], restorePii: true, blockPii: [], blockModeration: [] });
    g.inspect([text]);
    expect(g.redact(text)).toBe("ship to [ADDRESS_1], mail [EMAIL_1]");
    return g;
  }

  test("a value JSON must escape (a newline) and one it need not are both written back as valid JSON", () => {
    const answer = JSON.stringify({ choices: [{ message: { content: "To [ADDRESS_1], cc [EMAIL_1] and [EMAIL_9]." } }] });
    const back = JSON.parse(twoValues().restoreJson(answer));
    expect(back.choices[0].message.content).toBe(`To ${address}, cc ${EMAIL} and [EMAIL_9].`);
  });

  test("inside a string that is JSON itself (tool-call arguments) the value is escaped twice", () => {
    const args = JSON.stringify({ to: "[ADDRESS_1]", cc: "[EMAIL_1]" });
    const answer = JSON.stringify({ choices: [{ message: { tool_calls: [{ function: { arguments: args } }] } }] });
    const back = JSON.parse(twoValues().restoreJson(answer));
    expect(JSON.parse(back.choices[0].message.tool_calls[0].function.arguments)).toEqual({ to: address, cc: EMAIL });
  });

  test("an answer that is not JSON is restored as text", () => {
    expect(twoValues().restoreJson("not json: [EMAIL_1] [ADDRESS_1]")).toBe(
      `not json: ${EMAIL} ${JSON.stringify(address).slice(1, -1)}`,
    );
  });
});
