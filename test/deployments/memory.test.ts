import { describe, expect, test } from "bun:test";
import { MemoryDeploymentState } from "../../src/deployments/memory";

/** Issue 39: a deployment's sliding windows on one node, on a clock the test moves. */
describe("MemoryDeploymentState", () => {
  const clock = () => {
    const c = { t: 1_000_000, now: () => c.t };
    return c;
  };

  test("rpm is a sliding 60 s window: the N+1th call in any minute is refused, admitted once the oldest leaves", async () => {
    const c = clock();
    const s = new MemoryDeploymentState(c.now);
    for (let i = 0; i < 3; i++) {
      expect(await s.acquire("g/p/m", { rpm: 3 }, 1)).toBe(true);
      c.t += 20_000;
    }
    // t0+60 s: the first call (at t0) has just left the window; not a fixed minute
    expect(await s.acquire("g/p/m", { rpm: 3 }, 1)).toBe(true);
    expect(await s.acquire("g/p/m", { rpm: 3 }, 1)).toBe(false);
    c.t += 19_999;
    expect(await s.acquire("g/p/m", { rpm: 3 }, 1)).toBe(false);
    c.t += 1;
    expect(await s.acquire("g/p/m", { rpm: 3 }, 1)).toBe(true);
    expect((await s.usage(["g/p/m"])).get("g/p/m")?.rpmUsed).toBe(3);
  });

  test("tpm counts estimates, corrected to the tokens used on release; in flight counts open calls", async () => {
    const c = clock();
    const s = new MemoryDeploymentState(c.now);
    expect(await s.acquire("d", { tpm: 1000 }, 600)).toBe(true);
    expect(await s.acquire("d", { tpm: 1000 }, 600)).toBe(false);
    let u = (await s.usage(["d"])).get("d");
    expect(u).toMatchObject({ inFlight: 1, tpmUsed: 600, rpmUsed: 1 });
    s.release("d", { tokensEstimated: 600, tokensUsed: 100, ttfbMs: 50 });
    u = (await s.usage(["d"])).get("d");
    expect(u).toMatchObject({ inFlight: 0, tpmUsed: 100, latencyMs: 50 });
    expect(await s.acquire("d", { tpm: 1000 }, 600)).toBe(true);
    s.release("d", { tokensEstimated: 600, tokensUsed: 900, ttfbMs: 150 });
    u = (await s.usage(["d"])).get("d");
    expect(u?.tpmUsed).toBe(1000);
    // EWMA, alpha 0.2
    expect(u?.latencyMs).toBe(70);
    c.t += 61_000;
    expect((await s.usage(["d"])).get("d")?.tpmUsed).toBe(0);
  });

  test("a cool-down refuses every call until it ends, and shows in usage", async () => {
    const c = clock();
    const s = new MemoryDeploymentState(c.now);
    await s.coolDown("d", 5000);
    expect(await s.acquire("d", {}, 1)).toBe(false);
    expect((await s.usage(["d"])).get("d")?.coolingUntil).toBe(c.t + 5000);
    c.t += 5000;
    expect(await s.acquire("d", {}, 1)).toBe(true);
    expect((await s.usage(["d"])).get("d")?.coolingUntil).toBe(0);
  });

  test("memory stays fixed however many calls pass (the rpm log is a ring of rpm entries)", async () => {
    const c = clock();
    const s = new MemoryDeploymentState(c.now);
    let admitted = 0;
    for (let i = 0; i < 100_000; i++) {
      if (await s.acquire("d", { rpm: 60 }, 1)) {
        admitted++;
        s.release("d", { tokensEstimated: 1 });
      }
      c.t += 60; // 1000 calls a minute offered
    }
    // 100 minutes of offered load, 60 a minute admitted
    expect(admitted).toBeGreaterThanOrEqual(5999);
    expect(admitted).toBeLessThanOrEqual(6001);
  });
});
