import type { Logger } from "../log";
import { isRedisOutage, type RedisLink } from "../redis/link";
import { DeploymentBook } from "./counts";
import {
  ADMITTED,
  type Admission,
  type DeploymentCallEnd,
  type DeploymentLimits,
  type DeploymentStateService,
  type DeploymentUsage,
  ewma,
  LATENCY_ALPHA,
  WINDOW_MS,
} from "./interface";
import { admitLocal, type LocalDeployment, localUsage, newLocalDeployment } from "./memory";
import { ACQUIRE, type AcquireReply, COOL, PAY, RELEASE, RENEW, type StateReply, USAGE } from "./redis-scripts";
import { OpenCalls } from "./window";

export interface RedisDeploymentOptions {
  /** the window the limits count over (60 s; shorter in tests) */
  windowMs?: number;
  /** how long a call's in-flight entry lives unless its node renews it (every third of it): a dead node's calls lapse within it */
  leaseMs?: number;
  /** how often the node-local view of usage() is refreshed from Redis */
  refreshMs?: number;
  now?: () => number;
  logger?: Logger;
}

/** One deployment as this node knows it. */
interface Known {
  /** the last state read from Redis (by acquire or the refresh), as usage() shows it */
  view: DeploymentUsage;
  /** calls this node admitted in Redis and has not released: their ids renew their leases */
  open: OpenCalls;
  /** this node's own share while Redis is unreachable */
  local: LocalDeployment | null;
  /** when usage() last asked for it: the background refresh reads only what was asked lately */
  askedAt: number;
}

/** A deployment no usage() asked for in this long is no longer refreshed in the background (read again when asked). */
const ASKED_LATELY_MS = 10_000;

/** A call the shared state could not count (an error, or the first window of an outage): refused, when unknown. */
const UNCOUNTED: Admission = { why: "unavailable", inMs: 0 };

const EMPTY: DeploymentUsage = { inFlight: 0, rpmUsed: 0, tpmUsed: 0, coolingUntil: 0, latencyMs: null };

/**
 * The deployment state shared by every node through Redis, exact across nodes: each acquire is one
 * script (ACQUIRE, one round trip) over the deployment's keys in one slot: its rpm log (a sorted set
 * of call ids by admission time, so "at most rpm in any 60 s" holds whatever the nodes' clocks), its
 * tokens per second, its in-flight leases and its cool-down. A call's in-flight entry is a lease
 * (default 15 s) its node renews every third of it while the call runs, so a node that dies leaks
 * nothing: its calls drop out of every in-flight count within the lease.
 *
 * usage() answers from a node-local view, refreshed from Redis in the background every 250 ms and
 * by every acquire's answer: at most `refreshMs` (plus a round trip) stale, and no round trip on the
 * strategies' path. Only deployments usage() asked for in the last 10 s are refreshed (those of
 * least-busy, latency and headroom groups, and /metrics' scrapes): one script each, 4 a second; an
 * id not asked for lately is read at once when it is.
 *
 * Redis unreachable (CONTRACT section 11): the node admits on its own share, exact or under: a
 * deployment with no rpm/tpm is admitted unless a cool-down known here holds; one with limits gets
 * rpm/N and tpm/N per window (N: the nodes alive when Redis was last seen), but nothing in the
 * first window of the outage (the shared window may have been full when it began). When Redis is
 * back, what the node admitted on its own is counted there (as admitted at that instant) before the
 * next acquire. Redis answering with an error (not an outage) refuses the call: nothing is
 * admitted that cannot be counted. Such a refusal says `unavailable` (no time known): the group
 * router moves on, and when no deployment admits, its answer is its own (never a 429 blaming the
 * client). A refusal by the limits says why and when the call would fit, read by ACQUIRE itself.
 */
export class RedisDeploymentState extends DeploymentBook implements DeploymentStateService {
  private known = new Map<string, Known>();
  private readonly windowMs: number;
  private readonly slotMs: number;
  private readonly leaseMs: number;
  private readonly refreshMs: number;
  private readonly now: () => number;
  private outageSince: number | null = null;
  private settling: Promise<void> | null = null;
  private refreshTimer: ReturnType<typeof setInterval> | null = null;
  private renewTimer: ReturnType<typeof setInterval> | null = null;
  private seq = 0;
  /** when Redis last answered a script of this state with an error (not an outage), 0 if never */
  private erroredAt = 0;
  readonly stats = { fallbacks: 0, errors: 0 };

  constructor(
    private link: RedisLink,
    private opts: RedisDeploymentOptions = {},
  ) {
    super();
    this.windowMs = opts.windowMs ?? WINDOW_MS;
    this.slotMs = this.windowMs / 60;
    this.leaseMs = opts.leaseMs ?? 15_000;
    this.refreshMs = opts.refreshMs ?? 250;
    this.now = opts.now ?? Date.now;
  }

  /** The deployment's five keys, in one slot (see redis-scripts.ts). */
  private keys(id: string): string[] {
    const base = this.link.key(`{dep:${id}}`);
    return [`${base}:calls`, `${base}:win`, `${base}:fl`, `${base}:cool`, `${base}:lat`];
  }

  private entry(id: string): Known {
    let k = this.known.get(id);
    if (!k) {
      k = { view: { ...EMPTY }, open: new OpenCalls(), local: null, askedAt: 0 };
      this.known.set(id, k);
      this.book(id);
    }
    return k;
  }

  async admit(id: string, limits: DeploymentLimits, tokens: number): Promise<Admission> {
    return this.counted(id, limits, await this.shared(id, limits, tokens));
  }

  private async shared(id: string, limits: DeploymentLimits, tokens: number): Promise<Admission> {
    const k = this.entry(id);
    this.book(id).limits = limits;
    if (!this.link.up) await this.link.whenStarted();
    if (this.link.up) {
      try {
        if (this.outageSince !== null) await this.settle();
        const callId = `${this.link.nodeId}:${++this.seq}`;
        const args = [String(limits.rpm ?? -1), String(limits.tpm ?? -1), String(tokens), callId];
        const [ok, slot, state, why, inMs] = await this.link.eval<AcquireReply>(ACQUIRE, this.keys(id), [
          ...args,
          String(this.windowMs),
          String(this.slotMs),
          String(this.leaseMs),
        ]);
        k.view = this.read(id, k, state);
        if (ok !== 1) return { why: why === "rpm" || why === "tpm" ? why : "cooling", inMs: Number(inMs) };
        k.open.add({ slot, tokens, callId });
        return ADMITTED;
      } catch (err) {
        // Redis answered with an error: nothing can be counted, so nothing is admitted
        if (!isRedisOutage(err)) {
          this.stats.errors++;
          this.erroredAt = this.now();
          return UNCOUNTED;
        }
      }
    }
    return this.fallback(k, limits, tokens);
  }

  /** This node's own share of a deployment while Redis is unreachable (see the class comment). */
  private fallback(k: Known, limits: DeploymentLimits, tokens: number): Admission {
    this.stats.fallbacks++;
    const now = this.now();
    this.outageSince ??= Math.min(now, this.link.downSince() ?? now);
    k.local ??= newLocalDeployment(this.windowMs);
    const d = k.local;
    // a cool-down some node set before the outage still holds here
    d.coolingUntil = Math.max(d.coolingUntil, k.view.coolingUntil);
    const limited = limits.rpm !== undefined || limits.tpm !== undefined;
    if (limited && now < this.outageSince + this.windowMs) return UNCOUNTED;
    const n = this.link.nodes();
    const share: DeploymentLimits = {
      rpm: limits.rpm === undefined ? undefined : Math.floor(limits.rpm / n),
      tpm: limits.tpm === undefined ? undefined : limits.tpm / n,
    };
    return admitLocal(d, now, share, tokens);
  }

  /** Counts in Redis what this node admitted on its own during the outage, once (concurrent acquires wait for it). */
  private settle(): Promise<void> {
    this.settling ??= (async () => {
      const now = this.now();
      for (const [id, k] of this.known) {
        const d = k.local;
        if (!d) continue;
        const calls = d.window.calls(now);
        const tokens = d.window.tokens(now);
        if (calls > 0 || tokens > 0) {
          const args = [
            String(calls),
            String(tokens),
            String(this.windowMs),
            String(this.slotMs),
            `${this.link.nodeId}:paid:${++this.seq}:`,
          ];
          await this.link.eval(PAY, this.keys(id), args);
        }
        // its open calls stay local (released there); the share itself is done with
        if (d.inFlight === 0) k.local = null;
        else d.window = newLocalDeployment(this.windowMs).window;
      }
      this.outageSince = null;
    })().finally(() => {
      this.settling = null;
    });
    return this.settling;
  }

  /** Redis is unreachable, this node is on its own share, or Redis refused a script in the last second. */
  unreachable(): boolean {
    return !this.link.up || this.outageSince !== null || this.now() - this.erroredAt < 1000;
  }

  release(id: string, end: DeploymentCallEnd): void {
    const k = this.known.get(id);
    if (!k) return;
    if (end.ttfbMs !== undefined) k.view.latencyMs = ewma(k.view.latencyMs, end.ttfbMs);
    const call = k.open.take(end.tokensEstimated);
    if (!call) {
      this.releaseLocal(k, end);
      return;
    }
    k.view.inFlight = Math.max(0, k.view.inFlight - 1);
    const delta = end.tokensUsed === undefined ? 0 : end.tokensUsed - call.tokens;
    const args = [call.callId, String(call.slot), String(delta), end.ttfbMs === undefined ? "" : String(end.ttfbMs)];
    // not awaited: the caller's answer does not wait on it; an unreachable Redis lets the lease lapse
    this.link
      .eval(RELEASE, this.keys(id), [...args, String(this.windowMs), String(this.slotMs), String(LATENCY_ALPHA)])
      .catch((err) => {
        this.opts.logger?.log("warn", "deployment release not recorded", { error_message: (err as Error).message });
      });
  }

  /** A call admitted on the node's own share during an outage ends. */
  private releaseLocal(k: Known, end: DeploymentCallEnd): void {
    const d = k.local;
    const call = d?.open.take(end.tokensEstimated);
    if (!d || !call) return;
    d.inFlight = Math.max(0, d.inFlight - 1);
    if (end.tokensUsed !== undefined) d.window.correct(call.slot, end.tokensUsed - call.tokens, this.now());
  }

  async coolDown(id: string, ms: number): Promise<void> {
    const k = this.entry(id);
    this.book(id).coolDowns++;
    const until = this.now() + ms;
    k.view.coolingUntil = Math.max(k.view.coolingUntil, until);
    if (k.local) k.local.coolingUntil = Math.max(k.local.coolingUntil, until);
    try {
      await this.link.eval(COOL, this.keys(id), [String(Math.ceil(ms))]);
    } catch (err) {
      // this node keeps it; the others cannot be told while Redis is away
      this.opts.logger?.log("warn", "deployment cool-down not shared", { error_message: (err as Error).message });
    }
  }

  async usage(ids: readonly string[]): Promise<Map<string, DeploymentUsage>> {
    const now = this.now();
    // read at once: an id never seen, or not asked for lately (so not kept fresh in the background)
    const stale = ids.filter((id) => now - (this.known.get(id)?.askedAt ?? 0) > ASKED_LATELY_MS);
    for (const id of ids) this.entry(id).askedAt = now;
    if (stale.length > 0) await Promise.all(stale.map((id) => this.refreshOne(id)));
    const out = new Map<string, DeploymentUsage>();
    for (const id of ids) {
      const k = this.entry(id);
      out.set(id, k.local && !this.link.up ? mergeLocal(k, now) : cooled(k.view, now));
    }
    return out;
  }

  /** Reads one deployment's state into the node's view (kept as it was when Redis cannot answer). */
  private async refreshOne(id: string): Promise<void> {
    const k = this.entry(id);
    try {
      const state = await this.link.eval<StateReply>(USAGE, this.keys(id), [String(this.windowMs), String(this.slotMs)]);
      k.view = this.read(id, k, state);
    } catch {
      // down: the last view stays
    }
  }

  /** The state a script answered, as usage() shows it (the rpm log's count when the deployment has an rpm). */
  private read(id: string, k: Known, [logged, calls, tokens, inFlight, coolMs, latency]: StateReply): DeploymentUsage {
    return {
      inFlight: Number(inFlight),
      rpmUsed: Number(this.limitsOf(id)?.rpm === undefined ? calls : logged),
      tpmUsed: Number(tokens),
      coolingUntil: Number(coolMs) > 0 ? this.now() + Number(coolMs) : 0,
      latencyMs: latency === "" || latency === null ? k.view.latencyMs : Number(latency),
    };
  }

  /** Renews the leases of the calls this node still runs, one script per deployment. */
  private async renew(): Promise<void> {
    if (!this.link.up) return;
    for (const [id, k] of this.known) {
      const calls = k.open.ids();
      if (calls.length === 0) continue;
      await this.link.eval(RENEW, this.keys(id), [String(this.leaseMs), ...calls]).catch(() => {});
    }
  }

  start(): void {
    this.refreshTimer ??= setInterval(() => {
      if (!this.link.up) return;
      const now = this.now();
      for (const [id, k] of this.known) if (now - k.askedAt <= ASKED_LATELY_MS) void this.refreshOne(id);
    }, this.refreshMs);
    this.refreshTimer.unref?.();
    this.renewTimer ??= setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref?.();
  }

  close(): Promise<void> {
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.refreshTimer = null;
    this.renewTimer = null;
    return Promise.resolve();
  }
}

/** A view with a cool-down that has ended shown as none. */
function cooled(u: DeploymentUsage, now: number): DeploymentUsage {
  return u.coolingUntil > now ? { ...u } : { ...u, coolingUntil: 0 };
}

/** In an outage: the node's own share, with the last shared view's cool-down and latency. */
function mergeLocal(k: Known, now: number): DeploymentUsage {
  const local = localUsage(k.local as LocalDeployment, now);
  const until = Math.max(local.coolingUntil, k.view.coolingUntil);
  return { ...local, coolingUntil: until > now ? until : 0, latencyMs: local.latencyMs ?? k.view.latencyMs };
}
