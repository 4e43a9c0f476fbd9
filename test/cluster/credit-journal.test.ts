/**
 * The node-local credit journal (docs/many-nodes.md#credit-journal), with real gateway processes
 * (`bun src/cli.ts serve`) on a fresh PostgreSQL database and prefix-scoped Redis keys:
 *  (a) two nodes drain a hot account to exactly 0 with the journal on: ledger = answers;
 *  (b) kill -9 of a node with unshipped journal entries under load: the other node can spend at
 *      most the balance less the dead node's allowance X until it restarts on the same journal;
 *      then the balance is exact (every answered call charged once, none twice), never below 0;
 *  (c) a node cut off from PostgreSQL (a TCP proxy): its lease less what was shipped less X comes
 *      back within the lease's lifetime; X once it reconnects and ships;
 *  (d) `textai credits journal status | ship FILE | forfeit --node ID`, and their refusals;
 *  (e) a node killed between PostgreSQL's commit of a ship and its local delete reships at start:
 *      nothing is applied twice.
 * Needs 127.0.0.1:5432 and :6379; skips loudly without them, fails under CI.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { SQL } from "bun";
import { sharedServersUp } from "../helpers/shared-servers";
import { ADMIN, admin, chat, type Node, newKey, startSimCluster } from "./nodes";
import { TcpProxy } from "./tcp-proxy";

const shared = await sharedServersUp("the credit journal tests");
const ROOT = join(import.meta.dir, "../..");

/** A lease lives 2 s (the request timeout): a dead node's lease lapses within it. */
const LEASE_MS = 2000;

type Sim = Awaited<ReturnType<typeof startSimCluster>>;

/** What a load on one node got: the request ids of its 200 answers, and counts of the rest. */
interface Outcome {
  answered: string[];
  refused: number;
  failed: Record<string, number>;
}

/** `workers` calls at a time on `node` until `stop()`; a 402 waits 100 ms (credits held elsewhere come back). */
async function load(node: Node, key: string, workers: number, stop: () => boolean, out: Outcome): Promise<void> {
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!stop()) {
        try {
          const r = await chat(node, key, `journal ${crypto.randomUUID()}`, { "cache-control": "no-cache" });
          if (r.status === 200) out.answered.push(r.headers.get("x-request-id") as string);
          else if (r.status === 402) {
            out.refused++;
            await Bun.sleep(100);
          } else {
            out.failed[r.status] = (out.failed[r.status] ?? 0) + 1;
            await Bun.sleep(20);
          }
        } catch {
          // the node is gone (killed): no answer
          out.failed.none = (out.failed.none ?? 0) + 1;
          await Bun.sleep(20);
        }
      }
    }),
  );
}

const outcome = (): Outcome => ({ answered: [], refused: 0, failed: {} });

/** The account's charges in the ledger: request id -> how many rows, and their credits. */
async function charges(pg: SQL, accountId: string) {
  const rows =
    (await pg`SELECT request_id, (-amount)::float8 AS n FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`) as {
      request_id: string;
      n: number;
    }[];
  const byId = new Map<string, number>();
  let credits = 0;
  for (const r of rows) {
    byId.set(r.request_id, (byId.get(r.request_id) ?? 0) + 1);
    credits += Number(r.n);
  }
  return { rows: rows.length, byId, credits, twice: [...byId.values()].filter((n) => n > 1).length };
}

/** Every answered call is in the ledger exactly once, and nothing is there twice. */
function everyAnswerChargedOnce(led: Awaited<ReturnType<typeof charges>>, answered: string[]): void {
  expect(led.twice).toBe(0);
  expect(answered.filter((id) => led.byId.get(id) !== 1)).toEqual([]);
}

async function balance(pg: SQL, accountId: string): Promise<number> {
  const [a] = await pg`SELECT balance::float8 AS b FROM accounts WHERE id = ${accountId}`;
  return Number(a.b);
}

/** Live holds on the account, and those of `node`'s allowances (rows that never expire by time). */
async function holds(pg: SQL, accountId: string, node: string) {
  const [h] = await pg`SELECT coalesce(sum(amount), 0)::float8 AS live,
      coalesce(sum(amount) FILTER (WHERE node_id = ${node} AND lease_of IS NOT NULL), 0)::float8 AS allowance,
      count(*) FILTER (WHERE node_id = ${node})::int AS node_rows
    FROM credit_holds WHERE account_id = ${accountId} AND expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint`;
  return { live: Number(h.live), allowance: Number(h.allowance), nodeRows: Number(h.node_rows) };
}

async function until<T>(what: string, ms: number, f: () => Promise<T | null | false>): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/**
 * The journal file's entries (its node stopped: the file is free), and of them those PostgreSQL has
 * not applied: a node killed between PostgreSQL's commit of a ship and its local delete leaves
 * entries in the file that are applied already (test (e)); its restart finds them shipped.
 */
async function journalPending(pg: SQL, path: string): Promise<{ n: number; credits: number; unapplied: number }> {
  const db = new Database(path, { readonly: true });
  try {
    const { v: journalId } = db.query("SELECT v FROM meta WHERE k = 'journal_id'").get() as { v: string };
    const [row] = await pg`SELECT shipped_seq::float8 AS seq FROM credit_journal_shipped WHERE journal_id = ${journalId}`;
    const shipped = row ? Number(row.seq) : 0;
    const r = db
      .query(
        "SELECT count(*) AS n, coalesce(sum(amount), 0) AS credits, coalesce(sum(amount) FILTER (WHERE seq > ?), 0) AS unapplied FROM entries",
      )
      .get(shipped) as { n: number; credits: number; unapplied: number };
    return r;
  } finally {
    db.close();
  }
}

async function metric(node: Node, series: string): Promise<number> {
  const text = await (await fetch(`${node.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(" ")[1]) : Number.NaN;
}

/** `textai ARGS` against the cluster's database, as an operator runs it. */
function textai(sim: Sim, args: string[]): { code: number; out: string; err: string } {
  const r = Bun.spawnSync([process.execPath, "src/cli.ts", ...args], {
    cwd: ROOT,
    env: { ...sim.cluster.env, TEXTAI_DB: join(sim.cluster.dir, "cli.db") },
  });
  return { code: r.exitCode ?? -1, out: r.stdout.toString(), err: r.stderr.toString() };
}

describe.skipIf(!shared)("the credit journal, on real nodes", () => {
  let sim: Sim;
  const spawnNode = (name: string, env: Record<string, string> = {}) =>
    sim.cluster.spawn({
      TEXTAI_NODE_ID: name,
      TEXTAI_DB: join(sim.cluster.dir, `${name}.db`),
      TEXTAI_CREDIT_JOURNAL: "true",
      ...env,
    });
  const journalOf = (name: string) => join(sim.cluster.dir, `credit-journal-${name}.sqlite`);

  beforeAll(async () => {
    sim = await startSimCluster({ n: 0, latencyMs: 2, configExtra: `\n[limits]\nrequest_timeout_ms = ${LEASE_MS}\n` });
  });
  afterAll(async () => {
    await sim?.close();
  });

  test("(a) two nodes drain a hot account to exactly 0 with the journal on: every answer charged once, nothing else", async () => {
    const a = await spawnNode("drain-a");
    const b = await spawnNode("drain-b");
    const { key, accountId } = await newKey(a, 3000);
    const out = outcome();
    let refusedInARow = 0;
    const outs = [outcome(), outcome()];
    // each node keeps 8 calls going until the account has refused 40 calls in a row (4 s of 402s)
    const drive = async (node: Node, o: Outcome) => {
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (refusedInARow < 40) {
            const r = await chat(node, key, `drain ${crypto.randomUUID()}`, { "cache-control": "no-cache" });
            if (r.status === 200) {
              o.answered.push(r.headers.get("x-request-id") as string);
              refusedInARow = 0;
            } else if (r.status === 402) {
              o.refused++;
              refusedInARow++;
              await Bun.sleep(100);
            } else throw new Error(`unexpected ${r.status}: ${r.text}`);
          }
        }),
      );
    };
    await Promise.all([drive(a, outs[0] as Outcome), drive(b, outs[1] as Outcome)]);
    out.answered = [...(outs[0] as Outcome).answered, ...(outs[1] as Outcome).answered];
    const ships = (await metric(a, "textai_credit_journal_ships_total")) + (await metric(b, "textai_credit_journal_ships_total"));
    console.log(
      `3000 credits over 2 nodes: ${out.answered.length} answered (${outs[0]?.answered.length} + ${outs[1]?.answered.length}), ${ships} journal ships`,
    );
    expect(ships).toBeGreaterThan(0);
    const led = await charges(sim.pg, accountId);
    everyAnswerChargedOnce(led, out.answered);
    expect(led.rows).toBe(out.answered.length);
    expect(led.credits).toBe(3000);
    expect(await balance(sim.pg, accountId)).toBe(0);
    for (const n of [a, b]) n.proc.kill("SIGTERM");
    await Promise.all([a.proc.exited, b.proc.exited]);
    expect(await balance(sim.pg, accountId)).toBe(0);
    expect((await holds(sim.pg, accountId, "drain-a")).live).toBe(0);
  }, 90_000);

  test("(b) kill -9 with unshipped entries: the other node spends at most balance - X until the node restarts on its journal; then exact", async () => {
    // node A ships every 3 s (sooner at half its allowance): entries are pending when it dies
    const a = await spawnNode("kill-a", { TEXTAI_CREDIT_JOURNAL_SHIP_MS: "3000" });
    const b = await spawnNode("kill-b");
    const start = 1_000_000;
    const { key, accountId } = await newKey(b, start);
    const outA = outcome();
    const outB = outcome();
    let stopA = false;
    let stopB = false;
    const runA = load(a, key, 8, () => stopA, outA);
    const runB = load(b, key, 4, () => stopB, outB);
    // A under load, with a lease and entries pending in its journal
    await until(
      "node A's journal entries pending",
      20_000,
      async () => (await metric(a, 'textai_credit_journal{what="pending"}')) >= 20,
    );
    await Bun.sleep(300);
    a.proc.kill(9);
    await a.proc.exited;
    stopA = true;
    await runA;
    await Bun.sleep(500);
    stopB = true;
    await runB;
    const pending = await journalPending(sim.pg, journalOf("kill-a"));
    console.log(
      `node A killed with ${pending.n} entries (${pending.credits} credits) in its journal, ${pending.unapplied} credits of them not applied in PostgreSQL; A answered ${outA.answered.length}, B ${outB.answered.length}`,
    );
    expect(pending.n).toBeGreaterThan(0);
    // A's lease lapses within its lifetime, B's comes back once idle: only A's allowance X still counts
    const h = await until("only the dead node's allowance to hold the account", LEASE_MS + 5000, async () => {
      const x = await holds(sim.pg, accountId, "kill-a");
      return x.live > 0 && x.live === x.allowance ? x : null;
    });
    const X = h.allowance;
    expect(X).toBeGreaterThanOrEqual(pending.unapplied);
    const before = await balance(sim.pg, accountId);
    // spendable elsewhere: the balance less X, not a credit more (a take-back spares holds as calls do)
    const tooMuch = await admin(b, "POST", `/admin/v1/accounts/${accountId}/credits`, { amount: -(before - X + 1) });
    expect(tooMuch.status).toBe(400);
    const takeBack = await admin(b, "POST", `/admin/v1/accounts/${accountId}/credits`, { amount: -(before - X) });
    expect(takeBack.status).toBe(200);
    expect(await balance(sim.pg, accountId)).toBe(X);
    const refused = await chat(b, key, "nothing left but A's allowance", { "cache-control": "no-cache" });
    expect(refused.status).toBe(402);
    // A restarts on the same journal: ships it first, then gives its earlier run's rows back
    const again = await spawnNode("kill-a", { TEXTAI_CREDIT_JOURNAL_SHIP_MS: "3000" });
    await until(
      "node A's journal shipped and its rows given back",
      15_000,
      async () => (await holds(sim.pg, accountId, "kill-a")).nodeRows === 0,
    );
    expect(await journalPendingSafe(journalOf("kill-a"), again)).toBe(true);
    const answered = [...outA.answered, ...outB.answered];
    const led = await charges(sim.pg, accountId);
    everyAnswerChargedOnce(led, answered);
    // only calls killed between their charge and their answer's delivery are charged unseen
    expect(led.rows - answered.length).toBeGreaterThanOrEqual(0);
    expect(led.rows - answered.length).toBeLessThanOrEqual(8);
    const after = await balance(sim.pg, accountId);
    // (what PostgreSQL had applied before the kill is in `before` already)
    expect(after).toBe(X - pending.unapplied);
    expect(after).toBe(start - (before - X) - led.credits);
    expect((await holds(sim.pg, accountId, "kill-a")).live).toBe(0);
    for (const n of [again, b]) n.proc.kill("SIGTERM");
    await Promise.all([again.proc.exited, b.proc.exited]);
  }, 90_000);

  test("(c) cut off from PostgreSQL: lease - shipped - X returns within the lease's lifetime, X once the node is back and ships", async () => {
    const target = new URL(sim.cluster.env.TEXTAI_DATABASE_URL as string);
    const proxy = new TcpProxy(Number(target.port || 5432)).up();
    const via = new URL(target);
    via.hostname = "127.0.0.1";
    via.port = String(proxy.port);
    const a = await spawnNode("cut-a", { TEXTAI_DATABASE_URL: via.toString(), TEXTAI_CREDIT_JOURNAL_SHIP_MS: "3000" });
    try {
      const { key, accountId } = await newKey(a, 1_000_000);
      const out = outcome();
      let stop = false;
      const run = load(a, key, 8, () => stop, out);
      await until(
        "node A's journal entries pending",
        20_000,
        async () => (await metric(a, 'textai_credit_journal{what="pending"}')) >= 20,
      );
      const leased = await holds(sim.pg, accountId, "cut-a");
      proxy.down();
      const cutAt = performance.now();
      // its lease lapses at its expiry: what counts then is A's allowance only
      const h = await until("the lease to lapse, the allowance kept", LEASE_MS + 3000, async () => {
        const x = await holds(sim.pg, accountId, "cut-a");
        return x.live === x.allowance && x.allowance > 0 ? x : null;
      });
      const back = performance.now() - cutAt;
      console.log(
        `cut off: ${leased.live} credits held (allowance ${leased.allowance}); ${h.live} still held ${back.toFixed(0)} ms after the cut (lease ${LEASE_MS} ms)`,
      );
      expect(back).toBeLessThanOrEqual(LEASE_MS + 1000);
      expect(leased.live).toBeGreaterThan(h.live);
      const inDoubt = await metric(a, 'textai_credit_journal{what="pending_credits"}');
      expect(inDoubt).toBeGreaterThan(0);
      expect(inDoubt).toBeLessThanOrEqual(h.allowance);
      stop = true;
      await run;
      // back: the node ships what it journaled, and gives the allowance back
      proxy.up();
      await until("the allowance given back", 20_000, async () => (await holds(sim.pg, accountId, "cut-a")).live === 0);
      const led = await charges(sim.pg, accountId);
      everyAnswerChargedOnce(led, out.answered);
      expect(led.rows).toBe(out.answered.length);
      expect(await balance(sim.pg, accountId)).toBe(1_000_000 - led.credits);
      console.log(
        `after reconnecting: ${out.answered.length} answers, ${led.rows} charges, failures ${JSON.stringify(out.failed)}`,
      );
    } finally {
      proxy.up();
      a.proc.kill("SIGTERM");
      await a.proc.exited;
      proxy.down();
    }
  }, 90_000);

  test("(d) the operator's commands: status shows what is in doubt, forfeit gives it up, ship FILE applies a journal once; bad input is refused", async () => {
    const a = await spawnNode("cli-a", { TEXTAI_CREDIT_JOURNAL_SHIP_MS: "3000" });
    const { key, accountId } = await newKey(a, 1_000_000);
    const out = outcome();
    let stop = false;
    const run = load(a, key, 8, () => stop, out);
    await until(
      "node A's journal entries pending",
      20_000,
      async () => (await metric(a, 'textai_credit_journal{what="pending"}')) >= 20,
    );
    // a running node's journal is not shipped by hand
    const busy = textai(sim, ["credits", "journal", "ship", journalOf("cli-a")]);
    expect(busy.code).toBe(1);
    expect(busy.err).toContain("another process");
    a.proc.kill(9);
    await a.proc.exited;
    stop = true;
    await run;
    const pending = await journalPending(sim.pg, journalOf("cli-a"));
    expect(pending.n).toBeGreaterThan(0);
    const h = await until("the lease to lapse", LEASE_MS + 3000, async () => {
      const x = await holds(sim.pg, accountId, "cli-a");
      return x.live === x.allowance && x.allowance > 0 ? x : null;
    });
    const status = textai(sim, ["credits", "journal", "status", "--node", "cli-a", "--json"]);
    expect(status.code, status.err).toBe(0);
    const [row] = JSON.parse(status.out);
    expect(row).toMatchObject({ node_id: "cli-a", live_leases: 0, in_doubt_credits: h.allowance });

    // forfeit: the allowance is released at once, with an audit entry
    const forfeit = textai(sim, ["credits", "journal", "forfeit", "--node", "cli-a"]);
    expect(forfeit.code, forfeit.err).toBe(0);
    expect(forfeit.out).toContain(`Forfeited ${h.allowance} credits in doubt of node cli-a`);
    expect((await holds(sim.pg, accountId, "cli-a")).live).toBe(0);
    const [audit] = await sim.pg`SELECT action, target_id FROM audit_log WHERE action = 'credits.journal.forfeit'`;
    expect(audit).toMatchObject({ action: "credits.journal.forfeit", target_id: "cli-a" });
    const nothing = textai(sim, ["credits", "journal", "forfeit", "--node", "cli-a"]);
    expect(nothing.out).toContain("has no credits in doubt");

    // ship FILE afterwards: the balance still covers them, so they are charged, once
    const ship = textai(sim, ["credits", "journal", "ship", journalOf("cli-a"), "--json"]);
    expect(ship.code, ship.err).toBe(0);
    expect(JSON.parse(ship.out)).toMatchObject({
      node_id: "cli-a",
      entries: pending.n,
      credits: pending.credits,
      not_covered: 0,
    });
    expect((await journalPending(sim.pg, journalOf("cli-a"))).n).toBe(0);
    const led = await charges(sim.pg, accountId);
    everyAnswerChargedOnce(led, out.answered);
    expect(led.rows - out.answered.length).toBeLessThanOrEqual(8);
    expect(await balance(sim.pg, accountId)).toBe(1_000_000 - led.credits);
    // shipped again: every entry was applied before, nothing is
    const db = new Database(journalOf("cli-a"));
    db.query(
      "INSERT INTO entries (seq, account, amount, lease, allowance, key, fn, rid, prov, cached, at) VALUES (1, ?, 1, ?, ?, 'k', 'chat-completions', 'req_again', NULL, 0, 1)",
    ).run(accountId, crypto.randomUUID(), crypto.randomUUID());
    db.close();
    const again = textai(sim, ["credits", "journal", "ship", journalOf("cli-a"), "--json"]);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ entries: 1, applied_before: 1 });
    expect((await charges(sim.pg, accountId)).rows).toBe(led.rows);

    // refusals
    const noNode = textai(sim, ["credits", "journal", "forfeit"]);
    expect(noNode.code).toBe(2);
    expect(noNode.err).toContain("--node is required");
    const badNode = textai(sim, ["credits", "journal", "forfeit", "--node", "not a node!"]);
    expect(badNode.code).toBe(2);
    expect(badNode.err).toContain("--node must be a node id");
    const noFile = textai(sim, ["credits", "journal", "ship", join(sim.cluster.dir, "absent.sqlite")]);
    expect(noFile.code).toBe(1);
    expect(noFile.err).toContain("no such file");
    const notJournal = textai(sim, ["credits", "journal", "ship", join(sim.cluster.dir, "cli-a.db")]);
    expect(notJournal.code).toBe(1);
    const unknown = textai(sim, ["credits", "journal", "vacuum"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("status, ship FILE, forfeit --node ID");
  }, 90_000);

  test("(e) killed between PostgreSQL's commit of a ship and its local delete: the restart reships, nothing is applied twice", async () => {
    const a = await spawnNode("crash-a", { TEXTAI_TEST_JOURNAL_CRASH_AFTER_SHIP: "1", TEXTAI_CREDIT_JOURNAL_SHIP_MS: "200" });
    const { key, accountId } = await newKey(a, 1_000_000);
    const out = outcome();
    let stop = false;
    const run = load(a, key, 8, () => stop, out);
    await a.proc.exited;
    stop = true;
    await run;
    const [shipped] = await sim.pg`SELECT shipped_seq::int AS seq FROM credit_journal_shipped WHERE node_id = 'crash-a'`;
    const pending = await journalPending(sim.pg, journalOf("crash-a"));
    const before = await charges(sim.pg, accountId);
    console.log(
      `died after PostgreSQL committed entries up to ${shipped?.seq}: ${pending.n} entries still in the journal, ${before.rows} charges in the ledger, ${out.answered.length} answers`,
    );
    // the ship committed, and its entries are still in the file
    expect(shipped?.seq).toBeGreaterThan(0);
    expect(pending.n).toBeGreaterThanOrEqual(1);
    const db = new Database(journalOf("crash-a"), { readonly: true });
    const [{ first }] = db.query("SELECT min(seq) AS first FROM entries").all() as { first: number }[];
    db.close();
    expect(first).toBeLessThanOrEqual(shipped.seq);
    const again = await spawnNode("crash-a");
    await until("the journal reshipped", 15_000, async () => journalPendingSafe(journalOf("crash-a"), again));
    await until(
      "the earlier run's rows given back",
      15_000,
      async () => (await holds(sim.pg, accountId, "crash-a")).nodeRows === 0,
    );
    const led = await charges(sim.pg, accountId);
    everyAnswerChargedOnce(led, out.answered);
    expect(led.rows - out.answered.length).toBeLessThanOrEqual(8);
    expect(await balance(sim.pg, accountId)).toBe(1_000_000 - led.credits);
    again.proc.kill("SIGTERM");
    await again.proc.exited;
  }, 90_000);
});

/** Whether a running node's journal has nothing pending, by its /metrics (its file is locked while it runs). */
async function journalPendingSafe(_path: string, node: Node): Promise<boolean> {
  return (
    (await metric(node, 'textai_credit_journal{what="pending"}')) === 0 &&
    (await metric(node, "textai_credit_journal_ships_total")) > 0
  );
}
