/**
 * kill -9 under load: 32 clients call a charged function as fast as they can; the gateway is killed
 * with SIGKILL, restarted on the same file, three times. Every 200 the clients received must be a
 * ledger charge (lost debits: 0), and a charge no client saw answered (phantom debit) may only be
 * one of the calls in flight at the kill.
 */

import { spawnGateway } from "../../test/helpers/spawned";
import { call, chaosHome, waitReady } from "../lib/chaos";

const ROUNDS = 3;
const CLIENTS = 32;
const LOAD_MS = 2500;

export async function run() {
  const home = chaosHome("kill9");
  try {
    const { key, accountId } = home.key(100_000_000);
    const received = new Set<string>();
    let inFlightAtKill = 0;
    let otherStatus = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const g = await spawnGateway(home.env);
      await waitReady(g.url);
      let killed = false;
      const client = async () => {
        for (;;) {
          const r = await call(g.url, key);
          if (r === null) {
            if (killed) inFlightAtKill++;
            return;
          }
          if (r.status === 200) received.add(r.requestId);
          else otherStatus++;
        }
      };
      const clients = Array.from({ length: CLIENTS }, client);
      await Bun.sleep(LOAD_MS);
      killed = true;
      g.proc.kill(9);
      await g.exited;
      await Promise.all(clients);
    }
    const charges = home.charges(accountId);
    const lost = [...received].filter((id) => !charges.has(id)).length;
    const phantom = [...charges].filter((id) => !received.has(id)).length;
    const ok = lost === 0 && phantom <= inFlightAtKill && otherStatus === 0 && received.size > 0;
    return {
      name: "kill9",
      line: `${ROUNDS} kills, ${received.size} answered 200, ${charges.size} charged; lost debits ${lost}, phantom debits ${phantom} (calls in flight at the kills: ${inFlightAtKill}), non-200 answers ${otherStatus}`,
      ok,
    };
  } finally {
    home.cleanup();
  }
}
