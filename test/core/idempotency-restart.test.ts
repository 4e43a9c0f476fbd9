import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { cli, type SpawnedGateway, spawnGateway } from "../helpers/spawned";

// Real `textai serve` processes on one database file, killed with SIGKILL between a call and its retry.
const dir = mkdtempSync(join(tmpdir(), "textai-idem-kill-"));
const configPath = join(dir, "config.toml");
await Bun.write(
  configPath,
  `[[providers]]\nname = "mock"\ntype = "mock"\nlatency_ms = 3000\n\n[routes]\n"email-reply" = ["mock"]\n`,
);
const env = { TEXTAI_DB: join(dir, "textai.db"), TEXTAI_CONFIG: configPath };
const running: SpawnedGateway[] = [];
afterAll(() => {
  for (const g of running) g.proc.kill(9);
  rmSync(dir, { recursive: true, force: true });
});

async function start(): Promise<SpawnedGateway> {
  const g = await spawnGateway(env);
  running.push(g);
  return g;
}
async function kill9(g: SpawnedGateway): Promise<void> {
  g.proc.kill(9);
  expect(await g.exited).not.toBe(0);
}
async function post(g: SpawnedGateway, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(g.url + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, any> };
}

describe("Idempotency-Key across kill -9 and restart", () => {
  test("a retry after a crash replays the stored answer and is not charged again", async () => {
    const created = JSON.parse(cli(["keys", "create", "--label", "idem", "--credits", "10", "--json"], env));
    const h = { "x-api-key": created.key, "idempotency-key": "order-42" };
    const body = { text: "I love this product, it works great." };

    let g = await start();
    const first = await post(g, "/api/v1/ai/sentiment-analysis", body, h);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.meta.credits_remaining).toBe(9);
    await kill9(g);

    g = await start();
    const retry = await post(g, "/api/v1/ai/sentiment-analysis", body, h);
    expect(retry.status, JSON.stringify(retry.json)).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.json.data).toEqual(first.json.data);
    expect(retry.json.request_id).not.toBe(first.json.request_id);
    expect(retry.headers.get("x-request-id")).toBe(retry.json.request_id);
    expect(retry.json.meta).toMatchObject({ credits_deducted: 0, credits_remaining: 9 });
    const other = await post(g, "/api/v1/ai/sentiment-analysis", { text: "another text" }, h);
    expect(other.status).toBe(422);
    expect(other.json.error.code).toBe("idempotency_mismatch");
    // the same body on another function: the message does not claim the body differs
    const elsewhere = await post(g, "/api/v1/ai/spam-detection", body, h);
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.json.error.message).toContain("another function");

    // a call in flight when its process is killed: it was never answered nor charged, and its
    // record must not answer 409 forever; the retry runs it, and it is charged once
    const slowHeaders = { "x-api-key": created.key, "idempotency-key": "slow-1" };
    const slowBody = { email_text: "Can you send me the invoice for October?", tone: "friendly" };
    const inFlight = post(g, "/api/v1/ai/email-reply", slowBody, slowHeaders).catch((e: Error) => e);
    await Bun.sleep(800);
    await kill9(g);
    expect(await inFlight).toBeInstanceOf(Error);

    g = await start();
    const again = await post(g, "/api/v1/ai/email-reply", slowBody, slowHeaders);
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    const usage = await fetch(`${g.url}/api/v1/account/usage`, { headers: { "x-api-key": created.key } });
    const figures = ((await usage.json()) as { data: { result: Record<string, number> } }).data.result;
    expect(figures).toMatchObject({ requests: 2, balance: 10 - 1 - 2 });
    await kill9(g);
  }, 60_000);

  test("killed after its charge committed and before its answer was kept: the retry is answered, uncharged", async () => {
    const created = JSON.parse(cli(["keys", "create", "--label", "window", "--credits", "10", "--json"], env));
    const h = { "x-api-key": created.key, "idempotency-key": "window-1" };
    const body = { text: "The delivery was late and the box was damaged." };

    const a = await start();
    const first = await post(a, "/api/v1/ai/sentiment-analysis", body, h);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.meta.credits_deducted).toBe(1);
    await kill9(a);

    // The state a kill -9 in that window leaves, built deterministically: the charge is in the
    // ledger under the call's request id, and the record is still in flight, owned by the dead
    // process, its lease running (only the dead pid frees it), no answer kept.
    const db = new Database(env.TEXTAI_DB);
    const row = db.query("SELECT request_ids FROM idempotency_keys WHERE key = ?").get("window-1") as {
      request_ids: string;
    };
    expect(JSON.parse(row.request_ids)).toEqual([first.json.request_id]);
    db.query(
      "UPDATE idempotency_keys SET status = 'in_flight', owner = ?, lease_until = ?, response_status = NULL, response_body = NULL, response_headers = NULL WHERE key = ?",
    ).run(`${hostname()}|${a.proc.pid}|dead`, Date.now() + 60_000, "window-1");
    db.close();

    const b = await start();
    const retry = await post(b, "/api/v1/ai/sentiment-analysis", body, h);
    expect(retry.status, JSON.stringify(retry.json)).toBe(200);
    // run again (no answer was kept), saying which earlier request's charge paid for it
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(retry.headers.get("idempotent-recovered")).toBe(first.json.request_id);
    expect(retry.json.data).toEqual(first.json.data);
    expect(retry.json.meta).toMatchObject({ credits_deducted: 0, credits_remaining: 9 });

    // its answer is kept now: a further repeat replays it, still charged once
    const again = await post(b, "/api/v1/ai/sentiment-analysis", body, h);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.meta).toMatchObject({ credits_deducted: 0, credits_remaining: 9 });
    const usage = await fetch(`${b.url}/api/v1/account/usage`, { headers: { "x-api-key": created.key } });
    const figures = ((await usage.json()) as { data: { result: Record<string, number> } }).data.result;
    expect(figures).toMatchObject({ requests: 1, credits_used: 1, balance: 9 });
    await kill9(b);
  }, 60_000);

  test("a call that outlives its lease while a retry takes its key over is charged once: the retry pays, the late call answers free", async () => {
    const created = JSON.parse(cli(["keys", "create", "--label", "overrun", "--credits", "10", "--json"], env));
    const h = { "x-api-key": created.key, "idempotency-key": "overrun-1" };
    const body = { email_text: "Please confirm my booking for Friday.", tone: "formal" };
    const g = await start();
    // the mock answers email-reply after 3 s; meanwhile the call's record is found in flight
    const late = post(g, "/api/v1/ai/email-reply", body, h);
    const db = new Database(env.TEXTAI_DB);
    const record = () =>
      db.query("SELECT request_ids FROM idempotency_keys WHERE key = ?").get("overrun-1") as { request_ids: string } | null;
    for (let i = 0; i < 100 && !record(); i++) await Bun.sleep(20);
    const [lateId] = JSON.parse(record()!.request_ids) as string[];
    // The state a stall past the lease leaves (an event loop or a disk that froze for longer than
    // the request timeout + 5 s), built deterministically: the lease has ended, the call runs on.
    db.query("UPDATE idempotency_keys SET lease_until = 0 WHERE key = ?").run("overrun-1");
    db.close();

    const retry = post(g, "/api/v1/ai/email-reply", body, h);
    const [a, b] = await Promise.all([late, retry]);
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(b.status, JSON.stringify(b.json)).toBe(200);
    expect(a.json.request_id).toBe(lateId);
    // the retry found the late call uncharged and voided its charge before it landed
    expect(a.headers.get("idempotent-superseded")).toBe("true");
    expect(a.json.meta.credits_deducted).toBe(0);
    expect(b.headers.get("idempotent-superseded")).toBeNull();
    expect(b.json.meta.credits_deducted).toBe(2);
    const usage = await fetch(`${g.url}/api/v1/account/usage`, { headers: { "x-api-key": created.key } });
    const figures = ((await usage.json()) as { data: { result: Record<string, number> } }).data.result;
    expect(figures).toMatchObject({ requests: 1, credits_used: 2, balance: 8 });
    await kill9(g);
  }, 60_000);
});
