import { describe, expect, test } from "bun:test";
import { CircuitBreaker } from "../../src/providers/breaker";

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
});
