import { TcpProxy } from "./tcp-proxy";

/** One command as the client sent it: its name and arguments (bulk strings, decoded as UTF-8). */
export interface SentCommand {
  conn: number;
  /** the round trip it went in: the client's sends on a connection between two of the server's replies are one */
  trip: number;
  args: string[];
}

/**
 * A TCP proxy in front of Redis that reads the RESP commands clients send and counts round trips:
 * on each connection, the bytes a client sends after the server last answered start a new trip
 * (pipelined commands written together are one trip; a command sent after waiting for a reply is
 * another). What the gateway asks of Redis per call, counted from outside.
 */
export class RespCounter {
  readonly proxy: TcpProxy;
  readonly commands: SentCommand[] = [];
  private trips = 0;
  private state = new Map<number, { buf: Buffer; answered: boolean; trip: number }>();

  constructor(redisPort: number) {
    this.proxy = new TcpProxy(redisPort, (conn, toServer, bytes) => this.seen(conn, toServer, bytes));
  }

  get port(): number {
    return this.proxy.port;
  }

  up(): this {
    this.proxy.up();
    return this;
  }

  down(): void {
    this.proxy.down();
  }

  /** Commands and trips since the last reset, leaving out the nodes' heartbeats (keys `<prefix>:nodes`). */
  since(mark = 0): { commands: SentCommand[]; trips: number } {
    const commands = this.commands.slice(mark).filter((c) => !c.args.some((a) => a.endsWith(":nodes")));
    return { commands, trips: new Set(commands.map((c) => `${c.conn}:${c.trip}`)).size };
  }

  private seen(conn: number, toServer: boolean, bytes: Uint8Array): void {
    let s = this.state.get(conn);
    if (!s) {
      s = { buf: Buffer.alloc(0), answered: true, trip: 0 };
      this.state.set(conn, s);
    }
    if (!toServer) {
      s.answered = true;
      return;
    }
    if (s.answered) {
      s.trip = ++this.trips;
      s.answered = false;
    }
    s.buf = Buffer.concat([s.buf, Buffer.from(bytes)]);
    for (;;) {
      const parsed = parseCommand(s.buf);
      if (!parsed) break;
      this.commands.push({ conn, trip: s.trip, args: parsed.args });
      s.buf = s.buf.subarray(parsed.end);
    }
  }
}

/** One RESP array of bulk strings from the start of `buf`, or null if it is not all there yet. */
function parseCommand(buf: Buffer): { args: string[]; end: number } | null {
  const line = (from: number) => {
    const e = buf.indexOf("\r\n", from);
    return e === -1 ? null : { text: buf.toString("latin1", from, e), next: e + 2 };
  };
  const head = line(0);
  if (!head) return null;
  if (!head.text.startsWith("*")) {
    // an inline command (redis-cli style): one line of words
    return { args: head.text.split(" "), end: head.next };
  }
  const n = Number(head.text.slice(1));
  const args: string[] = [];
  let at = head.next;
  for (let i = 0; i < n; i++) {
    const len = line(at);
    if (!len) return null;
    const size = Number(len.text.slice(1));
    if (buf.length < len.next + size + 2) return null;
    args.push(buf.toString("utf8", len.next, len.next + size));
    at = len.next + size + 2;
  }
  return { args, end: at };
}
