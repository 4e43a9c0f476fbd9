/**
 * A model group's order of deployments, drawn per call: for `weighted` and `ordered` groups the
 * orders are made once with their chances (groups.ts `fixedOrders`), and a call draws one. Their
 * distribution must be the one the per-call sort by Efraimidis-Spirakis keys gives (which the
 * larger groups still use): each next deployment drawn in proportion to the weights not yet drawn.
 * (The server-level share test, 10,000 calls through a real gateway, is in model-groups.test.ts.)
 */
import { describe, expect, test } from "bun:test";
import type { DeploymentConfig, ModelGroupConfig } from "../../src/config";
import { pricedTargets } from "../../src/credits/pricing";
import { MemoryDeploymentState } from "../../src/deployments/memory";
import { ModelGroups } from "../../src/providers/groups/groups";
import type { Provider } from "../../src/providers/types";

const PROVIDER = { name: "sim", type: "openai-compatible" } as unknown as Provider;

function group(
  name: string,
  strategy: ModelGroupConfig["strategy"],
  weights: number[],
  fallbacks: string[] = [],
): ModelGroupConfig {
  const deployments = weights.map(
    (weight, i): DeploymentConfig => ({
      id: `${name}/sim/m${i}`,
      group: name,
      provider: "sim",
      model: `${name}-m${i}`,
      served: `sim/${name}-m${i}`,
      weight,
      tags: {},
      priority: 0,
    }),
  );
  return { name, strategy, fallbacks, deployments };
}

const PRICING = {
  models: [],
  default: { input: 1, output: 1 },
  refuseUnpriced: false,
  defaultMaxOutputTokens: 256,
  imageTokens: 1000,
  audioTokens: 1000,
};

function groupsOf(gs: ModelGroupConfig[]): ModelGroups {
  return new ModelGroups(gs, new Map([["sim", PROVIDER]]), new MemoryDeploymentState(), PRICING);
}

/** How often each whole order came out of `n` calls' orders. */
async function orders(groups: ModelGroups, name: string, n: number): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const targets = groups.targets(name, undefined);
  for (let i = 0; i < n; i++) {
    const o = await groups.order(targets, { input: 10, output: 10 });
    const k = o.map((t) => t.model).join(" ");
    seen.set(k, (seen.get(k) ?? 0) + 1);
    groups.settle(o);
  }
  return seen;
}

/** The chance of an order of weights `ws` drawn one after the other in proportion to the weights left. */
function chance(ws: number[]): number {
  let left = ws.reduce((a, b) => a + b, 0);
  let p = 1;
  for (const w of ws) {
    p *= w / left;
    left -= w;
  }
  return p;
}

/** Each order's share within 4.5 standard deviations of its chance. */
function expectShares(seen: Map<string, number>, n: number, expected: Map<string, number>): void {
  expect([...seen.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [k, p] of expected) {
    const sd = Math.sqrt((p * (1 - p)) / n);
    expect(Math.abs((seen.get(k) ?? 0) / n - p), k).toBeLessThan(4.5 * sd + 1e-9);
  }
}

describe("a model group's order of deployments", () => {
  test("weighted 1, 2, 7: each of the six orders comes with its chance (drawn one after the other by weight)", async () => {
    const n = 40_000;
    const seen = await orders(groupsOf([group("w", "weighted", [1, 2, 7])]), "w", n);
    const w = [1, 2, 7];
    const perms = [
      [0, 1, 2],
      [0, 2, 1],
      [1, 0, 2],
      [1, 2, 0],
      [2, 0, 1],
      [2, 1, 0],
    ];
    expectShares(seen, n, new Map(perms.map((p) => [p.map((i) => `w-m${i}`).join(" "), chance(p.map((i) => w[i] as number))])));
  });

  test("a weighted group falling back to an ordered one: the fallback's deployments after, in config order", async () => {
    const n = 20_000;
    const seen = await orders(groupsOf([group("w", "weighted", [3, 1], ["o"]), group("o", "ordered", [1, 1])]), "w", n);
    expectShares(
      seen,
      n,
      new Map([
        ["w-m0 w-m1 o-m0 o-m1", 0.75],
        ["w-m1 w-m0 o-m0 o-m1", 0.25],
      ]),
    );
  });

  test("a weighted group too large for orders made once (six deployments) is sorted per call, with the same first shares", async () => {
    const n = 30_000;
    const weights = [1, 1, 2, 2, 4, 10];
    const seen = await orders(groupsOf([group("big", "weighted", weights)]), "big", n);
    const first = new Map<string, number>();
    for (const [k, c] of seen) first.set(k.split(" ")[0] as string, (first.get(k.split(" ")[0] as string) ?? 0) + c);
    expectShares(first, n, new Map(weights.map((w, i) => [`big-m${i}`, w / 20])));
  });

  test("the orders made once are shared, and never changed by a call", async () => {
    const groups = groupsOf([group("w", "weighted", [1, 2, 7])]);
    const targets = groups.targets("w", undefined);
    const a = await groups.order(targets, { input: 1, output: 1 });
    const copy = [...a];
    for (let i = 0; i < 50; i++) await groups.order(targets, { input: 1, output: 1 });
    expect(a).toEqual(copy);
    expect(targets.map((t) => t.model)).toEqual(["w-m0", "w-m1", "w-m2"]);
  });

  test("a /v1 call's pricing hands the group's list made once on as it is, so the order can draw from the orders made once", async () => {
    // the list a call's pricing answers is what the router orders: a copy would be sorted per call
    // (the orders made once are kept per list), which is how they once went unused on /v1
    const groups = groupsOf([group("w", "weighted", [1, 2, 7])]);
    const targets = groups.targets("w", undefined);
    const body = { model: "w", messages: [{ role: "user", content: "hi" }] };
    const priced = pricedTargets(PRICING, "chat/completions", body, JSON.stringify(body).length, targets);
    expect(priced.targets).toBe(targets);
    // and the orders drawn are the shared ones: the same array objects come back
    const seen = new Set<unknown>();
    for (let i = 0; i < 2000; i++) seen.add(await groups.order(priced.targets, { input: 10, output: 10 }));
    expect(seen.size).toBe(6);
  });
});
