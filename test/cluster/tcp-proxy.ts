import type { Socket, TCPSocketListener } from "bun";

interface Pipe {
  peer: Socket<Pipe> | null;
  /** bytes waiting for the peer to connect or to drain */
  queue: Uint8Array[];
  /** the client connection's number, for the tap */
  conn?: number;
}

function send(to: Socket<Pipe>, bytes: Uint8Array): void {
  if (to.data.queue.length) {
    to.data.queue.push(bytes);
    return;
  }
  const n = to.write(bytes);
  if (n < bytes.length) to.data.queue.push(bytes.subarray(Math.max(0, n)));
}

function drain(s: Socket<Pipe>): void {
  while (s.data.queue.length) {
    const head = s.data.queue[0];
    const n = s.write(head);
    if (n < head.length) {
      s.data.queue[0] = head.subarray(Math.max(0, n));
      return;
    }
    s.data.queue.shift();
  }
}

/**
 * A TCP proxy in front of a shared server (PostgreSQL, Redis), so a test can take that server away
 * from the gateways (`down()`: the listener closes and every connection through it is cut) and
 * give it back on the same port (`up()`), without touching the server others use.
 */
export class TcpProxy {
  private listener: TCPSocketListener<Pipe> | null = null;
  private sockets = new Set<Socket<Pipe>>();
  port = 0;

  /**
   * `tap`, when given, sees every chunk passing through: `toServer` from the client, or back, and
   * `conn` a number per client connection (a counting proxy: test/cluster/resp-counter.ts).
   */
  constructor(
    private targetPort: number,
    private tap?: (conn: number, toServer: boolean, bytes: Uint8Array) => void,
  ) {}
  private conns = 0;

  up(): this {
    if (this.listener) return this;
    this.listener = Bun.listen<Pipe>({
      hostname: "127.0.0.1",
      port: this.port,
      socket: {
        open: (client) => {
          const conn = ++this.conns;
          client.data = { peer: null, queue: [], conn };
          this.sockets.add(client);
          Bun.connect<Pipe>({
            hostname: "127.0.0.1",
            port: this.targetPort,
            data: { peer: client, queue: [] },
            socket: {
              open: (server) => {
                this.sockets.add(server);
                client.data.peer = server;
                const early = client.data.queue;
                client.data.queue = [];
                for (const b of early) send(server, b);
              },
              data: (_server, bytes) => {
                this.tap?.(conn, false, bytes);
                send(client, new Uint8Array(bytes));
              },
              drain: (server) => drain(server),
              close: (server) => {
                this.sockets.delete(server);
                client.end();
              },
              error: () => {
                client.end();
              },
            },
          }).catch(() => {
            client.end();
          });
        },
        data: (client, bytes) => {
          this.tap?.(client.data.conn ?? 0, true, bytes);
          const server = client.data.peer;
          if (server) send(server, new Uint8Array(bytes));
          else client.data.queue.push(new Uint8Array(bytes));
        },
        drain: (client) => {
          if (client.data.peer) drain(client);
        },
        close: (client) => {
          this.sockets.delete(client);
          client.data.peer?.end();
        },
        error: (client) => {
          client.data.peer?.end();
        },
      },
    });
    this.port = this.listener.port;
    return this;
  }

  down(): void {
    this.listener?.stop(true);
    this.listener = null;
    for (const s of this.sockets) s.terminate();
    this.sockets.clear();
  }
}
