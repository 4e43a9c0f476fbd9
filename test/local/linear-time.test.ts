import { beforeAll, describe, expect, test } from "bun:test";
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
 * in ten; prose takes 1 to 400 ms. CI's first pass runs this file side by side with
 * test/cluster/model-groups-nodes.test.ts, a minute of waiting (.ci/run).
 */

/** search-query-parse takes at most 20,000 characters */
const sizeOf = (def: AnyFunctionDef) => (def.name === "search-query-parse" ? 20_000 : SIZE);

async function cpuMs(run: () => unknown): Promise<number> {
  const start = threadCpuMs();
  await run();
  return threadCpuMs() - start;
}

/**
 * The bar: 10 times what prose costs (the median of three runs, after one that warms up) plus 300 ms.
 * Each block sets it in its beforeAll, so every test asserts, and any one of them runs alone (-t).
 */
async function barOf(prose: () => unknown): Promise<number> {
  await prose();
  const runs = [await cpuMs(prose), await cpuMs(prose), await cpuMs(prose)].sort((a, b) => a - b);
  return 10 * (runs[1] as number) + 300;
}

/**
 * What one run costs; over `limit`, it runs once more and the lower counts. A collection or a
 * compile on a busy machine lands in one run; a blow-up (seconds, where prose takes milliseconds)
 * is over the bar both times.
 */
async function costOf(run: () => unknown, limit: number): Promise<number> {
  const ms = await cpuMs(run);
  return ms <= limit ? ms : Math.min(ms, await cpuMs(run));
}

const offline = FUNCTIONS.filter((d) => d.local && d.name !== "grammar-fix");

test("every offline function except grammar-fix is covered here", () => {
  expect(offline.map((d) => d.name).sort()).toEqual(Object.keys(TEXT_FIELD).sort());
});

describe.each(offline.map((d) => [d.name, d] as const))("%s on 100 KB adversarial texts", (_name, def) => {
  const field = TEXT_FIELD[def.name] as string;
  const call = (text: string) => async () => def.local?.({ ...def.example.request, [field]: text }, { accountId: "acc_test" });
  let limit = 0;
  // ordinary prose sets the bar; its first run loads lazy tables and warms the JIT
  beforeAll(async () => {
    limit = await barOf(call(fill(PROSE, sizeOf(def))));
  }, 60_000);
  test.each(Object.entries(SHAPES))(
    "%s",
    async (_shape, make) => {
      const ms = await costOf(call(make(sizeOf(def))), limit);
      expect({ cpuMs: Math.round(ms), within: ms <= limit }).toEqual({ cpuMs: Math.round(ms), within: true });
    },
    60_000,
  );
});

describe("inline knowledge-base search on a 100 KB document", () => {
  const search = (content: string) => () => searchInline([{ content }], "how long does delivery take?", 5);
  let limit = 0;
  beforeAll(async () => {
    limit = await barOf(search(fill(PROSE)));
  });
  test.each(Object.entries(SHAPES))("%s", async (_shape, make) => {
    const ms = await costOf(search(make(SIZE)), limit);
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
  beforeAll(async () => {
    limit = await barOf(() => matcher.match(fill(PROSE, 2000)));
  });
  test.each(Object.entries(SHAPES))("%s", async (_shape, make) => {
    const ms = await costOf(() => matcher.match(make(2000)), limit);
    expect({ cpuMs: Math.round(ms), within: ms <= limit }).toEqual({ cpuMs: Math.round(ms), within: true });
  });
});

describe("search-query-parse on 20,000-character runs of connectors between filters", () => {
  const parse = (query: string) => () =>
    FUNCTIONS.find((d) => d.name === "search-query-parse")?.local?.({ query }, { accountId: "acc_test" });
  let limit = 0;
  beforeAll(async () => {
    limit = await barOf(parse(fill(PROSE, 20_000)));
  });
  // each connector once looked back over every removed part before it: quadratic
  test.each([
    ["connectors before a filter", `${"or ".repeat(6_600)}red`],
    ["a filter before connectors", `red ${"or ".repeat(6_600)}`],
    ["filters joined by connectors", "red or blue and ".repeat(1_250)],
  ])("%s", async (_shape, query) => {
    const ms = await costOf(parse(query), limit);
    expect({ cpuMs: Math.round(ms), within: ms <= limit }).toEqual({ cpuMs: Math.round(ms), within: true });
  });
});

describe("the message body of 100 KB adversarial emails (headers, greeting and sign-off cut)", () => {
  const body = (text: string) => () => messageBody(text);
  let limit = 0;
  beforeAll(async () => {
    limit = await barOf(body(fill(PROSE)));
  });
  test.each(Object.entries(SHAPES))("%s", async (_shape, make) => {
    const ms = await costOf(body(make(SIZE)), limit);
    expect({ cpuMs: Math.round(ms), within: ms <= limit }).toEqual({ cpuMs: Math.round(ms), within: true });
  });
});
