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

// Keys stored by an earlier stemmer ("letters" was keyed "let") must not decide a match once the
// word handling changes: rows without this version's marker are read from their text.
test("chunks whose terms an earlier version wrote are scored from their text", async () => {
  const kb = (await alice.call("POST", "/api/v1/knowledge-bases", { name: "Stale keys" })).json.data.result;
  await alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/documents`, {
    documents: ["Send letters for the head office to our postal address in Leeds.", "Let us know if a parcel is late."],
  });
  const search = () => alice.call("POST", `/api/v1/knowledge-bases/${kb.id}/search`, { query: "where do I send letters" });
  const fresh = await search();
  expect(fresh.status, show(fresh)).toBe(200);
  const results = fresh.json.data.result.results;
  expect(results[0].content).toContain("letters");
  const db = new Database(gw.dbPath);
  // what the previous key scheme stored: no version marker, "letters" stemmed to "let"
  db.query(
    "UPDATE kb_chunks SET terms = 'let send head office postal address leeds' WHERE kb_id = ? AND content LIKE 'Send%'",
  ).run(kb.id);
  db.query("UPDATE kb_chunks SET terms = 'let know parcel late' WHERE kb_id = ? AND content LIKE 'Let%'").run(kb.id);
  db.close();
  const upgraded = await search();
  expect(upgraded.json.data.result.results).toEqual(results);
});
