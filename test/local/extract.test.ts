import { describe, expect, test } from "bun:test";
import { type EntityType, extractEntities } from "../../src/local/extract";
import { loadJsonl, medianMs } from "./helpers";

interface Item {
  text: string;
  entities: Partial<Record<EntityType, string[]>>;
}

const items = loadJsonl<Item>("extract.jsonl");
const REF = new Date("2026-11-21T12:00:00Z");

describe("extractEntities on labeled examples", () => {
  test("precision and recall over (type, text) pairs", () => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    const notes: string[] = [];
    for (const it of items) {
      const got = new Set(extractEntities(it.text, { referenceDate: REF }).map((e) => `${e.type}|${e.text}`));
      const want = new Set(Object.entries(it.entities).flatMap(([t, xs]) => (xs ?? []).map((x) => `${t}|${x}`)));
      for (const g of got) {
        if (want.has(g)) tp++;
        else {
          fp++;
          notes.push(`extra   ${g}   in: ${it.text.slice(0, 50)}`);
        }
      }
      for (const w of want) {
        if (!got.has(w)) {
          fn++;
          notes.push(`missing ${w}   in: ${it.text.slice(0, 50)}`);
        }
      }
    }
    const precision = tp / Math.max(1, tp + fp);
    const recall = tp / Math.max(1, tp + fn);
    console.log(`entity precision ${(precision * 100).toFixed(1)}% recall ${(recall * 100).toFixed(1)}% on ${items.length} texts`, notes.length ? `\n  ${notes.join("\n  ")}` : "");
    expect(items.length).toBeGreaterThanOrEqual(30);
    expect(precision).toBeGreaterThanOrEqual(0.85);
    expect(recall).toBeGreaterThanOrEqual(0.85);
  });
});

describe("extractEntities details", () => {
  test("offsets select the entity text exactly, even after emoji", () => {
    const text = "😀 Café order #B77812 cost €12,50 — mail zoë@example.com";
    for (const e of extractEntities(text)) expect(text.slice(e.start, e.end)).toBe(e.text);
  });

  test("money carries amount and ISO currency", () => {
    const [m] = extractEntities("Total: £1,249.50", { types: ["money"] });
    expect(m).toMatchObject({ value: 1249.5, currency: "GBP" });
    const [k] = extractEntities("budget of $2.5k", { types: ["money"] });
    expect(k.value).toBe(2500);
  });

  test("dates resolve against the reference date", () => {
    const [d] = extractEntities("see you next Friday", { types: ["date"], referenceDate: REF });
    expect(d.value).toBe("2026-11-27");
  });

  test("a money amount is not also reported as a number", () => {
    const types = extractEntities("It costs $40 for 2 people").map((e) => e.type);
    expect(types).toEqual(["money", "number"]);
  });
});

test("speed: 1 KB median well under 1 ms", () => {
  const text = items
    .map((i) => i.text)
    .join(" ")
    .slice(0, 1024);
  expect(medianMs(() => extractEntities(text))).toBeLessThan(1);
});

test("held-out examples stay accurate", () => {
  const holdout = loadJsonl<Item>("extract-holdout.jsonl");
  let tp = 0;
  let total = 0;
  let found = 0;
  for (const it of holdout) {
    const got = new Set(extractEntities(it.text, { referenceDate: REF }).map((e) => `${e.type}|${e.text}`));
    const want = Object.entries(it.entities).flatMap(([t, xs]) => (xs ?? []).map((x) => `${t}|${x}`));
    tp += want.filter((w) => got.has(w)).length;
    total += want.length;
    found += got.size;
  }
  console.log(`entity holdout precision ${((tp / found) * 100).toFixed(1)}% recall ${((tp / total) * 100).toFixed(1)}%`);
  expect(tp / found).toBeGreaterThanOrEqual(0.85);
  expect(tp / total).toBeGreaterThanOrEqual(0.85);
});
