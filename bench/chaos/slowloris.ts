/**
 * Slowloris and never-ending bodies: 40 connections trickle their headers, 40 trickle a body of a
 * declared length, 20 trickle a chunked body that never ends, one streams a chunked body as fast
 * as it can, all while a probe calls /health every 50 ms. Pass: /health never fails nor stalls
 * (max under 500 ms), each body connection is answered and closed within body_timeout_ms plus
 * a margin, the fast stream is cut at the size limit, and the header tricklers are closed too.
 */

import { RawConnection } from "../../test/helpers/raw-http";
import { spawnGateway } from "../../test/helpers/spawned";
import { chaosHome, FN, since, waitReady } from "../lib/chaos";

const BODY_TIMEOUT_MS = 2000;
const HEADER_LIMIT_MS = 15_000;
const RUN_MS = 16_000;

export async function run() {
  const admin = `chaos-admin-${crypto.randomUUID()}`;
  const home = chaosHome("slowloris", `[limits]\nbody_timeout_ms = ${BODY_TIMEOUT_MS}\n`, { TEXTAI_ADMIN_TOKEN: admin });
  const g = await spawnGateway(home.env);
  try {
    await waitReady(g.url);
    const { key } = home.key(1000);
    const port = Number(new URL(g.url).port);
    const head = (framing: string) =>
      `POST ${FN} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\n${framing}\r\n\r\n`;
    type Slow = { kind: "headers" | "sized" | "chunked" | "flood"; conn: RawConnection; closedAt?: number; status?: number };
    const t0 = performance.now();
    const slow: Slow[] = [];
    const open = async (kind: Slow["kind"], first: string) => {
      const conn = new RawConnection(port);
      await conn.ready;
      conn.write(first);
      const s: Slow = { kind, conn };
      slow.push(s);
      void conn.next(RUN_MS).then((r) => {
        s.status = r?.status;
      });
      void conn.closed(RUN_MS).then((closed) => {
        if (closed) s.closedAt = since(t0);
      });
    };
    for (let i = 0; i < 40; i++) await open("headers", `GET /health HTTP/1.1\r\nhost: x\r\n`);
    for (let i = 0; i < 40; i++) await open("sized", `${head("content-length: 100000")}{"text": "`);
    for (let i = 0; i < 20; i++) await open("chunked", `${head("transfer-encoding: chunked")}3\r\n{"t\r\n`);
    await open("flood", head("transfer-encoding: chunked"));
    const flood = slow[slow.length - 1];
    const chunk = `10000\r\n${"a".repeat(0x10000)}\r\n`;
    const drip = setInterval(() => {
      for (const s of slow) {
        if (s.conn.state !== "open" || s.kind === "flood") continue;
        s.conn.write(s.kind === "headers" ? "x-a: b\r\n" : s.kind === "sized" ? "a" : "1\r\na\r\n");
      }
    }, 500);
    const pump = async () => {
      while (flood.conn.state === "open" && since(t0) < RUN_MS) {
        if (!flood.conn.socket.write(chunk))
          await new Promise((r) => {
            flood.conn.socket.once("drain", r);
            flood.conn.socket.once("close", r);
            setTimeout(r, 500);
          });
      }
    };
    const pumping = pump().catch(() => {});
    const health: number[] = [];
    let healthFailures = 0;
    while (since(t0) < RUN_MS && slow.some((s) => s.closedAt === undefined)) {
      const t = performance.now();
      const ok = await fetch(`${g.url}/health`)
        .then((r) => r.status === 200)
        .catch(() => false);
      health.push(performance.now() - t);
      if (!ok) healthFailures++;
      await Bun.sleep(50);
    }
    clearInterval(drip);
    await pumping;
    health.sort((a, b) => a - b);
    const p99 = health[Math.floor(health.length * 0.99)] ?? 0;
    const max = health[health.length - 1] ?? 0;
    const worst = (kind: Slow["kind"]) =>
      Math.max(...slow.filter((s) => s.kind === kind).map((s) => s.closedAt ?? Number.POSITIVE_INFINITY));
    const bodies408 = slow.filter((s) => (s.kind === "sized" || s.kind === "chunked") && s.status === 408).length;
    // A body sent at full speed that never ends cannot always read its 413: the gateway closes the
    // connection with unread bytes still arriving, and TCP then resets it, which may drop the answer
    // before the client reads it. What the gateway did is in its own count of 413 answers.
    const metricsText = await (await fetch(`${g.url}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text();
    const answered413 = [...metricsText.matchAll(/^textai_requests_total\{[^}]*status="413"[^}]*\} (\d+)/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
    const floodCut = (flood.status === 413 || answered413 >= 1) && (flood.closedAt ?? Number.POSITIVE_INFINITY) < 2000;
    const ok =
      healthFailures === 0 &&
      max < 500 &&
      worst("sized") < BODY_TIMEOUT_MS + 1500 &&
      worst("chunked") < BODY_TIMEOUT_MS + 1500 &&
      bodies408 === 60 &&
      floodCut &&
      worst("headers") < HEADER_LIMIT_MS;
    const fmt = (n: number) => (Number.isFinite(n) ? `${(n / 1000).toFixed(1)} s` : "never");
    return {
      name: "slowloris",
      line: `/health ${health.length} probes, ${healthFailures} failed, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms; last closed: trickled bodies ${fmt(worst("sized"))} / chunked ${fmt(worst("chunked"))} (408: ${bodies408}/60, limit ${BODY_TIMEOUT_MS / 1000} s), headers ${fmt(worst("headers"))}, flood answered ${flood.status ?? "nothing (reset)"} at ${fmt(flood.closedAt ?? Number.POSITIVE_INFINITY)} (gateway counted 413: ${answered413})`,
      ok,
    };
  } finally {
    g.proc.kill(9);
    home.cleanup();
  }
}
