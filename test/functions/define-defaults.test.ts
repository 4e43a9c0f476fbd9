import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { defineFunction, FUNCTION_DEFAULTS } from "../../src/functions/define";
import { buildPrompt, languageRule, writtenIn } from "../../src/functions/prompt";
import { FUNCTIONS, KNOWLEDGE_FUNCTIONS } from "../../src/functions/registry";
import { Result } from "../../src/functions/schemas";
import { usageNames } from "../../src/http/routes/usage-names";

const request = Type.Object({ text: Type.String(), allowed: Type.Optional(Type.Array(Type.String())) });
const result = Result({ label: Type.String() }, "a label");
const example = { request: { text: "hi" }, result: { label: "greeting" } };

describe("defineFunction: a file states only what is its own", () => {
  test("path, tags, cost, rate class and prompt version default; what a file states wins", () => {
    const def = defineFunction({
      name: "x-label",
      summary: "Label a text",
      request,
      result,
      role: "You label texts.",
      brief: (req) => ({ inputs: [["text", req.text]] }),
      example,
    });
    expect(def.path).toBe("/api/v1/ai/x-label");
    expect(def.tags).toEqual(["text"]);
    expect({ cost: def.cost, rateClass: def.rateClass, promptVersion: def.promptVersion }).toEqual({
      cost: FUNCTION_DEFAULTS.cost,
      rateClass: "standard",
      promptVersion: 1,
    });
    const own = defineFunction({
      name: "y-label",
      path: "/api/v1/other/:id/label",
      summary: "Label",
      tags: ["Knowledge"],
      request,
      result,
      cost: 3,
      rateClass: "heavy",
      promptVersion: 2,
      prompt: () => [{ role: "user", content: "x" }],
      example,
    });
    expect([own.path, own.tags, own.cost, own.rateClass, own.promptVersion]).toEqual([
      "/api/v1/other/:id/label",
      ["Knowledge"],
      3,
      "heavy",
      2,
    ]);
    expect(own.prompt({ text: "a" })).toEqual([{ role: "user", content: "x" }]);
  });

  test("role and brief make the prompt buildPrompt makes, the answer format from the request's result schema", () => {
    const special = Result({ label: Type.Union([Type.Literal("a"), Type.Literal("b")]) }, "a or b");
    const def = defineFunction({
      name: "z-label",
      summary: "Label",
      request,
      result,
      resultSchemaFor: (req) => (req.allowed ? special : result),
      role: "You label texts.",
      brief: (req) => ({ rules: [writtenIn("text", "German"), languageRule("text")], inputs: [["text", req.text]] }),
      example,
    });
    const rules = ["The text is written in: German", "Write in the language of the text."];
    const inputs: [string, string][] = [["text", "hallo"]];
    expect(def.prompt({ text: "hallo" })).toEqual(buildPrompt({ role: "You label texts.", rules, inputs, result }));
    expect(def.prompt({ text: "hallo", allowed: ["a"] })).toEqual(
      buildPrompt({ role: "You label texts.", rules, inputs, result: special }),
    );
  });

  test("pins: a rule ahead of the brief's, spelling drift mapped, a stray value a problem", () => {
    const def = defineFunction({
      name: "p-label",
      summary: "Label",
      request,
      result,
      role: "You label texts.",
      brief: () => ({ rules: ["Be brief."], inputs: [] }),
      pins: (req) => ({ label: req.allowed }),
      example,
    });
    const req = { text: "t", allowed: ["Greeting", "Other"] };
    const system = def.prompt(req)[0].content as string;
    expect(system).toContain('- label must be exactly one of: "Greeting", "Other".\n- Be brief.');
    expect(def.postprocess?.(req, { label: "greeting" })).toEqual({ label: "Greeting" });
    expect(def.check?.(req, { label: "farewell" })).toEqual([
      'label "farewell" is not one of the allowed values (Greeting, Other)',
    ]);
  });
});

describe("knowledge functions are function files", () => {
  test("every knowledge function's name is a usage name a key's allowed_functions may hold", () => {
    const names = usageNames(FUNCTIONS);
    expect(KNOWLEDGE_FUNCTIONS.map((f) => f.name).filter((n) => !names.has(n))).toEqual([]);
    expect(KNOWLEDGE_FUNCTIONS.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        "/api/v1/knowledge-bases/:id/search",
        "/api/v1/ai/knowledge-bases",
        "/api/v1/ai/faq-match",
        "/api/v1/chatbots/:id/chat",
      ]),
    );
  });

  test("nothing in src/knowledge/ imports src/functions/ (the functions layer sits above the services)", () => {
    const dir = join(import.meta.dir, "../../src/knowledge");
    const upward = readdirSync(dir)
      .filter((f) => f.endsWith(".ts"))
      .filter((f) => /from "\.\.\/functions\//.test(readFileSync(join(dir, f), "utf8")));
    expect(upward).toEqual([]);
  });
});
