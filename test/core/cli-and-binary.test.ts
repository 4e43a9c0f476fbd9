import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wordCount } from "../helpers/echo-function";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { KIND, startOtlpReceiver } from "../helpers/otlp";
import { RawConnection } from "../helpers/raw-http";

const ROOT = join(import.meta.dir, "../..");

function cli(args: string[], env: Record<string, string>, cmd: string[] = [process.execPath, join(ROOT, "src/cli.ts")]) {
  const p = Bun.spawnSync([...cmd, ...args], { env: { ...process.env, ...env }, cwd: env.CWD ?? ROOT });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ functions: [wordCount] });
});
afterAll(() => gw.close());

describe("CLI beside a running server", () => {
  test("keys create / list / revoke, credits grant and usage on the server's database", async () => {
    const env = { TEXTAI_DB: gw.dbPath };
    const created = cli(["keys", "create", "--label", "from cli", "--credits", "7", "--json"], env);
    expect(created.code).toBe(0);
    const k = JSON.parse(created.out) as {
      id: string;
      key: string;
      account_id: string;
      label: string;
      plan: string;
      prefix: string;
    };
    expect(Object.keys(k).sort()).toEqual(["account_id", "id", "key", "label", "plan", "prefix"]);
    expect(k.key).toMatch(/^tai_live_[0-9A-Za-z]{40,}$/);

    const h = { "x-api-key": k.key };
    expect((await gw.post("/api/v1/ai/word-count", { text: "hello from the cli key" }, h)).status).toBe(200);

    const grant = cli(["credits", "grant", "--account", k.account_id, "--amount", "5"], env);
    expect(grant.code).toBe(0);
    expect(gw.deps.ledger.balance(k.account_id)).toBe(11);

    const usage = JSON.parse(cli(["usage", "--account", k.account_id, "--json"], env).out);
    const api = (await gw.get("/api/v1/account/usage", h)).json.data.result;
    expect(usage.requests).toBe(1);
    expect(usage.credits_used).toBe(api.credits_used);
    expect(usage.balance).toBe(api.balance);

    const list = cli(["keys", "list", "--account", k.account_id, "--json"], env);
    expect(list.out).not.toContain(k.key);
    expect(JSON.parse(list.out)[0]).toMatchObject({ id: k.id, status: "active", masked_key: `tai_live_…${k.key.slice(-4)}` });

    expect(cli(["keys", "revoke", k.id], env).code).toBe(0);
    const revokedAt = Date.now();
    let status = 200;
    while (Date.now() - revokedAt < 1100) {
      status = (await gw.post("/api/v1/ai/word-count", { text: "after revoke" }, h)).status;
      if (status === 401) break;
      await Bun.sleep(50);
    }
    expect(status).toBe(401);
  });

  test("bad usage exits non-zero with a message", () => {
    const r = cli(["keys", "create"], { TEXTAI_DB: gw.dbPath });
    expect(r.code).toBe(2);
    expect(r.err).toContain("--label is required");
    expect(cli(["credits", "grant", "--account", "acc_nope", "--amount", "3"], { TEXTAI_DB: gw.dbPath }).code).toBe(1);
    // an account that does not exist is said so, not an empty table (2026-12-06)
    const none = cli(["keys", "list", "--account", "acc_nope"], { TEXTAI_DB: gw.dbPath });
    expect([none.code, none.err.trim()]).toEqual([1, `no account acc_nope in ${gw.dbPath}`]);
  });
});

describe("compiled binary", () => {
  test("dist/textai serve works from an empty directory (migrations, docs, engine parts and tracing embedded)", async () => {
    const build = Bun.spawnSync([process.execPath, "run", "build"], { cwd: ROOT });
    expect(build.exitCode).toBe(0);
    // the Portkey gateway is a dev dependency of the bench, never part of the binary
    expect(Buffer.from(await Bun.file(join(ROOT, "dist/textai")).arrayBuffer()).includes("@portkey-ai")).toBe(false);
    const dir = mkdtempSync(join(tmpdir(), "textai-bin-"));
    const bin = join(dir, "textai");
    await Bun.write(bin, Bun.file(join(ROOT, "dist/textai")));
    Bun.spawnSync(["chmod", "+x", bin]);
    const env = { ...process.env, PORT: "0", TEXTAI_DB: "", TEXTAI_DRAIN_GRACE_MS: "0" } as Record<string, string>;
    delete env.TEXTAI_DB;
    const created = Bun.spawnSync([bin, "keys", "create", "--label", "bin", "--json"], { cwd: dir, env });
    expect(created.exitCode).toBe(0);
    const key = JSON.parse(created.stdout.toString()).key as string;
    const serve = (extra: Record<string, string> = {}) =>
      Bun.spawn([bin, "serve", "--port", "0"], { cwd: dir, env: { ...env, ...extra }, stdout: "pipe", stderr: "pipe" });
    const listening = async (p: ReturnType<typeof serve>) => {
      const reader = p.stdout.getReader();
      let out = "";
      while (!/listening on (\S+)/.test(out)) {
        const { value, done } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
      return out.match(/listening on (\S+)/)![1] as string;
    };
    const server = serve();
    try {
      const url = await listening(server);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      const usage = await fetch(`${url}/api/v1/account/usage`, { headers: { "x-api-key": key } });
      expect(usage.status).toBe(200);
      expect(((await usage.json()) as { data: { result: { balance: number } } }).data.result.balance).toBe(100);
      const docsUi = await fetch(`${url}/docs/assets/scalar.js`);
      expect(docsUi.status).toBe(200);
      expect((await docsUi.text()).length).toBeGreaterThan(1_000_000);
      expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
      // a request line the router cannot take apart: the envelope, never an error page with internals
      const raw = new RawConnection(Number(new URL(url).port));
      await raw.ready;
      raw.write("CONNECT 127.0.0.1:22 HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
      const odd = await raw.next();
      raw.destroy();
      expect(odd?.status).toBe(404);
      expect(odd?.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(odd?.body ?? "{}").request_id).toBe(odd?.headers["x-request-id"]);
      expect(odd?.body).not.toContain(dir);
      // the engine parts that load on first use are inside the binary: the grammar WASM (a file)
      // and the language model (a module required by path)
      const post = (path: string, body: unknown) =>
        fetch(`${url}${path}`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const grammar = await post("/api/v1/ai/grammar-fix", { text: "Their going too the store tomorow." });
      expect(grammar.status).toBe(200);
      expect(((await grammar.json()) as { data: { result: { corrected_text: string } } }).data.result.corrected_text).toContain(
        "tomorrow",
      );
      const comment = await post("/api/v1/ai/comment-analyze", {
        comment: "This product is really excellent, thank you so much!",
      });
      expect(((await comment.json()) as { data: { result: { language: string } } }).data.result.language).toBe("en");

      // tracing's packages, loaded only when its variable is set, are inside the binary too
      const otlp = await startOtlpReceiver();
      const traced = serve({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "20" });
      try {
        const tracedUrl = await listening(traced);
        const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        const health = await fetch(`${tracedUrl}/health`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
        expect(health.status).toBe(200);
        const spans = await otlp.waitFor((all) => all.filter((s) => s.traceId === traceId), 1);
        expect(spans.map((s) => [s.name, s.kind, s.parentSpanId])).toEqual([["GET /health", KIND.SERVER, "00f067aa0ba902b7"]]);
      } finally {
        traced.kill("SIGTERM");
        expect(await traced.exited).toBe(0);
        await otlp.close();
      }
    } finally {
      server.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
