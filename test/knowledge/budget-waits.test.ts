/**
 * A knowledge-base search answered by the offline engine waits for its embedding provider (and on
 * PostgreSQL for its database). While it waits, the gateway's one thread serves other requests;
 * that work is theirs, not the search's, and must not count against the search's CPU budget.
 * Before, a short query on a busy gateway was refused 413 "needs more than the offline engine's
 * CPU budget" (CI saw it once in the shared test process).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { threadCpuMs } from "../../src/offline-engine/budget";
import type { TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";
import { type Client, client, roomyGateway, show } from "./helpers";

let sim: Upstream;
let gw: TestGateway;
let alice: Client;
beforeAll(async () => {
  sim = await startUpstream();
  gw = await roomyGateway(
    `${simProvider({ url: `${sim.url}/v1`, model: "sim-model", extra: 'embedding_model = "sim-embed"' })}\n[routes]\n"knowledge-base-search" = ["local"]\n`,
  );
  alice = await client(gw);
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

/** Keeps this thread (the gateway's) busy: 30 ms of CPU in every 40 ms, as other requests would. */
function busyThread(): () => void {
  const timer = setInterval(() => {
    const until = threadCpuMs() + 30;
    while (threadCpuMs() < until) {}
  }, 10);
  return () => clearInterval(timer);
}

test("a search that waits for its embedding provider on a busy gateway is answered: the others' work is not its budget", async () => {
  const kb = (await alice.call("POST", "/api/v1/knowledge-bases", { name: "Busy base" })).json.data.result;
  const added = await alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/documents`, {
    documents: [
      "Refunds are paid back to the original card within five working days of the return arriving.",
      "Our warehouse ships orders from Rotterdam every weekday before noon.",
    ],
  });
  expect(added.status, show(added)).toBe(201);
  // a new query each time: a repeated one is answered from the response cache
  const search = (query: string) => alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/search`, { query });
  expect((await search("refunds")).status).toBe(200);

  // each search embeds its query: the provider takes 200 ms, and the thread is busy meanwhile
  // 300 words: reading the query passes the engine's safe points after the wait (one per 256 words)
  const long = (lead: string) => `${lead} ${"refunds paid back to the card ".repeat(50)}`;
  for (const query of [long("when are"), long("how fast are"), long("where are")]) {
    sim.program([{ delayMs: 200, times: 2 }]);
    const before = sim.calls.requests.filter((r) => r.path === "/v1/embeddings").length;
    const stop = busyThread();
    const res = await search(query).finally(stop);
    expect(res.status, show(res)).toBe(200);
    expect(res.json.data.result.results[0].content).toContain("Refunds");
    expect(sim.calls.requests.filter((r) => r.path === "/v1/embeddings").length).toBeGreaterThan(before);
  }
});
