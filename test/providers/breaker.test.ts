import { describe, expect, test } from "bun:test";
import { askedOutputTokens, Breakers, CircuitBreaker } from "../../src/providers/breaker";
import { ProviderError } from "../../src/providers/types";

function setup(threshold = 3, cooldownMs = 1000) {
  let t = 0;
  const breaker = new CircuitBreaker({ failureThreshold: threshold, cooldownMs, now: () => t });
  return {
    breaker,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe("CircuitBreaker", () => {
  test("opens after N consecutive failures, not before", () => {
    const { breaker } = setup(3);
    breaker.failure();
    breaker.failure();
    expect(breaker.state).toBe("closed");
    expect(breaker.tryAcquire()).toBe(true);
    breaker.failure();
    expect(breaker.state).toBe("open");
    expect(breaker.consecutiveFailures).toBe(3);
    expect(breaker.tryAcquire()).toBe(false);
  });

  test("a success resets the consecutive count", () => {
    const { breaker } = setup(3);
    breaker.failure();
    breaker.failure();
    breaker.success();
    breaker.failure();
    breaker.failure();
    expect(breaker.state).toBe("closed");
  });

  test("after the cool-down exactly one probe goes through; success closes", () => {
    const { breaker, advance } = setup(2, 1000);
    breaker.failure();
    breaker.failure();
    advance(999);
    expect(breaker.tryAcquire()).toBe(false);
    advance(1);
    expect(breaker.state).toBe("half_open");
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.tryAcquire()).toBe(false);
    breaker.success();
    expect(breaker.state).toBe("closed");
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.tryAcquire()).toBe(true);
  });

  test("a failed probe opens the circuit for another cool-down", () => {
    const { breaker, advance } = setup(2, 1000);
    breaker.failure();
    breaker.failure();
    advance(1000);
    expect(breaker.tryAcquire()).toBe(true);
    breaker.failure();
    expect(breaker.state).toBe("open");
    advance(500);
    expect(breaker.tryAcquire()).toBe(false);
    advance(500);
    expect(breaker.tryAcquire()).toBe(true);
  });

  test("a released probe frees the half-open slot", () => {
    const { breaker, advance } = setup(1, 100);
    breaker.failure();
    advance(100);
    expect(breaker.tryAcquire()).toBe(true);
    breaker.release();
    expect(breaker.tryAcquire()).toBe(true);
  });

  test("pauseFor skips the provider for the asked time, capped at one cool-down", () => {
    const { breaker, advance } = setup(5, 1000);
    breaker.pauseFor(300);
    expect(breaker.tryAcquire()).toBe(false);
    advance(300);
    expect(breaker.tryAcquire()).toBe(true);
    breaker.success();
    breaker.pauseFor(60_000);
    advance(999);
    expect(breaker.tryAcquire()).toBe(false);
    advance(1);
    expect(breaker.tryAcquire()).toBe(true);
  });

  test("pauseLeftMs: the pause the provider asked for, left; 0 for a circuit opened by failures or closed", () => {
    const { breaker, advance } = setup(2, 1000);
    expect(breaker.pauseLeftMs()).toBe(0);
    breaker.pauseFor(400);
    advance(150);
    expect(breaker.pauseLeftMs()).toBe(250);
    expect(breaker.backInMs()).toBe(250);
    advance(250);
    expect(breaker.pauseLeftMs()).toBe(0);
    expect(breaker.tryAcquire()).toBe(true);
    breaker.failure(); // one failure after a pause is one failure: the threshold (2) is not reached
    expect(breaker.state).toBe("closed");
    breaker.failure(); // the threshold: open for a cool-down
    expect(breaker.state).toBe("open");
    breaker.pauseFor(200); // shorter than the cool-down: the failures' opening stands
    expect(breaker.pauseLeftMs()).toBe(0);
    expect(breaker.backInMs()).toBe(1000);
  });

  test("a rate limit is no failure: 429s in a row never open the circuit, each pauses it for its own time", () => {
    const { breaker, advance } = setup(2, 30_000);
    for (let i = 0; i < 5; i++) {
      expect(breaker.tryAcquire()).toBe(true);
      breaker.pauseFor(2000);
      expect(breaker.tryAcquire()).toBe(false);
      advance(2000);
    }
    expect({ state: breaker.state, failures: breaker.consecutiveFailures }).toEqual({ state: "closed", failures: 0 });
    expect(breaker.tryAcquire()).toBe(true);
  });

  test("a half-open probe that gets a 429 pauses it; the next call after the pause probes again", () => {
    const { breaker, advance } = setup(2, 1000);
    breaker.failure();
    breaker.failure();
    advance(1000);
    expect(breaker.tryAcquire()).toBe(true); // the probe
    breaker.pauseFor(300);
    expect(breaker.backInMs()).toBe(300);
    advance(300);
    expect(breaker.tryAcquire()).toBe(true); // probes again (half-open), not another cool-down
    expect(breaker.tryAcquire()).toBe(false);
    breaker.success();
    expect(breaker.state).toBe("closed");
  });

  test("Breakers.failed: a 429 pauses for its Retry-After (10 s without one), a 503 with Retry-After counts as a failure", () => {
    let t = 0;
    const set = new Breakers({ failureThreshold: 1, cooldownMs: 30_000, longOutputTokens: 4096, now: () => t });
    const b = set.get("p", "m");
    b.tryAcquire();
    set.failed(b, new ProviderError("status", "busy", 429), { startedAt: 0 });
    expect({ state: b.state, back: b.backInMs(), paused: b.pauseLeftMs() }).toEqual({
      state: "closed",
      back: 10_000,
      paused: 10_000,
    });
    t += 10_000;
    b.tryAcquire();
    set.failed(b, new ProviderError("status", "busy", 429, 120_000), { startedAt: t });
    expect(b.pauseLeftMs()).toBe(30_000); // at most one cool-down
    t += 30_000;
    b.tryAcquire();
    set.failed(b, new ProviderError("status", "unavailable", 503, 2000), { startedAt: t });
    expect({ state: b.state, back: b.backInMs(), paused: b.pauseLeftMs() }).toEqual({ state: "open", back: 30_000, paused: 0 });
  });
});

describe("timeouts and the breakers of a router", () => {
  const timeout = new ProviderError("timeout", "upstream timed out");
  function breakers(threshold = 2) {
    let t = 0;
    const set = new Breakers({ failureThreshold: threshold, cooldownMs: 1000, longOutputTokens: 4096, now: () => t });
    return { set, advance: (ms: number) => (t += ms) };
  }

  test("a timeout counts only when nothing succeeded since the call began", () => {
    const { breaker, advance } = setup(1);
    const startedAt = 5;
    advance(10);
    breaker.success();
    breaker.timedOut(startedAt);
    expect(breaker.state).toBe("closed");
    advance(10);
    breaker.timedOut(15);
    expect(breaker.state).toBe("open");
  });

  test("one breaker per provider and model", () => {
    const { set } = breakers(1);
    set.failed(set.get("p", "slow"), new ProviderError("status", "upstream answered 503", 503), { startedAt: 0 });
    expect(set.get("p", "slow").state).toBe("open");
    expect(set.get("p", "fast").state).toBe("closed");
    expect(set.get("q", "slow").state).toBe("closed");
  });

  test("a timeout of a call that asked for more than long_output_tokens is the caller's", () => {
    const { set } = breakers(1);
    set.failed(set.get("p", "m"), timeout, { startedAt: 0, outputTokens: 100_000 });
    expect(set.get("p", "m").state).toBe("closed");
    set.failed(set.get("p", "m"), timeout, { startedAt: 0, outputTokens: 4096 });
    expect(set.get("p", "m").state).toBe("open");
  });

  test("errors that say nothing about the provider never count", () => {
    const { set } = breakers(1);
    for (const err of [
      new ProviderError("invalid_output", "bad answer"),
      new ProviderError("context_length", "too long", 400),
      new ProviderError("status", "upstream answered 404", 404),
    ])
      set.failed(set.get("p", "m"), err, { startedAt: 0 });
    expect(set.get("p", "m").consecutiveFailures).toBe(0);
  });

  test("clients naming endless models cannot grow the set past its bound, and unhealthy models are kept", () => {
    const { set } = breakers(1);
    set.failed(set.get("p", "broken"), new ProviderError("connection", "refused"), { startedAt: 0 });
    for (let i = 0; i < 1000; i++) set.get("p", `model-${i}`);
    expect(set.of("p").size).toBe(256);
    expect(set.of("p").get("broken")?.state).toBe("open");
  });

  test("askedOutputTokens reads max_tokens and its newer names", () => {
    expect(askedOutputTokens({})).toBeUndefined();
    expect(askedOutputTokens({ max_tokens: 10 })).toBe(10);
    expect(askedOutputTokens({ max_completion_tokens: 20, max_tokens: 10 })).toBe(20);
    expect(askedOutputTokens({ max_output_tokens: 30 })).toBe(30);
  });
});
