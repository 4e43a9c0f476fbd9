// Chunks indexed before migration 0003 stored their search keys have an empty `terms` column; an
// upgraded gateway must still find them (they used to score 0 and never pass the relevance floor).
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { TestGateway } from "../helpers/gateway";
import { type Client, client, roomyGateway, show } from "./helpers";

let gw: TestGateway;
let alice: Client;
beforeAll(async () => {
  gw = await roomyGateway();
  alice = await client(gw);
});
afterAll(() => gw.close());

test("a chunk without stored terms is found by its text", async () => {
  const kb = (await alice.call("POST", "/api/v1/knowledge-bases", { name: "Old base" })).json.data.result;
  const added = await alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/documents`, {
    documents: [
      "Refunds are paid back to the original card within five working days of the return arriving.",
      "Our warehouse ships orders from Rotterdam every weekday before noon.",
    ],
  });
  expect(added.status, show(added)).toBe(201);
  const search = () =>
    alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/search`, { query: "refunds paid back to the original card" });
  const fresh = await search();
  expect(fresh.status, show(fresh)).toBe(200);
  const top = fresh.json.data.result.results[0];
  expect(top.content).toContain("Refunds");
  // as a database written before the terms were stored
  const db = new Database(gw.dbPath);
  expect(db.query("UPDATE kb_chunks SET terms = '' WHERE kb_id = ?").run(kb.id).changes).toBe(2);
  db.close();
  await alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/documents`, { documents: ["An unrelated note on parking."] });
  const upgraded = await search();
  expect(upgraded.status, show(upgraded)).toBe(200);
  expect(upgraded.json.data.result.results[0]).toMatchObject({ content: top.content, score: top.score });
});
