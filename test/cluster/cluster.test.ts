/**
 * Three gateway processes on one PostgreSQL database and one Redis db act as one gateway
 * (CONTRACT section 11). Needs 127.0.0.1:5432 and :6379; skips loudly without them, fails under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { SQL } from "bun";
import { redisLinkTo, sharedServersUp } from "../helpers/shared-servers";
import type { Upstream } from "../helpers/upstream";
import { HELP_CENTER } from "../knowledge/corpus";
import { ADMIN, admin, balanceOn, type Cluster, chat, clusterConfig, keyCall, newKey, startSimCluster } from "./nodes";

const shared = await sharedServersUp("the three-node cluster tests");

let sim: Upstream;
let pg: SQL;
let cluster: Cluster;
let redisUrl: string;
let redisPrefix: string;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (!shared) return;
  ({ sim, pg, cluster, redisUrl, redisPrefix, close } = await startSimCluster({ n: 3, latencyMs: 30 }));
}, 60_000);

afterAll(async () => {
  await close?.();
}, 30_000);

const show = (r: { status: number; text: string }) => `${r.status} ${r.text.slice(0, 300)}`;

describe.skipIf(!shared)("three nodes, one PostgreSQL, one Redis", () => {
  test("a key revoked on node 1 is refused by nodes 2 and 3 within one second", async () => {
    const [n1, n2, n3] = cluster.nodes;
    const { key, id } = await newKey(n1, 100);
    // the key is in nodes 2 and 3's key caches: without a broadcast they would accept it for up to 1 s
    for (const n of [n2, n3]) expect((await fetch(`${n.url}/v1/models`, { headers: { "x-api-key": key } })).status).toBe(200);
    const refusedAt = (node: typeof n2) =>
      (async () => {
        for (;;) {
          const res = await fetch(`${node.url}/v1/models`, { headers: { "x-api-key": key } });
          if (res.status === 401) return performance.now();
          await Bun.sleep(2);
        }
      })();
    const t0 = performance.now();
    const watching = [refusedAt(n2), refusedAt(n3)];
    const revoked = await admin(n1, "DELETE", `/admin/v1/keys/${id}`);
    const t1 = performance.now();
    expect(revoked.status).toBe(200);
    const times = await Promise.all(watching);
    const worst = Math.max(...times) - t1;
    console.log(
      `revocation: refused on nodes 2 and 3 ${Math.max(0, worst).toFixed(1)} ms after node 1 answered the revocation (${(Math.max(...times) - t0).toFixed(1)} ms after it was sent)`,
    );
    expect(worst).toBeLessThan(1000);
  });

  test("60 concurrent 1-credit calls over three nodes on 30 credits: exactly 30 succeed, 30 refused before any provider call, balance 0 everywhere, 30 ledger rows", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 30);
    sim.reset();
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => chat(cluster.nodes[i % 3], key, `spend ${i}`, { "cache-control": "no-cache" })),
    );
    const ok = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 402);
    expect(ok, results.map(show).join("\n")).toBe(30);
    expect(refused.length).toBe(30);
    // holds are shared in PostgreSQL: a node admits a call only if the balance minus every node's
    // holds covers it, so the 30 refusals came before any provider was called
    console.log(`60 calls on 30 credits over three nodes: ${sim.calls.count} provider calls for ${ok} answers`);
    expect(sim.calls.count).toBe(30);
    for (const r of refused) expect(r.text).toContain("insufficient credits: a call of chat-completions holds up to 1 credit ");
    for (const n of cluster.nodes) expect(await balanceOn(n, key)).toBe(0);
    const [rows] =
      await pg`SELECT count(*)::int AS n, coalesce(sum(amount), 0)::int AS total FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`;
    expect(rows).toEqual({ n: 30, total: -30 });
    const [holds] = await pg`SELECT count(*)::int AS n FROM credit_holds WHERE account_id = ${accountId}`;
    expect(holds.n).toBe(0);
  });

  test("kill -9 of a node holding a lease (issue 40): every 200 it sent is charged, unseen charges only for calls in flight; its lease stops counting within one lease", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 5000);
    // the victim's request timeout (2 s) is its lease's lifetime
    const config = join(cluster.dir, "short-lease-kill.toml");
    await Bun.write(config, `${clusterConfig(`${sim.url}/v1`)}\n[limits]\nrequest_timeout_ms = 2000\n`);
    const victim = await cluster.spawn({ TEXTAI_CONFIG: config });
    sim.reset();
    const leaseRow = async () => {
      const [row] = await pg`SELECT count(*)::int AS n, coalesce(max(amount), 0)::int AS amount FROM credit_holds
        WHERE account_id = ${accountId} AND amount > 1 AND expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint`;
      return row as { n: number; amount: number };
    };
    // a hot account on the victim: 20 calls at a time until it holds a lease
    let ok = 0;
    let i = 0;
    for (let round = 0; round < 20 && (await leaseRow()).n === 0; round++) {
      const out = await Promise.all(
        Array.from({ length: 20 }, () => chat(victim, key, `hot ${i++}`, { "cache-control": "no-cache" })),
      );
      ok += out.filter((r) => r.status === 200).length;
      expect(out.every((r) => r.status === 200)).toBe(true);
    }
    const lease = await leaseRow();
    expect(lease.n).toBe(1);
    // the node's /metrics say so
    const metrics = await (await fetch(`${victim.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    expect(metrics).toContain('textai_credit_leases{what="count"} 1');
    expect(Number(metrics.match(/textai_credit_leases_total\{what="granted"\} (\d+)/)?.[1] ?? 0)).toBeGreaterThan(0);
    // more calls admitted against it, 20 at a time, then the kill mid-load once 10 of them were answered
    let leasedOk = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const r = await chat(victim, key, `leased ${i++}`, { "cache-control": "no-cache" }).catch(() => null);
        if (r?.status === 200 && !killed) leasedOk++;
        else if (r?.status === 200) ok++;
      }
    };
    const load = Array.from({ length: 20 }, worker);
    for (let w = 0; w < 500 && leasedOk < 10; w++) await Bun.sleep(5);
    killed = true;
    victim.proc.kill(9);
    await victim.proc.exited;
    const killedAt = performance.now();
    await Promise.all(load);
    expect(leasedOk).toBeGreaterThanOrEqual(10);
    ok += leasedOk;
    const [rows] = await pg`SELECT count(*)::int AS n FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`;
    // never an answer uncharged; charged unseen only for a call caught between its charge and its
    // answer's delivery (CONTRACT section 11): at most the 20 calls in flight at the kill
    expect(rows.n).toBeGreaterThanOrEqual(ok);
    expect(rows.n - ok).toBeLessThanOrEqual(20);
    expect(await balanceOn(cluster.nodes[1], key)).toBe(5000 - rows.n);
    // the lease still counts until its expiry, then a call on another node sweeps it away
    const [left] = await pg`SELECT (max(expires_at) - (extract(epoch from clock_timestamp()) * 1000)::bigint)::int AS last_in_ms
      FROM credit_holds WHERE account_id = ${accountId}`;
    console.log(
      `kill -9 holding a lease of ${lease.amount} credits: ${ok} answers, ${rows.n} charges; the lease runs out ${left.last_in_ms} ms after the kill was seen (lease 2000 ms)`,
    );
    expect(left.last_in_ms ?? 0).toBeLessThanOrEqual(2000);
    await Bun.sleep(Math.max(0, (left.last_in_ms ?? 0) + 100));
    const after = await chat(cluster.nodes[2], key, "after the lease", { "cache-control": "no-cache" });
    expect(after.status, show(after)).toBe(200);
    const [holds] = await pg`SELECT count(*)::int AS n FROM credit_holds WHERE account_id = ${accountId}`;
    expect(holds.n).toBe(0);
    expect(performance.now() - killedAt).toBeLessThan(2000 + 1500);
  });

  test("kill -9 of a node with calls in flight: its holds count until their lease runs out, then the account spends its whole balance", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 10);
    // the victim's request timeout (2 s) is its holds' lease
    const config = join(cluster.dir, "short-lease.toml");
    await Bun.write(config, `${clusterConfig(`${sim.url}/v1`)}\n[limits]\nrequest_timeout_ms = 2000\n`);
    const victim = await cluster.spawn({ TEXTAI_CONFIG: config });
    sim.reset();
    sim.program([{ delayMs: 30_000, times: 10 }]);
    const early: string[] = [];
    const inFlight = Array.from({ length: 10 }, (_, i) =>
      chat(victim, key, `in flight ${i}`, { "cache-control": "no-cache" }).then(
        (r) => early.push(show(r)),
        () => null,
      ),
    );
    // all ten at the provider (a call answered before the kill says why it is not)
    for (let i = 0; i < 1000 && sim.calls.count < 10; i++) await Bun.sleep(10);
    expect(sim.calls.count, early.join("\n")).toBe(10);
    const [held] =
      await pg`SELECT count(*)::int AS n, sum(amount)::int AS amount FROM credit_holds WHERE account_id = ${accountId}`;
    expect(held).toEqual({ n: 10, amount: 10 });
    // another node sees the victim's holds: refused before any provider call
    const before = await chat(cluster.nodes[1], key, "while held", { "cache-control": "no-cache" });
    expect(before.status, show(before)).toBe(402);
    victim.proc.kill(9);
    await victim.proc.exited;
    await Promise.all(inFlight);
    // nobody released them (the node is gone), and they still count...
    const [left] = await pg`SELECT count(*)::int AS n,
        (max(expires_at) - (extract(epoch from clock_timestamp()) * 1000)::bigint)::int AS last_in_ms
      FROM credit_holds WHERE account_id = ${accountId}`;
    expect(left.n).toBe(10);
    const after = await chat(cluster.nodes[2], key, "after the kill", { "cache-control": "no-cache" });
    expect(after.status, show(after)).toBe(402);
    // ...until the last runs out, at most one lease after the kill (renewed until then, never past)
    console.log(
      `kill -9 with 10 calls in flight: the last of their holds (lease 2000 ms) ran out ${left.last_in_ms} ms after the kill was seen`,
    );
    expect(left.last_in_ms).toBeLessThanOrEqual(2000);
    await Bun.sleep(left.last_in_ms + 100);
    // the whole balance is spendable again: 10 answers of 11 calls
    const spent = await Promise.all(
      Array.from({ length: 11 }, (_, i) => chat(cluster.nodes[i % 3], key, `spend ${i}`, { "cache-control": "no-cache" })),
    );
    expect(spent.filter((r) => r.status === 200).length, spent.map(show).join("\n")).toBe(10);
    expect(spent.filter((r) => r.status === 402).length).toBe(1);
    expect(await balanceOn(cluster.nodes[0], key)).toBe(0);
    const [rows] = await pg`SELECT count(*)::int AS n FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`;
    expect(rows.n).toBe(10);
    // the provider saw the 10 killed calls and the 10 charged ones, no refused call
    expect(sim.calls.count).toBe(20);
  }, 30_000);

  test("a 5/min limit admits exactly 5 of 15 calls spread over three nodes", async () => {
    const { key } = await newKey(cluster.nodes[0], 100, "five");
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) => chat(cluster.nodes[i % 3], key, `limit ${i}`, { "cache-control": "no-cache" })),
    );
    expect(results.filter((r) => r.status === 200).length, results.map(show).join("\n")).toBe(5);
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBe(10);
    expect(Number(limited[0].headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  test("an answer computed on node 1 is a HIT on node 2, with one upstream call", async () => {
    const { key } = await newKey(cluster.nodes[0], 100);
    const before = sim.calls.count;
    const first = await chat(cluster.nodes[0], key, "cache me across nodes");
    expect(first.status, show(first)).toBe(200);
    expect(first.headers.get("x-cache")).toBe("MISS");
    const second = await chat(cluster.nodes[1], key, "cache me across nodes");
    expect(second.status, show(second)).toBe(200);
    expect(second.headers.get("x-cache")).toBe("HIT");
    expect(JSON.parse(second.text).choices).toEqual(JSON.parse(first.text).choices);
    expect(sim.calls.count - before).toBe(1);
    // another account never sees it
    const other = await newKey(cluster.nodes[0], 100);
    expect((await chat(cluster.nodes[2], other.key, "cache me across nodes")).headers.get("x-cache")).toBe("MISS");
  });

  test("an Idempotency-Key replayed on another node gets the stored answer, charged once", async () => {
    const { key } = await newKey(cluster.nodes[0], 10);
    const call = (i: number) =>
      fetch(`${cluster.nodes[i].url}/api/v1/ai/sentiment-analysis`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": key,
          "idempotency-key": "order-42",
          "cache-control": "no-cache",
        },
        body: JSON.stringify({ text: "The delivery was quick and the staff were lovely." }),
      });
    const first = await call(0);
    const firstBody = (await first.json()) as { data: { result: unknown }; meta: { credits_deducted: number } };
    expect(first.status).toBe(200);
    const again = await call(1);
    const againBody = (await again.json()) as { data: { result: unknown }; meta: { credits_deducted: number } };
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(againBody.data.result).toEqual(firstBody.data.result);
    expect(againBody.meta.credits_deducted).toBe(0);
    for (const n of cluster.nodes) expect(await balanceOn(n, key)).toBe(10 - firstBody.meta.credits_deducted);
  });

  test("a node killed after its charge committed and before its answer was kept: the retry on another node is answered, uncharged", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 10);
    const call = (url: string) =>
      fetch(`${url}/api/v1/ai/sentiment-analysis`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key, "idempotency-key": "window-7" },
        body: JSON.stringify({ text: "The parcel came two weeks late." }),
      });
    const victim = await cluster.spawn();
    const first = await call(victim.url);
    const firstBody = (await first.json()) as { request_id: string; data: unknown; meta: { credits_deducted: number } };
    expect(first.status).toBe(200);
    expect(firstBody.meta.credits_deducted).toBe(1);
    victim.proc.kill(9);
    await victim.proc.exited;

    // The state a kill -9 in that window leaves, built deterministically: the charge is in the
    // ledger under the call's request id; the record is in flight, its lease (the only thing
    // another host can go by) run out, no answer kept.
    const link = redisLinkTo(redisUrl, redisPrefix);
    expect(await link.ready()).toBe(true);
    const record = link.accountKey(accountId, "idem", new Bun.CryptoHasher("sha256").update("window-7").digest("hex"));
    const rids = await link.eval<string>(
      "redis.call('HDEL', KEYS[1], 'status_code', 'body', 'headers'); redis.call('HSET', KEYS[1], 'status', 'in_flight', 'lease', '0'); return redis.call('HGET', KEYS[1], 'rids')",
      [record],
      [],
    );
    await link.close();
    expect(JSON.parse(rids)).toEqual([firstBody.request_id]);

    const retry = await call(cluster.nodes[1].url);
    const retryBody = (await retry.json()) as { data: unknown; meta: { credits_deducted: number; credits_remaining: number } };
    expect(retry.status, JSON.stringify(retryBody)).toBe(200);
    expect(retry.headers.get("idempotent-recovered")).toBe(firstBody.request_id);
    expect(retryBody.data).toEqual(firstBody.data);
    expect(retryBody.meta).toMatchObject({ credits_deducted: 0, credits_remaining: 9 });
    const again = await call(cluster.nodes[2].url);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    for (const n of cluster.nodes) expect(await balanceOn(n, key)).toBe(9);
    const [row] = await pg`SELECT count(*)::int AS n FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`;
    expect(row.n).toBe(1);
  }, 30_000);

  test("a call that outlives its lease while a retry on another node takes its key over is charged once: the retry pays, the late call answers free", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 10);
    const call = (url: string) =>
      fetch(`${url}/api/v1/ai/email-reply`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": key,
          "idempotency-key": "overrun-9",
          "cache-control": "no-cache",
        },
        body: JSON.stringify({ email_text: "Can you confirm my booking for Friday?", tone: "formal" }),
      });
    sim.reset();
    sim.program([{ delayMs: 1500 }]);
    const late = call(cluster.nodes[0].url);
    while (sim.calls.count < 1) await Bun.sleep(10);
    // The state a stall past the lease leaves (a process or disk frozen for longer than the request
    // timeout + 5 s), built deterministically: the record's lease has ended while the call runs on.
    const link = redisLinkTo(redisUrl, redisPrefix);
    expect(await link.ready()).toBe(true);
    const record = link.accountKey(accountId, "idem", new Bun.CryptoHasher("sha256").update("overrun-9").digest("hex"));
    const rids = await link.eval<string>(
      "redis.call('HSET', KEYS[1], 'lease', '0'); return redis.call('HGET', KEYS[1], 'rids')",
      [record],
      [],
    );
    await link.close();
    const [lateId] = JSON.parse(rids) as string[];

    const retry = await call(cluster.nodes[1].url);
    const retryBody = (await retry.json()) as { request_id: string; meta: { credits_deducted: number } };
    expect(retry.status, JSON.stringify(retryBody)).toBe(200);
    const lateRes = await late;
    const lateBody = (await lateRes.json()) as { request_id: string; meta: { credits_deducted: number } };
    expect(lateRes.status, JSON.stringify(lateBody)).toBe(200);
    expect(lateBody.request_id).toBe(lateId);
    // the retry found the late call uncharged and voided its charge before it landed
    expect(lateRes.headers.get("idempotent-superseded")).toBe("true");
    expect(lateBody.meta.credits_deducted).toBe(0);
    expect(retryBody.meta.credits_deducted).toBeGreaterThan(0);
    const cost = retryBody.meta.credits_deducted;
    for (const n of cluster.nodes) expect(await balanceOn(n, key)).toBe(10 - cost);
    const [row] = await pg`SELECT count(*)::int AS n FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`;
    expect(row.n).toBe(1);
    const [fence] = await pg`SELECT state FROM idempotent_charges WHERE request_id = ${lateId}`;
    expect(fence.state).toBe("void");
  }, 30_000);

  test("usage is the same on every node", async () => {
    const { key } = await newKey(cluster.nodes[0], 50);
    for (let i = 0; i < 6; i++) expect((await chat(cluster.nodes[i % 3], key, `usage ${i}`)).status).toBe(200);
    const views = await Promise.all(
      cluster.nodes.map(async (n) => {
        const res = await fetch(`${n.url}/api/v1/account/usage`, { headers: { "x-api-key": key } });
        const r = ((await res.json()) as { data: { result: { requests: number; credits_used: number; balance: number } } }).data
          .result;
        return { requests: r.requests, credits_used: r.credits_used, balance: r.balance };
      }),
    );
    expect(views).toEqual([0, 1, 2].map(() => ({ requests: 6, credits_used: 6, balance: 44 })));
  });

  test("kill -9 of one node mid-load: the charges in the ledger are the 200s clients received", async () => {
    const { key, accountId } = await newKey(cluster.nodes[0], 100_000);
    const victim = await cluster.spawn();
    const targets = [cluster.nodes[0], cluster.nodes[1], victim];
    let ok = 0;
    let failed = 0;
    let stop = false;
    let n = 0;
    // calls sent to the victim and not yet answered: at the kill, the most it can have charged unseen
    let onVictim = 0;
    const worker = async (w: number) => {
      while (!stop) {
        const node = targets[(w + n++) % 3];
        if (node === victim) onVictim++;
        try {
          const r = await chat(node, key, `load ${w} ${n}`, { "cache-control": "no-cache" });
          if (r.status === 200) ok++;
          else failed++;
        } catch {
          failed++; // the killed node's connections
        } finally {
          if (node === victim) onVictim--;
        }
      }
    };
    const workers = Array.from({ length: 12 }, (_, w) => worker(w));
    await Bun.sleep(1500);
    const inFlightAtKill = onVictim;
    victim.proc.kill(9);
    await Bun.sleep(1000);
    stop = true;
    await Promise.all(workers);
    await Bun.sleep(200);
    const [row] = await pg`SELECT count(*)::int AS n FROM ledger WHERE account_id = ${accountId} AND kind = 'charge'`;
    console.log(
      `kill -9 mid-load: ${ok} answers received (200), ${failed} failed, ${row.n} charges in the ledger; ${inFlightAtKill} calls in flight on the killed node`,
    );
    expect(ok).toBeGreaterThan(20);
    // never an answer uncharged; charged unseen only for a call on the killed node caught between
    // its commit and its answer's delivery (CONTRACT 11): at most the calls it had in flight when
    // killed (12 workers over 3 nodes: about 4, but the rotation does not keep it at 4 exactly)
    expect(row.n).toBeGreaterThanOrEqual(ok);
    expect(row.n - ok).toBeLessThanOrEqual(inFlightAtKill);
  }, 30_000);

  test("every CLI verb works against the cluster's PostgreSQL with the same variables", async () => {
    const cli = (...args: string[]) => {
      const p = Bun.spawnSync([process.execPath, "src/cli.ts", ...args], { cwd: `${import.meta.dir}/../..`, env: cluster.env });
      return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
    };
    const created = cli("keys", "create", "--label", "from-cli", "--credits", "7", "--plan", "pro", "--json");
    expect(created.code, created.err).toBe(0);
    const k = JSON.parse(created.out) as { id: string; key: string; account_id: string };
    expect((await chat(cluster.nodes[2], k.key, "from the cli")).status).toBe(200);
    expect(cli("credits", "grant", "--account", k.account_id, "--amount", "5").out).toContain("balance 11");
    const usage = JSON.parse(cli("usage", "--account", k.account_id, "--json").out) as { requests: number; balance: number };
    expect(usage).toMatchObject({ requests: 1, balance: 11 });
    const list = JSON.parse(cli("keys", "list", "--account", k.account_id, "--json").out) as { id: string }[];
    expect(list.map((x) => x.id)).toEqual([k.id]);
    expect(list[0]).not.toHaveProperty("key");
    expect(cli("keys", "revoke", k.id).code).toBe(0);
    // broadcast by the CLI itself: refused at once, well within the key cache's 1 s
    const t0 = performance.now();
    for (const n of cluster.nodes) {
      const res = await chat(n, k.key, "after the cli revoked it");
      expect(res.status).toBe(401);
    }
    expect(performance.now() - t0).toBeLessThan(1000);
  }, 30_000); // five CLI processes one after another, each connecting to PostgreSQL and Redis: past 5 s on a loaded CI machine

  test("a knowledge base made on node 1 is searched on node 2; a chatbot and an FAQ collection answer on other nodes", async () => {
    const [n1, n2, n3] = cluster.nodes;
    const { key } = await newKey(n1, 100);
    const call = (node: typeof n1, method: string, path: string, body?: unknown) => keyCall(node, key, method, path, body);
    const docs = HELP_CENTER.documents.slice(0, 20);
    const kb = await call(n1, "POST", "/api/v1/knowledge-bases", { name: "help" });
    expect(kb.status, show(kb)).toBe(201);
    const added = await call(n1, "POST", `/api/v1/knowledge-bases/${kb.result.id}/documents`, {
      documents: docs.map(({ title, content, metadata }) => ({ title, content, metadata })),
    });
    expect(added.status, show(added)).toBe(201);

    // the fixture's queries whose answer is among these documents rank alike on every node
    const queries = HELP_CENTER.queries.filter((q) => docs.some((d) => d.id === q.expected)).slice(0, 5);
    expect(queries.length).toBeGreaterThan(2);
    const search = (n: typeof n1, query: string) =>
      call(n, "POST", `/api/v1/knowledge-bases/${kb.result.id}/search`, { query, top_k: 3, min_score: 0 });
    for (const q of queries) {
      const answers = await Promise.all([n2, n3].map((n) => search(n, q.query)));
      for (const a of answers) expect(a.status, show(a)).toBe(200);
      expect(answers[0]?.result.results.length, q.query).toBeGreaterThan(0);
      expect(answers[0]?.result.results).toEqual(answers[1]?.result.results);
    }
    const listed = await call(n3, "GET", "/api/v1/knowledge-bases");
    expect(listed.result.data).toEqual([expect.objectContaining({ id: kb.result.id, document_count: docs.length })]);

    // a document deleted on node 2 is gone from node 3's search (the revision moved, so no cached answer)
    const first = (queries[0] as { query: string }).query;
    const top = (await search(n3, first)).result.results[0].document_id as string;
    expect((await call(n2, "DELETE", `/api/v1/knowledge-bases/${kb.result.id}/documents/${top}`)).status).toBe(200);
    const after = await search(n3, first);
    expect(after.status, show(after)).toBe(200);
    expect(after.result.results.map((r: { document_id: string }) => r.document_id)).not.toContain(top);

    // a chatbot made on node 2 answers on node 3 from the base's passages (the prompt the provider got holds them)
    const bot = await call(n2, "POST", "/api/v1/chatbots", {
      name: "Helper",
      mode: "support",
      knowledge_base_ids: [kb.result.id],
    });
    expect(bot.status, show(bot)).toBe(201);
    const question = (queries[1] as { query: string }).query;
    const passage = (await search(n1, question)).result.results[0].content as string;
    sim.reset();
    const chatted = await call(n3, "POST", `/api/v1/chatbots/${bot.result.id}/chat`, { message: question });
    expect(chatted.status, show(chatted)).toBe(200);
    expect(JSON.stringify(sim.calls.requests.map((r) => r.body))).toContain(JSON.stringify(passage).slice(1, -1));

    // an FAQ collection made on node 3 matches on node 1
    const faq = await call(n3, "POST", "/api/v1/ai/faq-collections", {
      name: "faq",
      faqs: [
        { question: "How do I reset my password?", answer: "Use the link on the sign-in page." },
        { question: "Do you ship internationally?", answer: "Yes, to 40 countries." },
      ],
    });
    expect(faq.status, show(faq)).toBe(201);
    const matched = await call(n1, "POST", "/api/v1/ai/faq-match", {
      collection_id: faq.result.id,
      query: "i forgot my pasword",
    });
    expect(matched.status, show(matched)).toBe(200);
    expect(matched.result.best_match).toMatchObject({ question: "How do I reset my password?" });
    expect((await call(n2, "GET", `/api/v1/ai/faq-collections/${faq.result.id}`)).result.faq_count).toBe(2);
  }, 30_000); // an upload of 20 documents and ten searches over three nodes: about 3 s alone, past the 5 s default on a loaded machine (CI, 2026-12-06)
});
