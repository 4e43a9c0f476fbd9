/**
 * Two gateway processes on one SQLite file spend one account's credits at once (16 clients each),
 * while an operator takes credits back through the admin API of the second. The balance never goes
 * below zero, no answer reports a negative credits_remaining, and the ledger holds exactly the
 * charges the clients saw answered.
 */

import { spawnGateway } from "../../test/helpers/spawned";
import { call, chaosHome, waitReady } from "../lib/chaos";

const CREDITS = 400;
const CLIENTS = 16;
const ADMIN = "chaos-admin-token-0123456789abcdef";

export async function run() {
  const home = chaosHome("two-procs", "", { TEXTAI_ADMIN_TOKEN: ADMIN });
  const [a, b] = [await spawnGateway(home.env), await spawnGateway(home.env)];
  try {
    // both warmed up (the offline engine loads in the background), so both compete from the start
    await Promise.all([waitReady(a.url), waitReady(b.url)]);
    const { key, accountId } = home.key(CREDITS);
    const received = new Set<string>();
    const served = { a: 0, b: 0 };
    let refused = 0;
    let minRemaining = Number.POSITIVE_INFINITY;
    let negative = 0;
    let broken = 0;
    let done = false;
    const client = async (url: string, side: "a" | "b") => {
      let refusals = 0;
      const until = Date.now() + 15_000;
      while (refusals < 5 && Date.now() < until) {
        const r = await call(url, key);
        if (r === null || (r.status !== 200 && r.status !== 402)) {
          broken++;
          continue;
        }
        if (r.status === 402) {
          refused++;
          refusals++;
          continue;
        }
        refusals = 0;
        served[side]++;
        received.add(r.requestId);
        if (r.remaining !== undefined) {
          minRemaining = Math.min(minRemaining, r.remaining);
          if (r.remaining < 0) negative++;
        }
      }
    };
    let debited = 0;
    let debitsRefused = 0;
    const operator = async () => {
      while (!done) {
        const res = await fetch(`${b.url}/admin/v1/accounts/${accountId}/credits`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
          body: JSON.stringify({ amount: -3, reason: "chaos" }),
        });
        const j = (await res.json()) as { data?: { result: { balance: number } } };
        if (res.status === 200) {
          debited += 3;
          if ((j.data?.result.balance ?? 0) < 0) negative++;
        } else debitsRefused++;
        await Bun.sleep(20);
      }
    };
    const op = operator();
    await Promise.all([
      ...Array.from({ length: CLIENTS }, () => client(a.url, "a")),
      ...Array.from({ length: CLIENTS }, () => client(b.url, "b")),
    ]);
    done = true;
    await op;
    const charges = home.charges(accountId);
    const balance = home.balance(accountId);
    const lost = [...received].filter((id) => !charges.has(id)).length;
    const phantom = [...charges].filter((id) => !received.has(id)).length;
    const ok =
      balance >= 0 &&
      negative === 0 &&
      minRemaining >= 0 &&
      lost === 0 &&
      phantom === 0 &&
      broken === 0 &&
      balance === CREDITS - charges.size - debited;
    return {
      name: "two-procs",
      line: `${served.a}+${served.b} calls answered by A+B, ${refused} refused 402, operator took back ${debited} (${debitsRefused} debits refused); final balance ${balance}, lowest credits_remaining ${minRemaining}, negatives ${negative}, lost ${lost}, phantom ${phantom}, errors ${broken}`,
      ok,
    };
  } finally {
    a.proc.kill(9);
    b.proc.kill(9);
    await Promise.all([a.exited, b.exited]);
    home.cleanup();
  }
}
