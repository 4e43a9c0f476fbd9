import { DeploymentBook } from "./counts";
import {
  ADMITTED,
  type Admission,
  type DeploymentCallEnd,
  type DeploymentLimits,
  type DeploymentStateService,
  type DeploymentUsage,
  ewma,
  WINDOW_MS,
} from "./interface";
import { OpenCalls, SlidingWindow } from "./window";

/** One deployment's state on this node. */
export interface LocalDeployment {
  window: SlidingWindow;
  open: OpenCalls;
  inFlight: number;
  coolingUntil: number;
  latencyMs: number | null;
}

export function newLocalDeployment(windowMs: number): LocalDeployment {
  return {
    window: new SlidingWindow(windowMs),
    open: new OpenCalls(),
    inFlight: 0,
    coolingUntil: 0,
    latencyMs: null,
  };
}

/**
 * Admits one call on a node-local deployment (see SlidingWindow): counted and opened, or refused
 * with why and the time until it could take it (the later of the cool-down's end and the window's).
 */
export function admitLocal(d: LocalDeployment, now: number, limits: DeploymentLimits, tokens: number, callId = ""): Admission {
  const slot = d.coolingUntil > now ? -1 : d.window.admit(now, limits, tokens);
  if (slot < 0) {
    const full = d.window.refusal(now, limits, tokens);
    const cooling = d.coolingUntil - now;
    return full && full.inMs >= cooling ? full : { why: "cooling", inMs: Math.max(0, cooling) };
  }
  d.inFlight++;
  d.open.add({ slot, tokens, callId });
  return ADMITTED;
}

/**
 * The state of every deployment in this process (one node): exact sliding windows (window.ts),
 * in-flight counts, cool-downs and an EWMA of time to first byte (alpha LATENCY_ALPHA, 0.2: the last
 * ten answers carry about 90 % of it). Memory: one entry per id (ids come from the config) of fixed
 * size, whatever the traffic.
 */
export class MemoryDeploymentState extends DeploymentBook implements DeploymentStateService {
  private deployments = new Map<string, LocalDeployment>();

  constructor(
    private now: () => number = Date.now,
    private windowMs = WINDOW_MS,
  ) {
    super();
  }

  private get(id: string): LocalDeployment {
    let d = this.deployments.get(id);
    if (!d) {
      d = newLocalDeployment(this.windowMs);
      this.deployments.set(id, d);
      this.book(id);
    }
    return d;
  }

  admit(id: string, limits: DeploymentLimits, tokens: number): Admission {
    const d = this.get(id);
    return this.counted(id, limits, admitLocal(d, this.now(), limits, tokens));
  }

  release(id: string, end: DeploymentCallEnd): void {
    const d = this.deployments.get(id);
    if (!d) return;
    const call = d.open.take(end.tokensEstimated);
    if (!call) return;
    d.inFlight = Math.max(0, d.inFlight - 1);
    if (end.ttfbMs !== undefined) d.latencyMs = ewma(d.latencyMs, end.ttfbMs);
    if (end.tokensUsed !== undefined) d.window.correct(call.slot, end.tokensUsed - call.tokens, this.now());
  }

  coolDown(id: string, ms: number): Promise<void> {
    const d = this.get(id);
    this.book(id).coolDowns++;
    d.coolingUntil = Math.max(d.coolingUntil, this.now() + ms);
    return Promise.resolve();
  }

  usage(ids: readonly string[]): Promise<Map<string, DeploymentUsage>> {
    const now = this.now();
    const out = new Map<string, DeploymentUsage>();
    for (const id of ids) out.set(id, localUsage(this.get(id), now));
    return Promise.resolve(out);
  }

  start(): void {}

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** What a node-local deployment shows now. */
export function localUsage(d: LocalDeployment, now: number): DeploymentUsage {
  return {
    inFlight: d.inFlight,
    rpmUsed: d.window.calls(now),
    tpmUsed: d.window.tokens(now),
    coolingUntil: d.coolingUntil > now ? d.coolingUntil : 0,
    latencyMs: d.latencyMs,
  };
}
