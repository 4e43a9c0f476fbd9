import { ADMITTED, type Admission, type DeploymentLimits } from "../providers/groups/state";

/** What this node did with one deployment since it started: for /metrics (counters). */
export interface DeploymentCounts {
  /** calls admitted by acquire */
  calls: number;
  /** acquires refused (a limit full, cooling down, or the shared state unable to count it) */
  refusals: number;
  /** cool-downs started (a 429 from it) */
  coolDowns: number;
}

interface Seen extends DeploymentCounts {
  limits: DeploymentLimits | undefined;
}

/**
 * What both implementations keep per deployment for /metrics and the operator console: the ids
 * seen (config-derived, in first-seen order), the limits each was last acquired with, and this
 * node's counts. One small object per id.
 */
export abstract class DeploymentBook {
  private seen = new Map<string, Seen>();

  abstract admit(id: string, limits: DeploymentLimits, tokens: number): Admission | Promise<Admission>;

  /** `admit`, told as whether it admitted. */
  acquire(id: string, limits: DeploymentLimits, tokens: number): boolean | Promise<boolean> {
    const a = this.admit(id, limits, tokens);
    return a instanceof Promise ? a.then((x) => x === ADMITTED) : a === ADMITTED;
  }

  protected book(id: string): Seen {
    let c = this.seen.get(id);
    if (!c) {
      c = { calls: 0, refusals: 0, coolDowns: 0, limits: undefined };
      this.seen.set(id, c);
    }
    return c;
  }

  /** Counts an acquire's outcome (and the limits it was asked with); returns it. */
  protected counted(id: string, limits: DeploymentLimits, admitted: Admission): Admission {
    const c = this.book(id);
    c.limits = limits;
    if (admitted === ADMITTED) c.calls++;
    else c.refusals++;
    return admitted;
  }

  ids(): string[] {
    return [...this.seen.keys()];
  }

  limitsOf(id: string): DeploymentLimits | undefined {
    return this.seen.get(id)?.limits;
  }

  counts(id: string): DeploymentCounts | undefined {
    return this.seen.get(id);
  }
}
