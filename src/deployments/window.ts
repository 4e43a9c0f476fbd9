import type { DeploymentLimits, Refusal } from "./interface";

/** Slots a window's token and call counts are kept in: 60 of windowMs/60 each, plus the one under way. */
export const SLOTS = 61;

/**
 * One deployment's calls and tokens of the last window (60 s), on one node.
 *
 * - rpm is exact: a log of the admission times of the last window, a ring of at most `rpm` entries
 *   (a call is refused when `rpm` of them are younger than the window, and admitted again the
 *   moment the oldest leaves it). Without an rpm limit no log is kept.
 * - tpm (and the call count shown when there is no rpm) is counted per slot of windowMs/60 (a
 *   second), over the 61 slots that touch the window: never less than the window holds, at most
 *   one slot more, so "at most tpm in any 60 s" holds exactly or under (a call admitted at t saw
 *   every token admitted after t - 60 s).
 *
 * Memory is fixed: the ring (rpm entries) and 61 slots, however many calls pass.
 */
export class SlidingWindow {
  private times: Float64Array = new Float64Array(0);
  private head = 0;
  private size = 0;
  private readonly slotIds = new Float64Array(SLOTS).fill(-1);
  private readonly slotTokens = new Float64Array(SLOTS);
  private readonly slotCalls = new Float64Array(SLOTS);
  readonly slotMs: number;

  constructor(readonly windowMs: number) {
    this.slotMs = windowMs / 60;
  }

  /** The slot `now` falls in. */
  slotOf(now: number): number {
    return Math.floor(now / this.slotMs);
  }

  /** Admits one call of `tokens` at `now` if neither limit would be exceeded; returns the slot it was counted in, or -1. */
  admit(now: number, limits: DeploymentLimits, tokens: number): number {
    const rpm = limits.rpm;
    if (rpm !== undefined) {
      this.resize(rpm);
      this.expire(now);
      if (this.size >= rpm) return -1;
    }
    if (limits.tpm !== undefined && this.tokens(now) + tokens > limits.tpm) return -1;
    if (rpm !== undefined && rpm > 0) {
      this.times[(this.head + this.size) % this.times.length] = now;
      this.size++;
    }
    const slot = this.slotOf(now);
    this.add(slot, tokens, 1);
    return slot;
  }

  /**
   * Why `admit` would refuse a call of `tokens` at `now`, and the ms until it would not: the rpm
   * log's entry that keeps it full ageing out of the window, the oldest slots holding the tpm excess
   * leaving it; the later of the two when both are full. Null when it would admit it. (A call of more
   * tokens than the tpm never fits: the time until the window is empty.)
   */
  refusal(now: number, limits: DeploymentLimits, tokens: number): Refusal | null {
    let out: Refusal | null = null;
    const rpm = limits.rpm;
    if (rpm !== undefined) {
      this.resize(rpm);
      this.expire(now);
      if (this.size >= rpm) {
        const keeping = this.times[(this.head + this.size - Math.max(1, rpm)) % Math.max(1, this.times.length)] ?? now;
        out = { why: "rpm", inMs: rpm > 0 ? keeping + this.windowMs - now : this.windowMs };
      }
    }
    const excess = limits.tpm === undefined ? 0 : this.tokens(now) + tokens - limits.tpm;
    if (excess > 0) {
      const inMs = this.freedIn(now, excess);
      if (!out || inMs > out.inMs) out = { why: "tpm", inMs };
    }
    return out;
  }

  /** The ms until the oldest slots of the window holding `excess` tokens have left it (a slot leaves windowMs after its end). */
  private freedIn(now: number, excess: number): number {
    const oldest = this.slotOf(now - this.windowMs);
    const kept: number[] = [];
    for (let i = 0; i < SLOTS; i++) if ((this.slotIds[i] ?? -1) >= oldest) kept.push(i);
    kept.sort((a, b) => (this.slotIds[a] ?? 0) - (this.slotIds[b] ?? 0));
    let freed = 0;
    let last = oldest;
    for (const i of kept) {
      freed += this.slotTokens[i] ?? 0;
      last = this.slotIds[i] ?? last;
      if (freed >= excess) break;
    }
    return Math.max(0, (last + 1) * this.slotMs + this.windowMs - now);
  }

  /**
   * Corrects the tokens of a call counted in `slot` to what it really used: fewer are taken from
   * that slot while it is still in the ring (once it has left, the window no longer holds them);
   * more are added to the current slot (counted later than they were, so for longer: never under).
   */
  correct(slot: number, delta: number, now: number): void {
    if (delta < 0) {
      const i = slot % SLOTS;
      if (this.slotIds[i] === slot) this.slotTokens[i] = Math.max(0, (this.slotTokens[i] ?? 0) + delta);
    } else if (delta > 0) this.add(this.slotOf(now), delta, 0);
  }

  /** Calls admitted in the window: exact with an rpm log, else by slots. */
  calls(now: number): number {
    if (this.times.length > 0) {
      this.expire(now);
      return this.size;
    }
    return this.sum(this.slotCalls, now);
  }

  tokens(now: number): number {
    return this.sum(this.slotTokens, now);
  }

  private add(slot: number, tokens: number, calls: number): void {
    const i = slot % SLOTS;
    if (this.slotIds[i] !== slot) {
      this.slotIds[i] = slot;
      this.slotTokens[i] = 0;
      this.slotCalls[i] = 0;
    }
    this.slotTokens[i] = (this.slotTokens[i] ?? 0) + tokens;
    this.slotCalls[i] = (this.slotCalls[i] ?? 0) + calls;
  }

  private sum(of: Float64Array, now: number): number {
    const oldest = this.slotOf(now - this.windowMs);
    let total = 0;
    for (let i = 0; i < SLOTS; i++) if ((this.slotIds[i] ?? -1) >= oldest) total += of[i] ?? 0;
    return total;
  }

  /** Drops the log's admissions that have left the window (older than now - windowMs). */
  private expire(now: number): void {
    const edge = now - this.windowMs;
    while (this.size > 0 && (this.times[this.head] ?? 0) <= edge) {
      this.head = (this.head + 1) % this.times.length;
      this.size--;
    }
  }

  /** A new rpm (a config reload) keeps the newest admissions that fit. */
  private resize(rpm: number): void {
    if (this.times.length === rpm) return;
    const next = new Float64Array(rpm);
    const keep = Math.min(this.size, rpm);
    for (let k = 0; k < keep; k++) next[k] = this.times[(this.head + this.size - keep + k) % this.times.length] ?? 0;
    this.times = next;
    this.head = 0;
    this.size = keep;
  }
}

/** A call this node admitted and has not released: where its tokens were counted, and as what. */
export interface OpenCall {
  slot: number;
  tokens: number;
  /** the shared state's id of the call (its in-flight lease), "" in memory */
  callId: string;
}

/** Calls a node holds open per deployment, at most this many (a caller that never releases cannot grow it for ever). */
const MAX_OPEN = 100_000;

/**
 * The calls a node has admitted on one deployment and not yet released. `release` names no call,
 * only its estimate: the oldest open call of that estimate is taken. Taking an older one than the
 * real call moves a correction to an older slot, which leaves the window sooner: the window then
 * holds more than it should, never less.
 */
export class OpenCalls {
  private calls: OpenCall[] = [];

  add(call: OpenCall): void {
    if (this.calls.length >= MAX_OPEN) this.calls.shift();
    this.calls.push(call);
  }

  take(tokens: number): OpenCall | undefined {
    const i = this.calls.findIndex((c) => c.tokens === tokens);
    return i < 0 ? undefined : this.calls.splice(i, 1)[0];
  }

  ids(): string[] {
    return this.calls.map((c) => c.callId);
  }

  get size(): number {
    return this.calls.length;
  }
}
