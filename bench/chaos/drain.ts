/**
 * SIGTERM drain: 12 keep-alive clients call a charged function back to back on raw connections
 * while a probe polls /ready; SIGTERM arrives mid-load. Counts the calls answered, refused at
 * connect (fine: the listener has closed), reset (a request sent on an open connection and never
 * answered) and charged but unanswered; one more client holds an unfinished body throughout. Pass:
 * no reset once /ready answers 503, nothing charged unanswered, and the process exits 0 at the
 * deadline at the latest, the holder cut off.
 */

import { RawConnection, request } from "../../test/helpers/raw-http";
import { spawnGateway } from "../../test/helpers/spawned";
import { chaosHome, FN, since, uniqueText, waitReady } from "../lib/chaos";

const CLIENTS = 12;
const GRACE_MS = 1500;
const DEADLINE_MS = 5000;

export async function run() {
  const home = chaosHome("drain", "", {
    TEXTAI_DRAIN_GRACE_MS: String(GRACE_MS),
    TEXTAI_DRAIN_DEADLINE_MS: String(DEADLINE_MS),
  });
  const g = await spawnGateway(home.env);
  try {
    const { key, accountId } = home.key(100_000_000);
    const port = Number(new URL(g.url).port);
    const received = new Set<string>();
    let answered = 0;
    let refused = 0;
    let closeHeaders = 0;
    /** when (ms after SIGTERM) and how: at connect (nothing was sent), or a request sent and never answered */
    const resets: { t: number; phase: "connect" | "request" }[] = [];
    let readyAt = Number.POSITIVE_INFINITY;
    let t0 = 0;
    let stopping = false;

    const client = async () => {
      let conn: RawConnection | null = null;
      for (;;) {
        if (conn?.state !== "open") {
          conn = new RawConnection(port);
          await conn.ready;
          if (conn.state === "refused") {
            refused++;
            return;
          }
          if (conn.state !== "open") {
            resets.push({ t: since(t0), phase: "connect" });
            return;
          }
        }
        conn.write(
          request("POST", FN, { body: { text: uniqueText() }, headers: { "x-api-key": key, "cache-control": "no-store" } }),
        );
        const res = await conn.next(DEADLINE_MS + 2000);
        if (!res) {
          if (stopping) resets.push({ t: since(t0), phase: "request" });
          conn.destroy();
          conn = null;
          if (!stopping) continue;
          return;
        }
        answered++;
        if (res.status === 200) received.add(JSON.parse(res.body).request_id);
        if (res.headers.connection === "close") {
          closeHeaders++;
          await conn.closed(2000);
          conn.destroy();
          conn = null;
        }
      }
    };
    const probe = async () => {
      while (readyAt === Number.POSITIVE_INFINITY) {
        const res = await fetch(`${g.url}/ready`).catch(() => null);
        if (res?.status === 503 && stopping) readyAt = since(t0);
        await Bun.sleep(10);
      }
    };
    await waitReady(g.url);
    const holder = new RawConnection(port);
    await holder.ready;
    holder.write(
      `POST ${FN} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\ncontent-length: 1000\r\n\r\n{"text": "`,
    );
    const clients = Array.from({ length: CLIENTS }, client);
    await Bun.sleep(1000);
    t0 = performance.now();
    stopping = true;
    g.proc.kill("SIGTERM");
    const probing = probe();
    const holderCut = holder.closed(DEADLINE_MS + 3000).then((closed) => (closed ? since(t0) : -1));
    const code = await g.exited;
    const exitedAt = since(t0);
    const holderClosedAt = await holderCut;
    await Promise.all(clients);
    readyAt = Math.min(readyAt, exitedAt);
    await probing;
    const charges = home.charges(accountId);
    const unanswered = [...charges].filter((id) => !received.has(id)).length;
    const resetsAfterReady = resets.filter((r) => r.t >= readyAt).length;
    const resetList = resets.length
      ? ` [${resets
          .slice(0, 5)
          .map((r) => `${r.phase} at ${r.t} ms`)
          .join(", ")}]`
      : "";
    const ok =
      resetsAfterReady === 0 &&
      unanswered === 0 &&
      code === 0 &&
      exitedAt < DEADLINE_MS + 1000 &&
      holderClosedAt >= 0 &&
      answered > 0;
    return {
      name: "drain",
      line: `answered ${answered} (${closeHeaders} with Connection: close), refused at connect ${refused}, reset ${resets.length}${resetList} (after /ready went 503: ${resetsAfterReady}), charged but unanswered ${unanswered}; /ready 503 at ${readyAt} ms, unfinished body cut at ${holderClosedAt} ms, exit ${code} at ${exitedAt} ms (grace ${GRACE_MS}, deadline ${DEADLINE_MS})`,
      ok,
    };
  } finally {
    g.proc.kill(9);
    home.cleanup();
  }
}
