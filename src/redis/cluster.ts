import { RedisClient } from "bun";
import type { Logger } from "../log";

/** CRC16-CCITT (XModem), the checksum Redis Cluster places keys with (cluster spec, "Keys distribution model"). */
const CRC16 = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let j = 0; j < 8; j++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

const encoder = new TextEncoder();

/**
 * The slot of a key (0..16383): CRC16 of its hash tag, the text between the first `{` and the
 * first `}` after it when that text is not empty, or of the whole key otherwise.
 */
export function slotOf(key: string): number {
  let s = key.indexOf("{");
  if (s !== -1) {
    const e = key.indexOf("}", s + 1);
    if (e > s + 1) key = key.slice(s + 1, e);
  }
  let crc = 0;
  let ascii = true;
  for (let i = 0; i < key.length; i++)
    if (key.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  if (ascii) for (let i = 0; i < key.length; i++) crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ key.charCodeAt(i)) & 0xff];
  else for (const b of encoder.encode(key)) crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ b) & 0xff];
  s = crc & 16383;
  return s;
}

/** The key a command is placed by: the first key of a script, the first argument of anything else. */
function keysOf(command: string, args: string[]): string[] {
  if (command === "EVALSHA" || command === "EVAL") return args.slice(2, 2 + Number(args[1]));
  return args.length > 0 ? [args[0]] : [];
}

export class RedisUnavailable extends Error {
  constructor(message = "redis is unavailable") {
    super(message);
    this.name = "RedisUnavailable";
  }
}

type Listener = (message: string, channel: string) => void;
/** Every connection's options (link.ts and here): no queue or reconnection of Bun's own, the link's timer reconnects. */
export const CLIENT_OPTIONS = { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: 1000 };

/**
 * One command on one connection; RedisUnavailable when it has no answer within `timeoutMs`.
 *
 * The time counted is time this thread could have heard the answer. When the timer fires late,
 * this thread was busy (a first call loading an engine, a long synchronous step): the command may
 * have been written only when that step ended (Bun writes at the end of the tick), or its answer
 * may wait in the socket unread (the event loop runs due timers before it reads sockets). So a
 * late timer gives Redis as long again as the stall (at most `timeoutMs`), and even an on-time one
 * lets the loop read its sockets once more (a 0 ms timer; `setImmediate` runs before that read).
 * A node then never takes its own stall for a Redis outage, which would put its calls on the
 * outage share of the limit: 429 on a plan far from its limit.
 */
export function timedSend<T>(c: RedisClient, command: string, args: string[], timeoutMs: number): Promise<T> {
  // one promise settled by whichever comes first (no race, no finally: fewer promises per command)
  return new Promise<T>((resolve, reject) => {
    const sentAt = performance.now();
    const late = () => reject(new RedisUnavailable(`redis did not answer ${command} within ${timeoutMs} ms`));
    // the timer of the moment: the first, then the grace it leaves (cleared by the answer either way)
    let timer = setTimeout(() => {
      const stalled = performance.now() - sentAt - timeoutMs;
      timer = setTimeout(late, stalled > 2 ? Math.min(stalled, timeoutMs) : 0);
    }, timeoutMs);
    c.send(command, args).then(
      (v) => {
        clearTimeout(timer);
        resolve(v as T);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
const SLOTS = 16384;

/**
 * A Redis Cluster seen as one server: the slot map (CLUSTER SLOTS, read from any node that
 * answers), one Bun RedisClient per master, each command sent to the master of its key's slot.
 * A MOVED answer updates that slot and has the whole map read again; an ASK answer sends the
 * command once to the node named, after ASKING, on the same connection. Subscriptions live on one
 * connection to any master: PUBLISH reaches every node of a cluster.
 */
export class RedisClusterConnection {
  private seeds: URL[];
  private clients = new Map<string, RedisClient>();
  private dialing = new Map<string, Promise<RedisClient>>();
  private slots: (string | undefined)[] = new Array(SLOTS);
  private masters = new Set<string>();
  private sub: RedisClient | null = null;
  private healthy = false;
  private stale = true;
  /** when a master's connection was lost (Date.now), null while all are up or before they ever were */
  lostAt: number | null = null;
  /** redirections followed, and slot maps read */
  readonly stats = { moved: 0, ask: 0, maps: 0 };

  constructor(
    urls: string,
    private timeoutMs: number,
    private onMoved: () => void,
    private logger?: Logger,
  ) {
    this.seeds = urls
      .split(",")
      .map((u) => u.trim())
      .filter(Boolean)
      .map((u) => new URL(u));
    if (this.seeds.length === 0) throw new Error("no Redis Cluster seed node");
  }

  get up(): boolean {
    return this.healthy;
  }

  /** every master connected, the map not known to be stale, and the subscriber connected */
  get settled(): boolean {
    return this.healthy && !this.stale && this.sub?.connected === true;
  }

  /** A node's URL: the first seed's scheme and credentials, the node's host and port. */
  private urlOf(addr: string): string {
    const u = new URL(this.seeds[0].href);
    const i = addr.lastIndexOf(":");
    const host = addr.slice(0, i);
    u.hostname = host.includes(":") ? `[${host}]` : host;
    u.port = addr.slice(i + 1);
    u.pathname = "";
    return u.href;
  }

  /** The client of a node, connected (one dial at a time per node: concurrent callers share it). */
  private connectNode(addr: string): Promise<RedisClient> {
    const had = this.clients.get(addr);
    if (had?.connected) return Promise.resolve(had);
    let dial = this.dialing.get(addr);
    if (dial) return dial;
    had?.close();
    const c = new RedisClient(this.urlOf(addr), CLIENT_OPTIONS);
    c.onclose = () => {
      if (this.clients.get(addr) === c && this.masters.has(addr)) {
        this.healthy = false;
        this.lostAt ??= Date.now();
      }
    };
    this.clients.set(addr, c);
    dial = c
      .connect()
      .then(() => c)
      .finally(() => this.dialing.delete(addr));
    this.dialing.set(addr, dial);
    return dial;
  }

  /** Reads the slot map from the first node that answers: known masters first, then the seeds. */
  private async refresh(): Promise<void> {
    const tried: string[] = [];
    const candidates = [
      ...[...this.clients].filter(([, c]) => c.connected).map(([a]) => a),
      ...this.seeds.map((s) => `${s.hostname.replace(/^\[|\]$/g, "")}:${s.port || "6379"}`),
    ];
    let last: unknown = null;
    for (const addr of candidates) {
      if (tried.includes(addr)) continue;
      tried.push(addr);
      try {
        const c = await this.connectNode(addr);
        const ranges = (await c.send("CLUSTER", ["SLOTS"])) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
        const slots: (string | undefined)[] = new Array(SLOTS);
        const masters = new Set<string>();
        const host = addr.slice(0, addr.lastIndexOf(":"));
        for (const [start, end, [h, port]] of ranges) {
          // an empty host means the node asked
          const a = `${h || host}:${port}`;
          masters.add(a);
          for (let s = Number(start); s <= Number(end); s++) slots[s] = a;
        }
        if (masters.size === 0) throw new Error("CLUSTER SLOTS answered no slot");
        this.slots = slots;
        this.masters = masters;
        this.stale = false;
        this.stats.maps++;
        return;
      } catch (err) {
        last = err;
      }
    }
    throw last instanceof Error ? last : new RedisUnavailable("no Redis Cluster node answered");
  }

  /** Reads the map if it is stale or a master is down, connects every master, and the subscriber. */
  async connect(listeners: Map<string, Listener>): Promise<void> {
    if (this.stale || !this.healthy) {
      // a stale map keeps serving (MOVED patched the slot) while the new one is read
      await this.refresh();
      await Promise.all([...this.masters].map((a) => this.connectNode(a)));
      for (const [addr, c] of this.clients)
        if (!this.masters.has(addr)) {
          this.clients.delete(addr);
          c.close();
        }
      this.healthy = [...this.masters].every((a) => this.clients.get(a)?.connected);
      if (this.healthy) this.lostAt = null;
    }
    if (!this.sub?.connected) {
      this.sub?.close();
      let s: RedisClient | null = null;
      for (const addr of this.masters) {
        try {
          s = new RedisClient(this.urlOf(addr), CLIENT_OPTIONS);
          await s.connect();
          break;
        } catch {
          s?.close();
          s = null;
        }
      }
      if (!s) throw new RedisUnavailable("no Redis Cluster node to subscribe on");
      for (const [channel, listener] of listeners) await s.subscribe(channel, listener);
      this.sub = s;
    }
  }

  subscribe(channel: string, listener: Listener): void {
    if (this.sub?.connected) void this.sub.subscribe(channel, listener).catch(() => {});
  }

  /** One command, sent to the master of its key's slot, following MOVED and ASK (at most 5 hops). */
  async send<T>(command: string, args: string[]): Promise<T> {
    const keys = keysOf(command, args);
    const slot = keys.length > 0 ? slotOf(keys[0]) : 0;
    for (let i = 1; i < keys.length; i++)
      if (slotOf(keys[i]) !== slot)
        throw new Error(
          `CROSSSLOT (gateway): ${command} keys ${keys[0]} and ${keys[i]} are in different slots; give them one hash tag`,
        );
    if (!this.healthy) throw new RedisUnavailable();
    let addr = this.slots[slot];
    let asking = false;
    for (let hop = 0; ; hop++) {
      const c = addr === undefined ? undefined : this.clients.get(addr);
      if (!c?.connected) {
        if (addr !== undefined && this.masters.has(addr)) {
          this.healthy = false;
          this.lostAt ??= Date.now();
        }
        throw new RedisUnavailable(`redis cluster node ${addr ?? `for slot ${slot}`} is not connected`);
      }
      try {
        // queued right before the command on the same connection: ASKING applies to the next command only
        if (asking) void c.send("ASKING", []).catch(() => {});
        return await timedSend<T>(c, command, args, this.timeoutMs);
      } catch (err) {
        if (err instanceof RedisUnavailable) throw err;
        if (!c.connected) throw new RedisUnavailable((err as Error).message);
        const msg = String((err as Error).message);
        const moved = msg.startsWith("MOVED ");
        if ((moved || msg.startsWith("ASK ")) && hop < 5) {
          const to = msg.split(" ")[2];
          this.stats[moved ? "moved" : "ask"]++;
          if (moved) {
            this.slots[Number(msg.split(" ")[1])] = to;
            this.stale = true;
            this.onMoved();
          }
          asking = !moved;
          addr = to;
          try {
            await this.connectNode(to);
          } catch (e) {
            throw new RedisUnavailable(`redis cluster node ${to}: ${(e as Error).message}`);
          }
          continue;
        }
        if (msg.startsWith("TRYAGAIN") && hop < 5) {
          await Bun.sleep(25);
          continue;
        }
        if (msg.startsWith("CLUSTERDOWN")) {
          this.logger?.log("warn", "redis cluster is down", { error_message: msg });
          throw new RedisUnavailable(msg);
        }
        throw err;
      }
    }
  }

  /** The masters' addresses and the slot of each key, for tests and diagnostics. */
  nodeOf(key: string): string | undefined {
    return this.slots[slotOf(key)];
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
    this.sub?.close();
    this.sub = null;
    this.healthy = false;
  }
}
