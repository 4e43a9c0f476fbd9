import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import type { AnyFunctionDef } from "../../src/functions/define";
import { createLogger } from "../../src/log";
import { type RunningServer, startServer } from "../../src/server";
import { valueNow } from "./value-now";

export interface TestGateway extends RunningServer {
  dir: string;
  dbPath: string;
  logs: string[];
  /** a fresh key on a new account */
  newKey(opts?: { credits?: number; plan?: string; accountId?: string; label?: string }): {
    key: string;
    id: string;
    accountId: string;
  };
  post(
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; json: Record<string, any> }>;
  get(path: string, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; json: Record<string, any> }>;
  close(): Promise<void>;
}

/** A real server on a real port with a real SQLite file in a temp folder. */
export async function startGateway(
  opts: { env?: Record<string, string>; configText?: string; functions?: AnyFunctionDef[] } = {},
): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), "textai-test-"));
  const dbPath = join(dir, "textai.db");
  const env: Record<string, string> = {
    TEXTAI_DB: dbPath,
    PORT: "0",
    HOST: "127.0.0.1",
    TEXTAI_LOG_LEVEL: "debug",
    // tests close their gateways at once; drain tests set their own
    TEXTAI_DRAIN_GRACE_MS: "0",
    ...opts.env,
  };
  if (opts.configText !== undefined) {
    env.TEXTAI_CONFIG = join(dir, "config.toml");
    await Bun.write(env.TEXTAI_CONFIG, opts.configText);
  }
  const logs: string[] = [];
  const server = startServer(loadConfig(env), { functions: opts.functions, logger: createLogger("debug", (l) => logs.push(l)) });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(server.url + path, {
      method,
      headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: Record<string, any>;
    try {
      json = JSON.parse(text);
    } catch {
      json = { raw: text };
    }
    return { status: res.status, headers: res.headers, json };
  };
  return {
    ...server,
    dir,
    dbPath,
    logs,
    newKey(o = {}) {
      const k = valueNow(
        server.deps.keys.createKey({
          label: o.label ?? "test",
          credits: o.credits,
          plan: o.plan,
          accountId: o.accountId,
        }),
      );
      return { key: k.key, id: k.id, accountId: k.account_id };
    },
    post: (path, body, headers) => call("POST", path, body, headers),
    get: (path, headers) => call("GET", path, undefined, headers),
    async close() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A test file's gateway with no model configured (the offline engine answers) and one key with
 * `credits`: started before the file's tests, closed after them. Returns `call(path, body)`.
 */
export function offlineGatewayFor(credits: number): (path: string, body: unknown) => ReturnType<TestGateway["post"]> {
  let gw: TestGateway;
  let key: string;
  beforeAll(async () => {
    gw = await startGateway();
    key = gw.newKey({ credits }).key;
  });
  afterAll(() => gw.close());
  return (path, body) => gw.post(path, body, { "x-api-key": key });
}
