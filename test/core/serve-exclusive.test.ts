import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

/**
 * `serve` refuses a port that is taken (Elysia's default SO_REUSEPORT made a second gateway start
 * silently and share the port), and warns when another live process serves the same SQLite file.
 */
const CLI = new URL("../../src/cli.ts", import.meta.url).pathname;
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

async function serve(env: Record<string, string>, args: string[], waitFor: RegExp | null) {
  const proc = Bun.spawn(["bun", CLI, "serve", ...args], {
    env: { ...process.env, TEXTAI_LOG_LEVEL: "warn", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const read = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) out += new TextDecoder().decode(chunk);
  };
  void read(proc.stdout);
  void read(proc.stderr);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && proc.exitCode === null && !waitFor?.test(out)) await Bun.sleep(50);
  return { proc, output: () => out };
}

test("a second serve on a taken port exits non-zero with a clear message", async () => {
  const { proc, output } = await serve({ TEXTAI_DB: `${gw.dir}/other.db` }, ["--port", String(gw.port)], null);
  const code = await proc.exited;
  expect({ code, message: /port \d+ .*already in use/.test(output()) }).toEqual({ code: 1, message: true });
  // the first gateway still answers alone
  expect((await gw.get("/health")).status).toBe(200);
}, 30_000);

test("a serve on the same SQLite file as a live gateway warns, naming its pid", async () => {
  const { proc, output } = await serve({ TEXTAI_DB: gw.dbPath }, ["--port", "0"], /listening on/);
  try {
    expect(output()).toContain(`another live process (pid ${process.pid}) is serving the same database file`);
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}, 30_000);

const shared = await sharedServersUp("two cluster nodes on one machine sharing a SQLite file");
test.skipIf(!shared)(
  "cluster nodes on one machine may share the SQLite file: no warning, the ledger is in PostgreSQL",
  async () => {
    const db = await freshDatabase();
    const env = { TEXTAI_DB: `${gw.dir}/cluster.db`, TEXTAI_DATABASE_URL: db.url };
    const first = await serve(env, ["--port", "0"], /listening on/);
    try {
      const second = await serve(env, ["--port", "0"], /listening on/);
      try {
        expect(second.output()).toContain("listening on");
        expect(second.output()).not.toContain("another live process");
      } finally {
        second.proc.kill("SIGTERM");
        await second.proc.exited;
      }
    } finally {
      first.proc.kill("SIGTERM");
      await first.proc.exited;
      await db.drop();
    }
  },
  60_000,
);
