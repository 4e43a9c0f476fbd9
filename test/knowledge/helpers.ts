/**
 * Shared set-up of the knowledge tests: a gateway with room in the rate limits, and JSON calls with
 * a key. TEXTAI_TEST_KNOWLEDGE=postgres runs the same files against PostgreSQL (a fresh database
 * per gateway, dropped at close; needs 127.0.0.1:5432, see test/helpers/shared-servers.ts), through
 * a pgbouncer of its own with TEXTAI_TEST_VIA_PGBOUNCER=1.
 */
import { startGateway, type TestGateway } from "../helpers/gateway";
import { databaseEnv } from "../helpers/pgbouncer";
import { freshDatabase } from "../helpers/shared-servers";

/** Room in the free plan's rate limits and knowledge quota (the quota has its own test: quota.test.ts). */
export const ROOMY_LIMITS = `[plans.free]\nknowledge_documents = 1000000\nknowledge_bytes = 10000000000\n[plans.free.rate_limits]\nstandard = 10000\nheavy = 10000\nbulk = 10000\n`;

/** The back-end these tests run on. */
export const ON_POSTGRES = process.env.TEXTAI_TEST_KNOWLEDGE === "postgres";

export async function roomyGateway(extraConfig = "", env: Record<string, string> = {}): Promise<TestGateway> {
  const configText = `${extraConfig}\n${ROOMY_LIMITS}`;
  if (!ON_POSTGRES) return startGateway({ configText, env });
  const db = await freshDatabase();
  const pg = await databaseEnv(db.url);
  const gw = await startGateway({ configText, env: { ...env, ...pg.env } });
  await gw.deps.services.ready();
  return {
    ...gw,
    async close() {
      await gw.close();
      await pg.stop();
      await db.drop();
    },
  };
}

export interface Client {
  key: string;
  accountId: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests walk response JSON freely; assertions check its shape
  call(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; json: Record<string, any> }>;
  balance(): Promise<number>;
}

export async function client(gw: TestGateway, credits = 1000): Promise<Client> {
  const k = await gw.deps.keys.createKey({ label: "test", credits });
  return {
    key: k.key,
    accountId: k.account_id,
    async call(method, path, body) {
      const res = await fetch(gw.url + path, {
        method,
        headers: { "x-api-key": k.key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      try {
        return { status: res.status, headers: res.headers, json: JSON.parse(text) };
      } catch {
        return { status: res.status, headers: res.headers, json: { raw: text } };
      }
    },
    balance: async () => await gw.deps.ledger.balance(k.account_id),
  };
}

/** The response, printed, for assertion messages. */
export const show = (r: { status: number; json: unknown }) => `${r.status} ${JSON.stringify(r.json).slice(0, 600)}`;
