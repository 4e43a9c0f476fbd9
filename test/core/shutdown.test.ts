import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { wordCount } from "../helpers/echo-function";
import { startGateway } from "../helpers/gateway";
import { RawConnection } from "../helpers/raw-http";

test("graceful stop: in-flight requests finish and are charged, the database closes cleanly into one file", async () => {
  const gw = await startGateway({ functions: [wordCount] });
  const { key, accountId } = gw.newKey({ credits: 10 });
  const inFlight = gw.post("/api/v1/ai/word-count", { text: "finish me please", delay_ms: 400 }, { "x-api-key": key });
  await Bun.sleep(100);
  const stopping = gw.stop();
  const res = await inFlight;
  await stopping;
  expect(res.status).toBe(200);
  expect(res.json.data.result).toEqual({ words: 3 });
  expect(await fetch(`${gw.url}/health`).catch(() => null)).toBeNull();
  // one file left, whole: the WAL was folded in and removed (an operator may copy the file alone)
  expect(readdirSync(gw.dir).filter((f) => f.startsWith("textai.db"))).toEqual(["textai.db"]);
  const copy = join(gw.dir, "copy", "textai.db");
  mkdirSync(dirname(copy));
  copyFileSync(gw.dbPath, copy);
  const db = new Database(copy, { readonly: true });
  const row = db.query("SELECT balance FROM accounts WHERE id = ?").get(accountId) as { balance: number };
  const charges = db.query("SELECT count(*) AS n FROM ledger WHERE account_id = ? AND kind = 'charge'").get(accountId) as {
    n: number;
  };
  db.close();
  expect(row.balance).toBe(9);
  expect(charges.n).toBe(1);
  rmSync(gw.dir, { recursive: true, force: true });
});

const drainEnv = (grace: number, deadline: number) => ({
  TEXTAI_DRAIN_GRACE_MS: String(grace),
  TEXTAI_DRAIN_DEADLINE_MS: String(deadline),
});
const charges = (dbPath: string, accountId: string) => {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM ledger WHERE account_id = ? AND kind = 'charge'").get(accountId) as { n: number })
      .n;
  } finally {
    db.close();
  }
};

/**
 * A call of `ms` in flight from now on, on an account of its own: the drain stays in its grace
 * until it ends (an idle drain ends at once).
 */
async function busyFor(gw: Awaited<ReturnType<typeof startGateway>>, ms: number) {
  const { key } = gw.newKey({ credits: 1 });
  const call = gw.post("/api/v1/ai/word-count", { text: "keeps the drain busy", delay_ms: ms }, { "x-api-key": key });
  await Bun.sleep(50);
  return { done: call };
}

describe("drain on SIGTERM", () => {
  test("/ready is 503 at once, the listener stays open for the grace with Connection: close, in-flight calls finish", async () => {
    const gw = await startGateway({ functions: [wordCount], env: drainEnv(1500, 5000) });
    const { key, accountId } = gw.newKey({ credits: 10 });
    const port = gw.port;
    // a kept-alive connection from before the signal
    const kept = new RawConnection(port);
    await kept.ready;
    kept.send("GET", "/health");
    const before = await kept.next();
    expect(before?.status).toBe(200);
    expect(before?.headers.connection).not.toBe("close");
    const inFlight = gw.post("/api/v1/ai/word-count", { text: "finish me", delay_ms: 2000 }, { "x-api-key": key });
    await Bun.sleep(100);

    const t0 = performance.now();
    const stopping = gw.stop();
    const ready = await fetch(`${gw.url}/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get("connection")).toBe("close");
    // the kept-alive connection gets its answer, told to close, and is closed by the server
    kept.send("GET", "/health");
    const during = await kept.next();
    expect(during?.status).toBe(200);
    expect(during?.headers.connection).toBe("close");
    expect(await kept.closed(2000)).toBe(true);
    // a new connection within the grace is still answered
    const fresh = new RawConnection(port);
    await fresh.ready;
    fresh.send("POST", "/api/v1/ai/word-count", { body: { text: "one more call" }, headers: { "x-api-key": key } });
    const answered = await fresh.next();
    expect(answered?.status, answered?.body).toBe(200);
    expect(answered?.headers.connection).toBe("close");
    expect(performance.now() - t0).toBeLessThan(1500);

    // after the grace the listener is closed
    await Bun.sleep(Math.max(0, 1700 - (performance.now() - t0)));
    const late = new RawConnection(port);
    await late.ready;
    expect(late.state).toBe("refused");
    // the call in flight finished, and the drain ended without waiting for the deadline
    const res = await inFlight;
    expect(res.status).toBe(200);
    await stopping;
    expect(performance.now() - t0).toBeLessThan(4800);
    expect(charges(gw.dbPath, accountId)).toBe(2);
    rmSync(gw.dir, { recursive: true, force: true });
  });

  test("the answer of a call in flight at the signal says Connection: close; its connection serves nothing more", async () => {
    const gw = await startGateway({ functions: [wordCount], env: drainEnv(1500, 5000) });
    const { key, accountId } = gw.newKey({ credits: 10 });
    const kept = new RawConnection(gw.port);
    await kept.ready;
    kept.send("POST", "/api/v1/ai/word-count", { body: { text: "in flight", delay_ms: 600 }, headers: { "x-api-key": key } });
    await Bun.sleep(150);
    const stopping = gw.stop();
    const res = await kept.next();
    expect(res?.status, res?.body).toBe(200);
    expect(res?.headers.connection).toBe("close");
    // the client's next request on that connection is neither served nor charged
    kept.send("POST", "/api/v1/ai/word-count", { body: { text: "one more" }, headers: { "x-api-key": key } });
    expect(await kept.next(1000)).toBeNull();
    expect(await kept.closed(1000)).toBe(true);
    await stopping;
    expect(charges(gw.dbPath, accountId)).toBe(1);
    rmSync(gw.dir, { recursive: true, force: true });
  });

  test("a request arriving as the grace ends is held and answered with Connection: close, not reset; then the listener closes", async () => {
    const gw = await startGateway({ functions: [wordCount], env: drainEnv(600, 5000) });
    const { key, accountId } = gw.newKey({ credits: 10 });
    // a kept-alive connection, idle since before the signal
    const kept = new RawConnection(gw.port);
    await kept.ready;
    kept.send("GET", "/health");
    expect((await kept.next())?.status).toBe(200);
    const busy = await busyFor(gw, 1500);

    const t0 = performance.now();
    const stopping = gw.stop();
    // just past the grace (the server's timer, set after t0, has fired by then): on the kept-alive
    // connection and on a new one
    await Bun.sleep(610);
    kept.send("POST", "/api/v1/ai/word-count", { body: { text: "just in time" }, headers: { "x-api-key": key } });
    const fresh = new RawConnection(gw.port);
    await fresh.ready;
    if (fresh.state === "open")
      fresh.send("POST", "/api/v1/ai/word-count", { body: { text: "a new connection" }, headers: { "x-api-key": key } });
    for (const conn of [kept, fresh]) {
      const res = await conn.next(3000);
      expect(res?.status, res?.body).toBe(200);
      expect(res?.headers.connection).toBe("close");
      expect(await conn.closed(2000)).toBe(true);
    }
    // nothing more arrives: the listener closes
    await Bun.sleep(Math.max(0, 1000 - (performance.now() - t0)));
    const late = new RawConnection(gw.port);
    await late.ready;
    expect(late.state).toBe("refused");
    await stopping;
    expect((await busy.done).status).toBe(200);
    expect(gw.logs.some((l) => l.includes('"listener closed"') && l.includes('"held":2'))).toBe(true);
    expect(charges(gw.dbPath, accountId)).toBe(2);
    rmSync(gw.dir, { recursive: true, force: true });
  });

  // While holding, requests go through Elysia's own router instead of Bun's route table, and that
  // router once cut the path out of the URL assuming a host of at least four characters: behind a
  // short Host (a Docker or Kubernetes service name) a held call was answered 400, not served.
  test("a held request is answered as usual whatever its Host header, short service names included", async () => {
    const gw = await startGateway({ functions: [wordCount], env: drainEnv(600, 5000) });
    const { key, accountId } = gw.newKey({ credits: 10 });
    const hosts = ["x", "gw", "api", "x:1", "gw:8080"];
    // connected before the signal, so that every request is sent at once into the hold
    const calls = hosts.map(() => new RawConnection(gw.port));
    const health = hosts.map(() => new RawConnection(gw.port));
    await Promise.all([...calls, ...health].map((c) => c.ready));
    const busy = await busyFor(gw, 1500);
    const stopping = gw.stop();
    await Bun.sleep(610);
    hosts.forEach((host, i) => {
      calls[i].send("POST", "/api/v1/ai/word-count", {
        body: { text: `held behind ${host}` },
        headers: { host, "x-api-key": key },
      });
      health[i].send("GET", "/health", { headers: { host } });
    });
    for (const [i, host] of hosts.entries()) {
      const call = await calls[i].next(3000);
      expect(call?.status, `${host}: ${call?.body}`).toBe(200);
      expect(JSON.parse(call?.body ?? "{}").data.result).toEqual({ words: 3 });
      expect(call?.headers.connection).toBe("close");
      const ok = await health[i].next(3000);
      expect(ok?.status, `${host}: ${ok?.body}`).toBe(200);
      expect(ok?.headers.connection).toBe("close");
    }
    await stopping;
    expect((await busy.done).status).toBe(200);
    // they were held (not answered by the route table before the hold began)
    expect(gw.logs.some((l) => l.includes('"listener closed"') && l.includes(`"held":${hosts.length * 2}`))).toBe(true);
    expect(charges(gw.dbPath, accountId)).toBe(hosts.length);
    rmSync(gw.dir, { recursive: true, force: true });
  });

  test("a held request is still counted against its own client address (the admin token's guessing limit)", async () => {
    const token = "operator-token-for-drain-tests-0123456789";
    const gw = await startGateway({ functions: [wordCount], env: { ...drainEnv(600, 5000), TEXTAI_ADMIN_TOKEN: token } });
    const adminCall = (c: RawConnection, host: string, bearer: string) =>
      c.send("GET", "/admin/v1/accounts?limit=1", { headers: { host, authorization: `Bearer ${bearer}` } });
    // five wrong tokens from 127.0.0.7: its next wrong one is refused 429 from then on (the right
    // token is never refused: docs/security.md), however its request arrives
    for (let i = 0; i < 5; i++) {
      const c = new RawConnection(gw.port, "127.0.0.1", "127.0.0.7");
      await c.ready;
      adminCall(c, "127.0.0.1", `wrong-${i}`);
      expect((await c.next(2000))?.status).toBe(403);
      c.destroy();
    }
    const guesser = new RawConnection(gw.port, "127.0.0.1", "127.0.0.7");
    const operator = new RawConnection(gw.port, "127.0.0.1", "127.0.0.8");
    await Promise.all([guesser.ready, operator.ready]);
    const busy = await busyFor(gw, 1500);
    const stopping = gw.stop();
    await Bun.sleep(610);
    adminCall(guesser, "x", "wrong-5");
    adminCall(operator, "x", token);
    const refused = await guesser.next(3000);
    expect(refused?.status, refused?.body).toBe(429);
    expect(refused?.headers.connection).toBe("close");
    const served = await operator.next(3000);
    expect(served?.status, served?.body).toBe(200);
    expect(served?.headers.connection).toBe("close");
    await stopping;
    expect((await busy.done).status).toBe(200);
    expect(gw.logs.some((l) => l.includes('"listener closed"') && l.includes('"held":2'))).toBe(true);
    rmSync(gw.dir, { recursive: true, force: true });
  });

  test("the deadline cuts off a client holding an unfinished body and a call still running; neither is charged", async () => {
    const gw = await startGateway({ functions: [wordCount], env: drainEnv(600, 2500) });
    const { key, accountId } = gw.newKey({ credits: 10 });
    const holder = new RawConnection(gw.port);
    await holder.ready;
    holder.write(
      `POST /api/v1/ai/word-count HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\ncontent-length: 1000\r\n\r\n{"text": "never end`,
    );
    const slow = new RawConnection(gw.port);
    await slow.ready;
    slow.send("POST", "/api/v1/ai/word-count", { body: { text: "too slow", delay_ms: 4000 }, headers: { "x-api-key": key } });
    await Bun.sleep(150);
    const t0 = performance.now();
    await gw.stop();
    const took = performance.now() - t0;
    expect(took).toBeGreaterThan(2000);
    expect(took).toBeLessThan(4000);
    expect(await holder.closed(1000)).toBe(true);
    expect(await slow.next(1000)).toBeNull();
    // the slow call ends after the deadline; its charge is refused, nothing reaches the ledger
    await Bun.sleep(2000);
    expect(charges(gw.dbPath, accountId)).toBe(0);
    rmSync(gw.dir, { recursive: true, force: true });
  }, 15_000);
});
