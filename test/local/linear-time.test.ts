import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { AnyFunctionDef } from "../../src/functions/define";
import { messageBody } from "../../src/functions/offline/contact-free";
import { FUNCTIONS } from "../../src/functions/registry";
import { FaqMatcher } from "../../src/knowledge/faq-match";
import { searchInline } from "../../src/knowledge/inline";
import { threadCpuMs } from "../../src/offline-engine/budget";
import { fill, PROSE, SHAPES, SIZE, TEXT_FIELD } from "../helpers/adversarial";

/**
 * Every offline function, fed 100 KB texts shaped to make backtracking or nested loops blow up,
 * must cost about what 100 KB of ordinary prose costs: at most 10 times as much plus 300 ms.
 * Cost is this thread's CPU time, so other processes on a busy machine do not move it. Before the
 * linear-time work, `!!!!…` took 8 to 26 s in five functions and a text of blank lines 12 to 65 s
 * in ten; prose takes 1 to 400 ms.
 */

/** search-query-parse takes at most 20,000 characters */
const sizeOf = (def: AnyFunctionDef) => (def.name === "search-query-parse" ? 20_000 : SIZE);

async function cpuMs(run: () => unknown): Promise<number> {
  const start = threadCpuMs();
  await run();
  return threadCpuMs() - start;
}

const offline = FUNCTIONS.filter((d) => d.local && d.name !== "grammar-fix");

test("every offline function except grammar-fix is covered here", () => {
  expect(offline.map((d) => d.name).sort()).toEqual(Object.keys(TEXT_FIELD).sort());
});

describe.each(offline.map((d) => [d.name, d] as const))("%s on 100 KB adversarial texts", (_name, def) => {
  const field = TEXT_FIELD[def.name] as string;
  const call = (text: string) => async () => def.local?.({ ...def.example.request, [field]: text }, { accountId: "acc_test" });
  let limit = 0;
  test("ordinary prose sets the bar", async () => {
    const text = fill(PROSE, sizeOf(def));
    await call(text)(); // warm-up: lazy tables, JIT
    limit = 10 * (await cpuMs(call(text))) + 300;
  }, 60_000);
  test.each(Object.entries(SHAPES))(
    "%s",
    async (_shape, make) => {
      const ms = await cpuMs(call(make(sizeOf(def))));
      expect({ cpuMs: Math.round(ms), within: ms <= limit }).toEqual({ cpuMs: Math.round(ms), within: true });
    },
    60_000,
  );
});

describe("inline knowledge-base search on a 100 KB document", () => {
  const search = (content: string) => () => searchInline([{ content }], "how long does delivery take?", 5);
  let limit = 0;
  test("ordinary prose sets the bar", async () => {
    await search(fill(PROSE))();
    limit = 10 * (await cpuMs(search(fill(PROSE)))) + 300;
  });
  test.each(Object.entries(SHAPES))("%s", async (_shape, make) => {
    const ms = await cpuMs(search(make(SIZE)));
    expect({ cpuMs: Math.round(ms), within: ms <= limit }).toEqual({ cpuMs: Math.round(ms), within: true });
  });
});

describe("FAQ match on 2,000-character adversarial queries (the longest a query may be)", () => {
  const faqs = (
    JSON.parse(readFileSync(new URL("../fixtures/knowledge/faq.json", import.meta.url), "utf8")) as {
      faqs: { question: string; answer: string }[];
    }
  ).faqs.map((f, i) => ({ id: String(i + 1), ...f }));
  const matcher = new FaqMatcher(faqs);
  let limit = 0;
  test("ordinary prose sets the bar", async () => {
    matcher.match(fill(PROSE, 2000));
    limit = 10 * (await cpuMs(() => matcher.match(fill(PROSE, 2000)))) + 300;
  });
  test.each(Object.entries(SHAPES))("%s", async (_shape, make) => {
    const ms = await cpuMs(() => matcher.match(make(2000)));
    expect({ cpuMs: Math.round(ms), within: ms <= limit }).toEqual({ cpuMs: Math.round(ms), within: true });
  });
});

describe("search-query-parse on 20,000-character runs of connectors between filters", () => {
  const parse = (query: string) => () =>
    FUNCTIONS.find((d) => d.name === "search-query-parse")?.local?.({ query }, { accountId: "acc_test" });
  let limit = 0;
  test("ordinary prose sets the bar", async () => {
    await parse(fill(PROSE, 20_000))();
    limit = 10 * (await cpuMs(parse(fill(PROSE, 20_000)))) + 300;
  });
  // each connector once looked back over every removed part before it: quadratic
  test.each([
    ["connectors before a filter", `${"or ".repeat(6_600)}red`],
    ["a filter before connectors", `red ${"or ".repeat(6_600)}`],
    ["filters joined by connectors", "red or blue and ".repeat(1_250)],
  ])("%s", async (_shape, query) => {
    const ms = await cpuMs(parse(query));
    expect({ cpuMs: Math.round(ms), within: ms <= limit }).toEqual({ cpuMs: Math.round(ms), within: true });
  });
});

describe("the message body of 100 KB adversarial emails (headers, greeting and sign-off cut)", () => {
  const body = (text: string) => () => messageBody(text);
  let limit = 0;
  test("ordinary prose sets the bar", async () => {
    await body(fill(PROSE))();
    limit = 10 * (await cpuMs(body(fill(PROSE)))) + 300;
  });
  test.each(Object.entries(SHAPES))("%s", async (_shape, make) => {
    const ms = await cpuMs(body(make(SIZE)));
    expect({ cpuMs: Math.round(ms), within: ms <= limit }).toEqual({ cpuMs: Math.round(ms), within: true });
  });
});
