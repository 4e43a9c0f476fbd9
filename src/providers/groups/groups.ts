/**
 * Model groups (CONTRACT section 16, docs/routing.md): a public model name over deployments. This
 * module turns a group (and its fallback groups) into the targets of the one fallback loop
 * (providers/fallback.ts), filtered by the caller's tags, orders them by each group's strategy and
 * the deployments' state (state.ts), skips those whose context window is too small, and gates
 * every attempt on a deployment: acquired before it, released after it, cooled down by a 429.
 */
import type { DeploymentConfig, ModelGroupConfig, PricingConfig, TokenPrice } from "../../config";
import { type GatewayError, invalidRequest } from "../../errors";
import { globMatch } from "../../offline-engine/phrase-scan";
import { rateLimitPauseMs } from "../breaker";
import { GateRefusal, type Step } from "../fallback";
import type { Target } from "../route-plan";
import type { Provider } from "../types";
import { ProviderError } from "../types";
import { ADMITTED, type Admission, type DeploymentState, type DeploymentUsage, type Refusal } from "./state";

/** What a request brings to the choice: its upper-bound token estimate (the hold's), input and output. */
export interface GroupNeed {
  input: number;
  output: number;
}

/** The caller's tags (a key's over its account's), e.g. `{ region: "eu" }`. */
export type Tags = Readonly<Record<string, string>>;

export class ModelGroups {
  private readonly byName = new Map<string, ModelGroupConfig>();
  /** each group's deployments and its fallbacks' in trial order of groups, untagged (made once) */
  private readonly chains = new Map<string, DeploymentConfig[]>();
  /**
   * This node's calls per deployment of a group whose strategy reads the state (least-busy,
   * latency, headroom; no other reads them), counted synchronously: `chosen` from the moment a call ranks
   * it first (so the next call, ranked before this one's acquire has answered, sees it) until it
   * is released; `admitted` once the state's acquire has counted it. least-busy reads the state's
   * in-flight count (every node's) with this node's own part replaced by `chosen`: exact on one node.
   */
  private readonly chosen = new Map<string, number>();
  private readonly admitted = new Map<string, number>();
  /** targets ranked first whose attempt has not started yet (counted in `chosen`) */
  private readonly reserved = new WeakSet<Target>();
  /** the groups whose strategy reads the deployments' state (USAGE_STRATEGIES) */
  private readonly readsUsage = new Set<string>();
  /** each group's targets for a caller without tags (made on first use; never changed after) */
  private readonly untagged = new Map<string, readonly Target[]>();
  /** per shared targets list: every order its stateless strategies can give and their chances (fixedOrders), or null */
  private readonly fixed = new WeakMap<readonly Target[], FixedOrders | null>();
  /** the lists `targets` made once (the only ones whose orders are worth making once) */
  private readonly shared = new WeakSet<readonly Target[]>();

  constructor(
    groups: readonly ModelGroupConfig[],
    private readonly providers: Map<string, Provider>,
    private readonly state: DeploymentState,
    private readonly pricing: PricingConfig,
    /** the longest a 429 cools a deployment down (the breakers' cool-down: a pause is bounded alike) */
    private readonly maxCoolDownMs = Number.POSITIVE_INFINITY,
  ) {
    for (const g of groups) this.byName.set(g.name, g);
    for (const g of groups) this.chains.set(g.name, this.chainOf(g.name));
    for (const g of groups) if (USAGE_STRATEGIES.has(g.strategy)) this.readsUsage.add(g.name);
  }

  get size(): number {
    return this.byName.size;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  group(name: string): ModelGroupConfig | undefined {
    return this.byName.get(name);
  }

  /** The providers of the group's deployments and its fallbacks', in trial order of groups, each once. */
  providersOf(name: string): string[] {
    return [...new Set((this.chains.get(name) ?? []).map((d) => d.provider))];
  }

  /** The group's deployments, then each fallback group's (breadth first, each group once). */
  private chainOf(name: string): DeploymentConfig[] {
    const order: string[] = [name];
    for (let i = 0; i < order.length; i++)
      for (const f of this.byName.get(order[i] as string)?.fallbacks ?? []) if (!order.includes(f)) order.push(f);
    return order.flatMap((g) => byPriority(this.byName.get(g)?.deployments ?? []));
  }

  /**
   * The targets of a call naming group `name`, in config order (the strategy orders them at the
   * call, `order`): its deployments and its fallbacks', minus those a tag of the caller excludes.
   * A tag some deployment carries restricts the call to deployments with the same value; none
   * left: 400 invalid_request naming the tag, nothing sent.
   */
  targets(name: string, tags: Tags | undefined): readonly Target[] {
    const chain = this.chains.get(name) ?? [];
    if (tags) return this.targetsOf(restrict(chain, tags, name), name);
    let out = this.untagged.get(name);
    if (!out) {
      out = this.targetsOf(chain, name);
      this.untagged.set(name, out);
      this.shared.add(out);
    }
    return out;
  }

  /** `named`: the group the call named (its fallback groups' deployments carry it as `via`). */
  private targetsOf(deployments: readonly DeploymentConfig[], named: string): Target[] {
    const out: Target[] = [];
    for (const d of deployments) {
      const provider = this.providers.get(d.provider);
      if (!provider) continue;
      const t: Target = { name: d.provider, provider, model: d.model, deployment: d };
      if (d.group !== named) t.via = named;
      out.push(t);
    }
    return out;
  }

  /**
   * The targets ordered for this call: each run of one group's deployments by that group's
   * strategy (the state's usage read once), minus the deployments whose context window is below
   * `need`'s tokens; targets that are no deployment keep their place.
   */
  order(targets: readonly Target[], need: GroupNeed): readonly Target[] | Promise<readonly Target[]> {
    const tokens = need.input + need.output;
    let fits = targets;
    if (targets.some((t) => !takes(t, tokens))) {
      fits = targets.filter((t) => takes(t, tokens));
      if (fits.length === 0) throw tooLarge(targets, tokens);
    }
    // weighted and ordered groups: one of the orders made once, drawn with its chance
    if (fits === targets) {
      const orders = this.fixedOf(targets);
      if (orders) return draw(orders);
    }
    // the state is asked only when a strategy reads it (least-busy, latency, headroom); else the
    // order is made at once, without a promise
    if (!fits.some((t) => t.deployment !== undefined && this.readsUsage.has(t.deployment.group)))
      return this.ordered(fits, EMPTY, need);
    const ids = fits.flatMap((t) => (t.deployment ? [t.deployment.id] : []));
    const mine = new Map(ids.map((id) => [id, this.admitted.get(id) ?? 0]));
    // the state's view with this node's part as it is now (calls chosen since it was read included)
    return this.state.usage(ids).then((seen) => this.ordered(fits, this.withOwn(seen, mine), need));
  }

  /**
   * `fits` in each group's strategy's order, given the deployments' `usage`. When the first is a
   * deployment of a group whose strategy reads the state, it is reserved (counted in `chosen` until
   * its attempt starts or the call settles): a copy of its target, so that the reservation is this
   * call's (targets are shared between calls).
   */
  private ordered(fits: readonly Target[], usage: Map<string, DeploymentUsage>, need: GroupNeed): Target[] {
    const out: Target[] = [];
    let i = 0;
    while (i < fits.length) {
      const t = fits[i] as Target;
      const group = t.deployment?.group;
      if (group === undefined) {
        out.push(t);
        i++;
        continue;
      }
      let j = i + 1;
      while (j < fits.length && fits[j]?.deployment?.group === group) j++;
      this.byStrategy(group, fits, i, j, usage, need, out);
      i = j;
    }
    const first = out[0];
    if (first?.deployment && this.readsUsage.has(first.deployment.group)) {
      const mine = { ...first };
      out[0] = mine;
      bump(this.chosen, first.deployment.id, 1);
      this.reserved.add(mine);
    }
    return out;
  }

  /** The orders of a shared targets list whose strategies read neither the state nor the call (fixedOrders), made on first use. */
  private fixedOf(targets: readonly Target[]): FixedOrders | null {
    let f = this.fixed.get(targets);
    if (f === undefined) {
      // only for the lists made once (targets()): another list is made per call, and so would its orders
      if (!this.shared.has(targets)) return null;
      f = fixedOrders(targets, (group) => this.byName.get(group)?.strategy ?? "ordered");
      this.fixed.set(targets, f);
    }
    return f;
  }

  /** `seen` with each deployment's in-flight count: other nodes' (as read) plus this node's chosen now. */
  private withOwn(seen: Map<string, DeploymentUsage>, mine: Map<string, number>): Map<string, DeploymentUsage> {
    const out = new Map<string, DeploymentUsage>();
    for (const [id, u] of seen) {
      const others = Math.max(0, u.inFlight - (mine.get(id) ?? 0));
      out.set(id, { ...u, inFlight: others + (this.chosen.get(id) ?? 0) });
    }
    return out;
  }

  /** Whether `settle` has anything to let go of for these ordered targets (their first is reserved). */
  holds(targets: readonly Target[]): boolean {
    const first = targets[0];
    return first !== undefined && this.reserved.has(first);
  }

  /** The call is over: a target ranked first that was never tried (its breaker open, the call ended) is let go. */
  settle(targets: readonly Target[]): void {
    const first = targets[0];
    if (first?.deployment && this.reserved.delete(first)) bump(this.chosen, first.deployment.id, -1);
  }

  /** One group's deployments, `run[from..to)` (one priority after the other, lowest first), in its strategy's order, onto `out`. */
  private byStrategy(
    group: string,
    run: readonly Target[],
    from: number,
    to: number,
    usage: Map<string, DeploymentUsage>,
    need: GroupNeed,
    out: Target[],
  ): void {
    const key = rankKey(this.byName.get(group)?.strategy ?? "ordered", usage, need, this.pricing);
    for (let i = from; i < to; ) {
      const priority = run[i]?.deployment?.priority;
      let j = i + 1;
      while (j < to && run[j]?.deployment?.priority === priority) j++;
      if (key === null || j - i < 2) for (let k = i; k < j; k++) out.push(run[k] as Target);
      else sortOnto(out, run, i, j, key);
      i = j;
    }
  }

  /**
   * An attempt on a deployment, gated by its state: refused by `admit` (at its rpm/tpm, or
   * cooling down), the attempt ends in a GateRefusal saying why and when the deployment could take
   * the call (recorded as an attempt, no failure: the loop goes on to the next); else the
   * call runs and is released with its time to first byte, when it answers or fails, or, for an
   * answer that lasts (a stream: `lasting` wraps it), when that ends. A 429 cools the deployment
   * down on every node for as long as its breaker pauses it on this one (rateLimitPauseMs: its
   * Retry-After, default 10 s, at most one cool-down) before the loop moves on.
   */
  gate<T>(step: Step, tokens: number, go: () => Promise<T | null>, how: GateHow<T> = NO_HOW as GateHow<T>): Promise<T | null> {
    const d = step.target.deployment as DeploymentConfig;
    // this node's own counts (chosen, admitted) are read only by a strategy that reads the state
    const own = this.readsUsage.has(d.group);
    if (own && !this.reserved.delete(step.target)) bump(this.chosen, d.id, 1);
    let asked: Admission | Promise<Admission>;
    try {
      asked = this.state.admit(d.id, d, tokens);
    } catch (err) {
      if (own) bump(this.chosen, d.id, -1);
      return Promise.reject(err);
    }
    // a state that decides at once (in memory) admits without a promise of its own
    if (!(asked instanceof Promise)) return asked === ADMITTED ? this.run(d, own, tokens, go, how) : this.refused(d, own, asked);
    return asked.then(
      (admitted) => (admitted === ADMITTED ? this.run(d, own, tokens, go, how) : this.refused(d, own, admitted)),
      (err: unknown) => {
        if (own) bump(this.chosen, d.id, -1);
        throw err;
      },
    );
  }

  private refused(d: DeploymentConfig, own: boolean, r: Refusal): Promise<null> {
    if (own) bump(this.chosen, d.id, -1);
    return Promise.reject(new GateRefusal(REFUSAL_CODES[r.why], r.inMs));
  }

  /** An admitted attempt: run, then released once (see gate). */
  private run<T>(
    d: DeploymentConfig,
    own: boolean,
    tokens: number,
    go: () => Promise<T | null>,
    how: GateHow<T>,
  ): Promise<T | null> {
    if (own) bump(this.admitted, d.id, 1);
    let ended = false;
    const end = (ttfbMs?: number, tokensUsed?: number) => {
      if (ended) return;
      ended = true;
      if (own) {
        bump(this.chosen, d.id, -1);
        bump(this.admitted, d.id, -1);
      }
      this.state.release(d.id, { ttfbMs, tokensEstimated: tokens, tokensUsed });
    };
    const started = performance.now();
    let sent: Promise<T | null>;
    try {
      sent = go();
    } catch (err) {
      sent = Promise.reject(err);
    }
    return sent.then(
      (value) => {
        const ttfbMs = performance.now() - started;
        if (value !== null && how.lasting) return how.lasting(value, () => end(ttfbMs));
        // the tokens it really used correct the deployment's tpm window (the estimate was an upper bound)
        end(ttfbMs, value !== null && how.used ? how.used(value) : undefined);
        return value;
      },
      async (err: unknown) => {
        end();
        const pause = err instanceof ProviderError ? rateLimitPauseMs(err) : undefined;
        if (pause !== undefined) await this.state.coolDown(d.id, Math.min(pause, this.maxCoolDownMs)).catch(() => undefined);
        throw err;
      },
    );
  }
}

/** What the gate knows of an attempt's answer. */
export interface GateHow<T> {
  /** wraps an answer that outlives its attempt (a stream) so that `end` runs once when it is over */
  lasting?: (value: T, end: () => void) => T;
  /** the tokens an answer reports it used (input and output), when it does */
  used?: (value: T) => number | undefined;
}

const EMPTY = new Map<string, DeploymentUsage>();

/**
 * Every order a targets list can be tried in when each of its groups' strategies is `weighted` or
 * `ordered` (neither reads the deployments' state nor the call), with the chance of each: the
 * orders are shared (never changed) and a call draws one (`draw`), so ordering costs one random
 * number and no allocation. A `weighted` run of one priority is ordered as the sort by
 * Efraimidis-Spirakis keys does (rankKey): drawn one after the other in proportion to the weights
 * left, so an order's chance is the product of w(next) / (the weights not yet drawn). Null when a
 * strategy reads the state or the call, or past MAX_FIXED_ORDERS orders.
 */
interface FixedOrders {
  orders: Target[][];
  /** the chances summed in order: order k is drawn for a random r in [upTo[k-1], upTo[k]) */
  upTo: number[];
}

const MAX_FIXED_ORDERS = 120;

function fixedOrders(
  targets: readonly Target[],
  strategyOf: (group: string) => ModelGroupConfig["strategy"],
): FixedOrders | null {
  // the runs ordered apart: one group's deployments of one priority (byStrategy), or a target that is none
  let combos: { order: Target[]; p: number }[] = [{ order: [], p: 1 }];
  for (let i = 0; i < targets.length; ) {
    const d = targets[i]?.deployment;
    let j = i + 1;
    while (
      d &&
      j < targets.length &&
      targets[j]?.deployment?.group === d.group &&
      targets[j]?.deployment?.priority === d.priority
    )
      j++;
    const run = targets.slice(i, j);
    const strategy = d ? strategyOf(d.group) : "ordered";
    if (strategy !== "weighted" && strategy !== "ordered" && run.length > 1) return null;
    if (strategy === "weighted" && run.length > 5) return null; // 720 orders and more: sorted per call instead
    const ways = strategy === "weighted" && run.length > 1 ? weightedOrders(run) : [{ order: run, p: 1 }];
    if (combos.length * ways.length > MAX_FIXED_ORDERS) return null;
    combos = combos.flatMap((c) => ways.map((w) => ({ order: [...c.order, ...w.order], p: c.p * w.p })));
    i = j;
  }
  let sum = 0;
  return { orders: combos.map((c) => c.order), upTo: combos.map((c) => (sum += c.p)) };
}

/** Every order of `run` (deployments of one weighted group and priority) with its chance. */
function weightedOrders(run: Target[]): { order: Target[]; p: number }[] {
  const weight = (t: Target) => t.deployment?.weight ?? 1;
  if (run.length === 1) return [{ order: run, p: 1 }];
  const total = run.reduce((s, t) => s + weight(t), 0);
  return run.flatMap((first, k) =>
    weightedOrders([...run.slice(0, k), ...run.slice(k + 1)]).map((rest) => ({
      order: [first, ...rest.order],
      p: (weight(first) / total) * rest.p,
    })),
  );
}

/** One of the fixed orders, drawn with its chance (the last one for the rounding's remainder). */
function draw(f: FixedOrders): Target[] {
  const r = Math.random() * (f.upTo[f.upTo.length - 1] as number);
  for (let k = 0; k < f.upTo.length; k++) if (r < (f.upTo[k] as number)) return f.orders[k] as Target[];
  return f.orders[f.orders.length - 1] as Target[];
}
const NO_HOW: GateHow<unknown> = {};

/** A refusal at the gate as its attempt is recorded (meta.attempts, the 429's and 502's messages). */
const REFUSAL_CODES: Record<Refusal["why"], string> = {
  rpm: "rpm_limit",
  tpm: "tpm_limit",
  cooling: "cooling_down",
  unavailable: "state_unavailable",
};

/** The strategies that order by the deployments' state (in flight, latency, the window's use). */
const USAGE_STRATEGIES = new Set<ModelGroupConfig["strategy"]>(["least-busy", "latency", "headroom"]);

function bump(counts: Map<string, number>, id: string, by: number): void {
  const n = (counts.get(id) ?? 0) + by;
  if (n > 0) counts.set(id, n);
  else counts.delete(id);
}

function byPriority(ds: readonly DeploymentConfig[]): DeploymentConfig[] {
  return ds
    .map((d, i) => ({ d, i }))
    .sort((a, b) => a.d.priority - b.d.priority || a.i - b.i)
    .map((x) => x.d);
}

/**
 * The deployments a caller's tags allow: for each tag of the caller that some deployment of the
 * chain carries, only those with the same value. None left: 400 naming the tag.
 */
function restrict(chain: DeploymentConfig[], tags: Tags, group: string): DeploymentConfig[] {
  let out = chain;
  for (const [key, value] of Object.entries(tags)) {
    if (!chain.some((d) => key in d.tags)) continue;
    const kept = out.filter((d) => d.tags[key] === value);
    if (kept.length === 0)
      throw invalidRequest(
        `no deployment of model group "${group}" (or its fallbacks) has the tag ${key}="${value}" this key requires; nothing was sent`,
        "model",
      );
    out = kept;
  }
  return out;
}

/**
 * Whether a target could ever take a call of `tokens` (its upper-bound estimate): within its
 * context window, and within its tpm, since a call above a deployment's tokens per minute never
 * fits its window however long it waits (it would be refused at the gate, 429, again and again).
 */
function takes(t: Target, tokens: number): boolean {
  const d = t.deployment;
  return (
    d === undefined ||
    ((d.maxContextTokens ?? Number.POSITIVE_INFINITY) >= tokens && (d.tpm ?? Number.POSITIVE_INFINITY) >= tokens)
  );
}

/**
 * Every deployment's context window or tpm is below the call's upper-bound estimate: 400 naming
 * the largest of each (a retry cannot help), nothing sent.
 */
function tooLarge(targets: readonly Target[], tokens: number): GatewayError {
  const group = targets[0]?.deployment?.group ?? "";
  const limits = (of: (d: DeploymentConfig) => number | undefined) =>
    targets.map((t) => (t.deployment ? of(t.deployment) : undefined)).filter((n): n is number => n !== undefined);
  const windows = limits((d) => d.maxContextTokens);
  const tpms = limits((d) => d.tpm);
  const named: string[] = [];
  // a limit is named when some deployment's is what turned the call away
  if (windows.some((n) => n < tokens)) named.push(`the context window (the largest: ${Math.max(...windows)})`);
  if (tpms.some((n) => n < tokens)) named.push(`the tokens per minute, tpm (the largest: ${Math.max(...tpms)})`);
  return invalidRequest(
    `this request may take up to ${tokens} tokens (its upper-bound estimate, output included), above ${named.join(" or ")} of every deployment of model group "${group}"; nothing was sent`,
    "messages",
  );
}

/** The key a strategy orders one priority's deployments by, ascending (null: config order). */
function rankKey(
  strategy: ModelGroupConfig["strategy"],
  usage: Map<string, DeploymentUsage>,
  need: GroupNeed,
  pricing: PricingConfig,
): ((t: Target) => number) | null {
  const dep = (t: Target) => t.deployment as DeploymentConfig;
  const use = (t: Target) => usage.get(dep(t).id);
  switch (strategy) {
    case "weighted":
      // weighted order without replacement (Efraimidis-Spirakis): the first is chosen in proportion to its weight
      return (t) => -(Math.random() ** (1 / dep(t).weight));
    case "least-busy":
      // fewest in flight; ties broken at random so equal deployments share the load
      return (t) => (use(t)?.inFlight ?? 0) + Math.random() * 0.5;
    case "latency":
      // untried first (each gets measured), then the lowest moving average of time to first byte
      return (t) => use(t)?.latencyMs ?? Number.NEGATIVE_INFINITY;
    case "headroom":
      return (t) => -headroom(dep(t), use(t), need.input + need.output);
    case "cost":
      return (t) => costOf(pricing, dep(t), need);
    default:
      return null;
  }
}

/**
 * `run[from..to)` appended to `out` by an ascending key computed once per target, stably (an
 * insertion sort in place: a group has a handful of deployments, and this runs on every call).
 */
function sortOnto(out: Target[], run: readonly Target[], from: number, to: number, key: (t: Target) => number): void {
  const base = out.length;
  const keys: number[] = [];
  for (let k = from; k < to; k++) {
    const t = run[k] as Target;
    const v = key(t);
    let j = out.length - 1;
    while (j >= base && (keys[j - base] as number) > v) {
      out[j + 1] = out[j] as Target;
      keys[j + 1 - base] = keys[j - base] as number;
      j--;
    }
    out[j + 1] = t;
    keys[j + 1 - base] = v;
  }
}

/**
 * Calls a deployment can still take in this window: the fewer of its rpm left and its tpm left
 * in calls of `tokens`; a deployment without limits has all the room there is (Infinity).
 */
export function headroom(d: DeploymentConfig, u: DeploymentUsage | undefined, tokens: number): number {
  const rpm = d.rpm !== undefined ? d.rpm - (u?.rpmUsed ?? 0) : Number.POSITIVE_INFINITY;
  const tpm = d.tpm !== undefined ? (d.tpm - (u?.tpmUsed ?? 0)) / Math.max(1, tokens) : Number.POSITIVE_INFINITY;
  return Math.max(0, Math.min(rpm, tpm));
}

/**
 * What a call costs on a deployment by `[pricing]`, as credits/pricing.ts prices it: the first
 * entry matching its model or provider/model, else the default (with refuse_unpriced, an unpriced
 * one is last), at the request's upper-bound input and output tokens.
 */
export function costOf(pricing: PricingConfig, d: DeploymentConfig, need: GroupNeed): number {
  const qualified = d.served;
  const listed = pricing.models.find((m) => globMatch(m.pattern, d.model) || globMatch(m.pattern, qualified))?.price;
  const price: TokenPrice | null = listed ?? (pricing.refuseUnpriced ? null : pricing.default);
  if (!price) return Number.POSITIVE_INFINITY;
  return need.input * price.input + need.output * price.output;
}
