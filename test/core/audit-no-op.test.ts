/**
 * A change that changes nothing writes no audit entry (src/audit/chain.ts changesNothing): `textai
 * keys update ID --rpm ""` of a key with no rpm, or the admin API setting a key's policy to what it
 * is, wrote `key.policy.update` with `{} -> {}` (2026-12-06, a walkthrough). A real change still
 * writes one. Through a real server and the real CLI on its SQLite file.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { runCli } from "../helpers/spawned";

const ADMIN = "audit-no-op-admin-token-0123456789abcdef";
let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN } });
});
afterAll(() => gw?.close());

const cli = (args: string[]) => runCli(args, { TEXTAI_DB: gw.dbPath });

const entries = async (target: string) =>
  (
    (await gw.get(`/admin/v1/audit?action=key.policy.update&limit=500`, { authorization: `Bearer ${ADMIN}` })).json.data.result
      .data as { target_id: string; before: unknown; after: unknown }[]
  ).filter((e) => e.target_id === target);

test("clearing an unset field, or setting a policy to itself: no entry; a real change: one", async () => {
  const { id: keyId } = gw.newKey({ credits: 10 });
  const cleared = cli(["keys", "update", keyId, "--rpm="]);
  expect(cleared.code, cleared.err).toBe(0);
  expect(await entries(keyId)).toEqual([]);
  expect(cli(["keys", "update", keyId, "--rpm", "9"]).code).toBe(0);
  const one = await entries(keyId);
  expect(one).toHaveLength(1);
  expect(one[0]).toMatchObject({ before: { rate_limit_per_minute: null }, after: { rate_limit_per_minute: 9 } });
  // the same value again, by the CLI and by the admin API
  expect(cli(["keys", "update", keyId, "--rpm", "9"]).code).toBe(0);
  const same = await fetch(`${gw.url}/admin/v1/keys/${keyId}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ policy: { rate_limit_per_minute: 9 } }),
  });
  expect(same.status).toBe(200);
  expect(await entries(keyId)).toHaveLength(1);
});
