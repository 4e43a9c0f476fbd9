import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import type { AnyFunctionDef } from "../../src/functions/define";
import { createLogger } from "../../src/log";
import { type RunningServer, startServer } from "../../src/server";

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
  const env: Record<string, string> = { TEXTAI_DB: dbPath, PORT: "0", HOST: "127.0.0.1", TEXTAI_LOG_LEVEL: "debug", ...opts.env };
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
      const k = server.deps.keys.createKey({
        label: o.label ?? "test",
        credits: o.credits,
        plan: o.plan,
        accountId: o.accountId,
      });
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
