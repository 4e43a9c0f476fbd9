/** Shared pieces of the chaos experiments (bench/chaos/): a temp gateway home, keys, ledger reads. */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../../test/helpers/spawned";

export interface ChaosHome {
  dir: string;
  env: Record<string, string>;
  /** a key on a new account with `credits` */
  key(credits: number): { key: string; accountId: string };
  /** ledger charges of an account, by request id (read straight from the file) */
  charges(accountId: string): Set<string>;
  balance(accountId: string): number;
  cleanup(): void;
}

/** Keys of plan "chaos" are never rate-limited: the experiments measure credits and connections. */
const PLAN = `[plans.chaos.rate_limits]\nstandard = 100000000\nheavy = 100000000\nbulk = 100000000\n`;

export function chaosHome(name: string, configToml = "", env: Record<string, string> = {}): ChaosHome {
  const dir = mkdtempSync(join(tmpdir(), `textai-chaos-${name}-`));
  const configPath = join(dir, "config.toml");
  writeFileSync(configPath, `${configToml}\n${PLAN}`);
  const fullEnv = { TEXTAI_DB: join(dir, "textai.db"), TEXTAI_CONFIG: configPath, ...env };
  const read = <T>(f: (db: Database) => T): T => {
    const db = new Database(fullEnv.TEXTAI_DB, { strict: true });
    try {
      return f(db);
    } finally {
      db.close();
    }
  };
  return {
    dir,
    env: fullEnv,
    key(credits) {
      const k = JSON.parse(
        cli(["keys", "create", "--label", name, "--plan", "chaos", "--credits", String(credits), "--json"], fullEnv),
      );
      return { key: k.key, accountId: k.account_id };
    },
    charges: (accountId) =>
      read(
        (db) =>
          new Set(
            db
              .query<{ request_id: string }, [string]>("SELECT request_id FROM ledger WHERE account_id = ? AND kind = 'charge'")
              .all(accountId)
              .map((r) => r.request_id),
          ),
      ),
    balance: (accountId) =>
      read(
        (db) =>
          db.query<{ balance: number }, [string]>("SELECT balance FROM accounts WHERE id = ?").get(accountId)?.balance ?? -1,
      ),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Texts that differ per call, so no answer comes from the cache. */
let seq = 0;
export const uniqueText = () => `Chaos call ${++seq} at ${Date.now()}: the service was quick and the staff were kind.`;

export const since = (t0: number) => Math.round(performance.now() - t0);

export const FN = "/api/v1/ai/sentiment-analysis";

/** One charged call with fetch: its status and request id, or null when the connection failed. */
export async function call(url: string, key: string): Promise<{ status: number; requestId: string; remaining?: number } | null> {
  try {
    const res = await fetch(url + FN, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key, "cache-control": "no-store" },
      body: JSON.stringify({ text: uniqueText() }),
    });
    const j = (await res.json()) as { request_id: string; meta?: { credits_remaining?: number } };
    return { status: res.status, requestId: j.request_id, remaining: j.meta?.credits_remaining };
  } catch {
    return null;
  }
}

/** Waits until /ready answers 200 (the offline engine loads in the background after start). */
export async function waitReady(url: string, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await fetch(`${url}/ready`).catch(() => null))?.status === 200) return;
    await Bun.sleep(50);
  }
  throw new Error(`${url} not ready after ${ms} ms`);
}
