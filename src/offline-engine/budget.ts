import { AsyncLocalStorage } from "node:async_hooks";

/**
 * A CPU budget for one call into the offline engine. The engine is linear in its input, but a
 * 100 KB text still costs real time on the one JavaScript thread that answers every request, so
 * `withCpuBudget` runs a call with a limit and the engine's loops call `checkCpuBudget()` at safe
 * points (per sentence, per review, per recognizer pass): past the limit it throws
 * CpuBudgetExceeded and the call ends there. Loops whose single step can be as small as a word or a
 * character (a 100 KB "sentence" without a break, a run of 50,000 emoji) call `tickCpuBudget()`
 * per step instead, which checks every 256th step: a call ends within a few milliseconds of its
 * budget whatever the shape of the text, instead of after the next sentence. Time is the
 * JavaScript thread's CPU time (see threadCpuUs), so a busy machine does not shorten anybody's
 * budget.
 */
export class CpuBudgetExceeded extends Error {
  constructor(
    readonly budgetMs: number,
    /**
     * The longest stretch of thread CPU time between two readings of the call's budget, in ms. The
     * engine's safe points are dense (a reading at most every millisecond of its work), so a
     * stretch of FOREIGN_STRETCH_MS or more is most likely not the call's own work: a collection of
     * the heap, or other requests served while the call waited. See attemptLocal (providers/local.ts).
     */
    readonly longestStretchMs = 0,
  ) {
    super(`offline work exceeded its CPU budget of ${budgetText(budgetMs)}`);
    this.name = "CpuBudgetExceeded";
  }

  /** Whether the overrun includes a stretch of CPU time that does not look like the call's own work. */
  get foreignLooking(): boolean {
    return this.longestStretchMs >= FOREIGN_STRETCH_MS;
  }
}

/**
 * A budget as every message says it: "50 ms", a fraction to one decimal ("0.5 ms"), never a
 * float's digits ("49.84115900002699 ms" was a remaining budget printed as it came).
 */
export function budgetText(ms: number): string {
  return `${Number.isInteger(ms) ? ms : Math.round(ms * 10) / 10} ms`;
}

/**
 * A stretch of thread CPU time between two readings of a budget at least this long is not taken
 * for the call's own work: a safe point comes at least every millisecond or two of the engine's
 * work, and its longest steps without one (a regular expression over a long text) take a few.
 */
export const FOREIGN_STRETCH_MS = 15;

interface Budget {
  /** thread CPU microseconds at which the budget runs out (once `based`) */
  untilUs: number;
  /** wall clock (performance.now) at the start */
  startAt: number;
  /** the clock has been read for this budget: untilUs and lastReadUs are set */
  based: boolean;
  ms: number;
  /** wall clock (performance.now) before which no CPU reading is needed */
  nextReadAt: number;
  /** safe points passed so far (for tests: how often a call looks at its budget) */
  safePoints: number;
  /** thread CPU microseconds at the last reading (or the start) */
  lastReadUs: number;
  /** the longest stretch between two readings, in microseconds */
  longestUs: number;
}

const current = new AsyncLocalStorage<Budget>();

/**
 * The calling thread's CPU time in microseconds. On Linux, process.threadCpuUsage (getrusage)
 * advances in scheduler ticks, 4 ms at the usual HZ=250: a call could run a tick past its budget
 * unseen, or be stopped a tick early. clock_gettime(CLOCK_THREAD_CPUTIME_ID) is exact to the
 * nanosecond (about 2 µs a call, read at most once per millisecond), so it is used where glibc can
 * be reached; elsewhere threadCpuUsage serves.
 */
function threadCpuClock(): () => number {
  const fallback = () => {
    const u = process.threadCpuUsage();
    return u.user + u.system;
  };
  if (process.platform !== "linux") return fallback;
  try {
    const { dlopen, FFIType, ptr } = require("bun:ffi") as typeof import("bun:ffi");
    const libc = dlopen("libc.so.6", { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
    const CLOCK_THREAD_CPUTIME_ID = 3;
    const ts = new BigInt64Array(2);
    const at = ptr(ts);
    const read = () => {
      if (libc.symbols.clock_gettime(CLOCK_THREAD_CPUTIME_ID, at) !== 0) return fallback();
      return Number(ts[0]) * 1e6 + Number(ts[1]) / 1e3;
    };
    read();
    return read;
  } catch {
    return fallback;
  }
}

// Bound on the first budgeted call, not at module load (start-up): a gateway that never runs the
// offline engine has no use for the dlopen and the compiled binding.
let cpuClock: (() => number) | null = null;
function threadCpuUs(): number {
  if (!cpuClock) cpuClock = threadCpuClock();
  return cpuClock();
}

/**
 * Runs `fn` (and whatever it awaits) under a budget of `ms` milliseconds of CPU time. Every function
 * request and cache hit starts one, and most end within a millisecond: the clock is not read at the
 * start. The first reading (a safe point a millisecond in, or anything that needs it) takes the
 * wall time since the start for CPU time spent so far: never less than the truth, so a budget ends
 * early by at most the time the thread was descheduled in that first millisecond, never late.
 * After that it reads at most once a millisecond, which also tells a stretch that is not the call's
 * own work (see CpuBudgetExceeded). An asynchronous `fn` is read as its synchronous start returns,
 * so its awaits are never taken for its work.
 */
export function withCpuBudget<T>(ms: number, fn: () => T): T {
  const now = performance.now();
  const b: Budget = {
    untilUs: 0,
    startAt: now,
    based: false,
    ms,
    nextReadAt: now + 1,
    safePoints: 0,
    lastReadUs: 0,
    longestUs: 0,
  };
  const out = current.run(b, fn);
  if (!b.based && typeof (out as { then?: unknown } | null)?.then === "function") readFor(b);
  return out;
}

/** Reads the thread's CPU time for budget `b`, noting the stretch since its last reading. */
function readFor(b: Budget): number {
  const us = threadCpuUs();
  if (!b.based) {
    // the wall time since the start counts as spent: at least what the thread spent
    const start = us - Math.max(0, performance.now() - b.startAt) * 1000;
    b.untilUs = start + b.ms * 1000;
    b.lastReadUs = start;
    b.based = true;
  }
  const stretch = us - b.lastReadUs;
  if (stretch > b.longestUs) b.longestUs = stretch;
  b.lastReadUs = us;
  return us;
}

const exceeded = (b: Budget) => new CpuBudgetExceeded(b.ms, b.longestUs / 1000);

/**
 * Throws CpuBudgetExceeded when the running call is past its budget, or would be after another
 * `reserveMs` (a step that cannot be interrupted once started, whose cost the caller estimated);
 * free outside a budget.
 */
export function checkCpuBudget(reserveMs = 0): void {
  const b = current.getStore();
  if (b === undefined) return;
  b.safePoints++;
  if (reserveMs > 0) {
    if (readFor(b) + reserveMs * 1000 > b.untilUs) throw exceeded(b);
    return;
  }
  const now = performance.now();
  if (now < b.nextReadAt) return;
  // reading the thread's CPU time is a system call: at most once per millisecond
  b.nextReadAt = now + 1;
  if (readFor(b) > b.untilUs) throw exceeded(b);
}

let ticks = 0;

/**
 * A safe point for a loop over words or characters: one step costs too little for a full check
 * (about 70 ns: the call's store and the wall clock), so every 256th step does one. The counter is
 * shared by all calls, which only shifts where in the next 256 steps a call looks.
 */
export function tickCpuBudget(): void {
  if ((++ticks & 255) === 0) checkCpuBudget();
}

/** Safe points the running call has passed (undefined outside a budget). */
export function safePointsPassed(): number | undefined {
  return current.getStore()?.safePoints;
}

/**
 * Runs `fn` without charging its CPU time to the running call's budget: a one-time cost such as
 * loading an engine part on first use is the gateway's, not the request's.
 */
export function outsideCpuBudget<T>(fn: () => T): T {
  const b = current.getStore();
  if (b === undefined) return fn();
  const before = readFor(b);
  try {
    return fn();
  } finally {
    forgiveSince(b, before);
  }
}

/** Takes the thread's CPU time since `before` off budget `b`: it is neither charged nor a stretch. */
function forgiveSince(b: Budget, before: number): void {
  const after = threadCpuUs();
  b.untilUs += after - before;
  b.lastReadUs = after;
}

/**
 * Waits for `io` (a database, an embedding provider, a worker thread) without charging the
 * running call's budget for the CPU time this thread spends meanwhile: other requests served, a
 * collection of the heap. An asynchronous offline implementation awaits its input and output
 * through this, or its budget would count whatever the thread did while it waited, and a busy
 * gateway would refuse a short query as too long (413). Only the wait is taken off: what the
 * implementation computes before it starts waiting, and after, is charged.
 */
export async function awaitOutsideCpuBudget<T>(io: T | PromiseLike<T>): Promise<T> {
  const b = current.getStore();
  if (b === undefined) return io;
  const before = readFor(b);
  try {
    return await io;
  } finally {
    forgiveSince(b, before);
  }
}

/**
 * Runs `fn` with no budget at all, and so whatever it starts and awaits later (a background load
 * begun during a call must not be charged to it, nor stopped by it).
 */
export function detachedFromCpuBudget<T>(fn: () => T): T {
  return current.exit(fn);
}

/** The running call's whole CPU budget in milliseconds, as it was given (undefined outside a budget). */
export function callBudgetMs(): number | undefined {
  return current.getStore()?.ms;
}

/** The CPU milliseconds the running call has left (undefined outside a budget). */
export function currentBudgetMs(): number | undefined {
  const b = current.getStore();
  return b === undefined ? undefined : Math.max(0, (b.untilUs - readFor(b)) / 1000);
}

/** CPU milliseconds spent by this thread so far, for measurements. */
export function threadCpuMs(): number {
  return threadCpuUs() / 1000;
}
