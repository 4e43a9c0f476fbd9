import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { startGateway, type TestGateway } from "../helpers/gateway";

/**
 * Issue 21: one fallback loop, and what is special about the offline engine is a provider
 * capability (`inProcess`, `functionsOnly`, `functions` on Provider), not a branch on its type or name.
 */
const SRC = join(import.meta.dir, "../../src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** `file:line` of each line of src/ matching `re`, outside the files allowed to. */
function linesMatching(re: RegExp, allowed: string[]): string[] {
  const hits: string[] = [];
  for (const file of sources(SRC)) {
    const rel = relative(SRC, file);
    if (allowed.includes(rel)) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (re.test(line)) hits.push(`${rel}:${i + 1}`);
      });
  }
  return hits;
}

describe("one fallback loop, no local branches", () => {
  test("no branch on a provider's type or name being local outside the provider that is local", () => {
    expect(linesMatching(/\btype\s*[!=]==\s*"local"|provider\s*[!=]==\s*"local"/, ["providers/local.ts"])).toEqual([]);
  });

  test("only the fallback loop takes a circuit breaker's permission (one loop for functions, /v1 and streams)", () => {
    expect(linesMatching(/\.tryAcquire\(/, ["providers/fallback.ts"])).toEqual([]);
  });
});

describe("the offline engine under another name", () => {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startGateway({
      configText: `[[providers]]
name = "offline"
type = "local"

[routes]
"json-extractor" = ["offline"]
`,
    });
    key = gw.newKey({ credits: 1000 }).key;
  });
  afterAll(() => gw.close());

  test("its answer carries the offline engine's notes (meta.not_found), as under the name local", async () => {
    const res = await gw.post(
      "/api/v1/ai/json-extractor",
      {
        text: "Invoice date: 2 May 2026. Customer: Lakeside Florist. Thank you for your order.",
        schema: { due_date: "date", customer: "string" },
      },
      { "x-api-key": key },
    );
    expect(res.status).toBe(200);
    expect(res.json.meta.provider).toBe("offline");
    expect(res.json.data.result).toEqual({ due_date: null, customer: "Lakeside Florist" });
    expect(res.json.meta.not_found).toEqual(["due_date"]);
  });
});
