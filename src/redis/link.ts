import { RedisClient } from "bun";
import type { Logger } from "../log";
import { CLIENT_OPTIONS, RedisClusterConnection, RedisUnavailable, timedSend } from "./cluster";

export { RedisUnavailable };

/** The key prefix of every version before `TEXTAI_REDIS_PREFIX` existed, and its default. */
export const DEFAULT_REDIS_PREFIX = "textai";

/**
 * Why a command to Redis (or a connection attempt) failed, as `/metrics` counts it
 * (textai_redis_errors_total): `connection` (not connected, lost, or a connection attempt failed:
 * an outage, where the services fall back), `timeout` (no answer within
 * the command timeout: treated as an outage too), `noscript` (a script not yet loaded on that
 * server: loaded and run again at once, not a failure of the call), or the error reply's first
 * word (`busy`, `oom`, `loading`, `readonly`, `err`, ...): Redis answered but refused, which is
 * no outage, and the services refuse the call honestly (503) instead of falling back.
 */
export type RedisErrorReason = string;

/** The reason of a failed command (see RedisErrorReason). */
export function redisErrorReason(err: unknown): RedisErrorReason {
  if (err instanceof RedisUnavailable) return /did not answer/.test(err.message) ? "timeout" : "connection";
  const msg = String((err as Error)?.message ?? err);
  const word = /^([A-Z]{2,16})\b/.exec(msg)?.[1];
  return word ? word.toLowerCase() : "other";
}

/** True for a failure that means Redis cannot be reached (the services fall back to their outage behaviour). */
export const isRedisOutage = (err: unknown): boolean => err instanceof RedisUnavailable;

type Listener = (message: string, channel: string) => void;

const HEARTBEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 5000)
redis.call('PEXPIRE', KEYS[1], 60000)
return redis.call('ZCARD', KEYS[1])
`;

/**
 * The gateway's connection to Redis: one client for commands, one for subscriptions. Commands fail
 * at once while Redis is down (no offline queue), and after `commandTimeoutMs` if it hangs, so a
 * caller can fall back instead of waiting. Every second a timer reconnects what is down (and
 * subscribes again), and refreshes this node's heartbeat, from which `nodes()` counts the nodes
 * alive: the last count seen is what the fallbacks divide limits by while Redis is down.
 *
 * With `cluster: true` the URL is one or more seed nodes of a Redis Cluster (comma-separated), and
 * every command goes to the master of its key's slot (cluster.ts); `up` is then "every master
 * connected". Keys a script touches together must share a hash tag (see `accountKey`).
 */
export class RedisLink {
  private client: RedisClient | null = null;
  private sub: RedisClient | null = null;
  private listeners = new Map<string, Listener>();
  private connecting: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private wasUp = false;
  private pending = new Set<Promise<unknown>>();
  private nodeCount = 1;
  /** when the command connection was lost (Date.now), null while it is up or before it ever was */
  private lostAt: number | null = null;
  private shas = new Map<string, string>();
  /** failed commands by reason (see RedisErrorReason), for /metrics */
  readonly errors = new Map<RedisErrorReason, number>();
  readonly nodeId = `${process.pid}-${crypto.randomUUID().slice(0, 8)}`;
  /** set in cluster mode: the slot map and a connection per master */
  readonly cluster: RedisClusterConnection | null;
  private warnedMoved = false;
  /**
   * The first connection attempt, while it is under way (start() makes it; a Redis Cluster's takes
   * a slot map and a connection per master). Until it ends Redis is not down but not reached yet:
   * a call's first Redis work waits for it (see `whenStarted`) rather than falling back as if in
   * an outage, which would refuse a rate-limited call with 429 in a node's first moments.
   */
  private starting: Promise<void> | null = null;
  /**
   * The first part of every key and channel name this node uses (`TEXTAI_REDIS_PREFIX`, default
   * `textai`): gateways (or test runs) with different prefixes share one Redis db without touching
   * each other's data.
   */
  readonly prefix: string;

  constructor(
    private url: string,
    private logger?: Logger,
    private opts: { commandTimeoutMs?: number; cluster?: boolean; prefix?: string } = {},
  ) {
    this.prefix = opts.prefix ?? DEFAULT_REDIS_PREFIX;
    this.cluster = opts.cluster
      ? new RedisClusterConnection(url, opts.commandTimeoutMs ?? 1000, () => void this.ensure(), logger)
      : null;
  }

  /**
   * The key of an account's data of one kind. On one Redis it is `<prefix>:<kind>:<account>[:<rest>]`,
   * the names every version has used (prefix `textai`); on a Redis Cluster
   * `<prefix>:{acct:<account>}:<kind>[:<rest>]`,
   * so that all of an account's keys hash to one slot (one node), and different accounts spread.
   */
  accountKey(accountId: string, kind: string, rest?: string): string {
    const tail = rest === undefined ? "" : `:${rest}`;
    const p = this.prefix;
    return this.cluster ? `${p}:{acct:${accountId}}:${kind}${tail}` : `${p}:${kind}:${accountId}${tail}`;
  }

  /** The name of a key (or channel) of this gateway's that belongs to no account: `<prefix>:<name>`. */
  key(name: string): string {
    return `${this.prefix}:${name}`;
  }

  /** Connects (without waiting) and keeps reconnecting every second while it runs. */
  start(): void {
    // the first heartbeat at once: a node that counted only itself would take the whole limit if
    // Redis went away in its first second
    const first = this.ensure();
    if (!this.timer) {
      this.starting = first;
      void first.finally(() => {
        if (this.starting === first) this.starting = null;
      });
    }
    void first.then(() => this.heartbeat());
    this.timer ??= setInterval(() => void this.ensure().then(() => this.heartbeat()), 1000);
    this.timer.unref?.();
  }

  get up(): boolean {
    return this.cluster ? this.cluster.up : this.client?.connected === true;
  }

  /** When this node lost its connection to Redis (Date.now), or null: up, or never connected. */
  downSince(): number | null {
    return this.up ? null : this.cluster ? this.cluster.lostAt : this.lostAt;
  }

  /** Nodes whose heartbeat Redis saw in the last 5 s (the last count known while Redis is down). */
  nodes(): number {
    return this.nodeCount;
  }

  /** Settles when the first connection attempt has ended (at once after it: null). */
  whenStarted(): Promise<void> | null {
    return this.starting;
  }

  async ready(): Promise<boolean> {
    await this.ensure();
    return this.up;
  }

  private ensure(): Promise<void> {
    if (this.cluster) {
      if (this.cluster.settled) return Promise.resolve();
    } else if (this.client?.connected && this.sub?.connected) return Promise.resolve();
    this.connecting ??= (async () => {
      try {
        if (this.cluster) await this.cluster.connect(this.listeners);
        else if (!this.client?.connected) {
          this.client?.close();
          const c = new RedisClient(this.url, CLIENT_OPTIONS);
          c.onclose = () => {
            if (this.client === c) this.lostAt ??= Date.now();
          };
          await c.connect();
          this.client = c;
          this.lostAt = null;
        }
        if (!this.cluster && !this.sub?.connected) {
          this.sub?.close();
          const s = new RedisClient(this.url, CLIENT_OPTIONS);
          await s.connect();
          for (const [channel, listener] of this.listeners) await s.subscribe(channel, listener);
          this.sub = s;
        }
        if (!this.wasUp) this.logger?.log("info", "redis connected", {});
        this.wasUp = true;
      } catch (err) {
        // a failed connection attempt (one a second while Redis is down) counts as `connection`
        this.count(new RedisUnavailable((err as Error).message));
        if (this.wasUp) this.logger?.log("warn", "redis unavailable: degrading", { error_message: (err as Error).message });
        this.wasUp = false;
      } finally {
        this.connecting = null;
      }
    })();
    return this.connecting;
  }

  private async heartbeat(): Promise<void> {
    if (!this.up) return;
    try {
      // on Redis's clock, so nodes whose clocks disagree still count each other
      const n = await this.eval<number>(HEARTBEAT, [this.key("nodes")], [this.nodeId]);
      this.nodeCount = Math.max(1, Number(n));
    } catch {
      // down: the last count stays
    }
  }

  /**
   * One command; rejects with RedisUnavailable at once while Redis is down (after the first
   * connection attempt), or with Redis's error reply. Each failure is counted by its reason.
   */
  async send<T = unknown>(command: string, args: string[]): Promise<T> {
    try {
      return await this.sendOnce<T>(command, args);
    } catch (err) {
      this.count(err);
      throw err;
    }
  }

  private async sendOnce<T>(command: string, args: string[]): Promise<T> {
    if (this.starting && !this.up) await this.starting;
    if (this.cluster) return this.sendToCluster<T>(this.cluster, command, args);
    const c = this.client;
    if (!c?.connected) {
      void this.ensure();
      throw new RedisUnavailable();
    }
    try {
      return await timedSend<T>(c, command, args, this.opts.commandTimeoutMs ?? 1000);
    } catch (err) {
      if (err instanceof RedisUnavailable) throw err;
      if (!c.connected) throw new RedisUnavailable((err as Error).message);
      if (!this.warnedMoved && String((err as Error).message).startsWith("MOVED ")) {
        this.warnedMoved = true;
        this.logger?.log("error", "redis answered MOVED: it is a Redis Cluster; set TEXTAI_REDIS_CLUSTER=true", {});
      }
      throw err;
    }
  }

  private async sendToCluster<T>(cluster: RedisClusterConnection, command: string, args: string[]): Promise<T> {
    if (!cluster.up) {
      void this.ensure();
      throw new RedisUnavailable();
    }
    try {
      return await cluster.send<T>(command, args);
    } catch (err) {
      if (err instanceof RedisUnavailable) void this.ensure();
      throw err;
    }
  }

  /** A Lua script by its SHA1 (loaded on first use, and again after a Redis restart). */
  async eval<T = unknown>(script: string, keys: string[], args: string[]): Promise<T> {
    let sha = this.shas.get(script);
    if (!sha) {
      sha = new Bun.CryptoHasher("sha1").update(script).digest("hex");
      this.shas.set(script, sha);
    }
    try {
      return await this.send<T>("EVALSHA", [sha, String(keys.length), ...keys, ...args]);
    } catch (err) {
      // a server that has not seen the script (a restart, a new node, a flush of its scripts):
      // counted as `noscript`, loaded by running it whole, and no failure of the call
      if (!String((err as Error).message).includes("NOSCRIPT")) throw err;
      return this.send<T>("EVAL", [script, String(keys.length), ...keys, ...args]);
    }
  }

  /** Counts a failed command by its reason (the reasons are Redis's error words, a handful: past 32 they share `other`). */
  private count(err: unknown): void {
    const reason = redisErrorReason(err);
    const r = this.errors.has(reason) || this.errors.size < 32 ? reason : "other";
    this.errors.set(r, (this.errors.get(r) ?? 0) + 1);
  }

  subscribe(channel: string, listener: Listener): void {
    this.listeners.set(channel, listener);
    if (this.cluster) this.cluster.subscribe(channel, listener);
    else if (this.sub?.connected) void this.sub.subscribe(channel, listener).catch(() => {});
  }

  /** Publishes without making the caller wait; close() waits for what is still on its way. */
  publish(channel: string, message: string): void {
    const p = this.send("PUBLISH", [channel, message]).catch((err) => {
      this.logger?.log("warn", "redis publish failed", { channel, error_message: (err as Error).message });
    });
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all([...this.pending]);
    try {
      if (this.up) await this.send("ZREM", [this.key("nodes"), this.nodeId]);
    } catch {
      // gone already
    }
    this.cluster?.close();
    this.client?.close();
    this.sub?.close();
    this.client = null;
    this.sub = null;
  }
}
