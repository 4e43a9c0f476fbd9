// The dashboard scenario against the compiled binary: pages, assets and the migration are embedded.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN_TOKEN, dashboardScenario } from "./browser-suite";

const ROOT = join(import.meta.dir, "../..");

dashboardScenario(
  "dist/textai",
  async () => {
    const build = Bun.spawnSync([process.execPath, "run", "build"], { cwd: ROOT });
    if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
    const dir = mkdtempSync(join(tmpdir(), "textai-dash-bin-"));
    const bin = join(dir, "textai");
    await Bun.write(bin, Bun.file(join(ROOT, "dist/textai")));
    Bun.spawnSync(["chmod", "+x", bin]);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      TEXTAI_DB: join(dir, "textai.db"),
      TEXTAI_ADMIN_TOKEN: ADMIN_TOKEN,
      TEXTAI_DRAIN_GRACE_MS: "0",
    };
    const server = Bun.spawn([bin, "serve", "--port", "0"], { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
    let out = "";
    let err = "";
    const reader = server.stdout.getReader();
    while (!/listening on (\S+)/.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`dist/textai did not start: ${out}`);
      out += new TextDecoder().decode(value);
    }
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        out += new TextDecoder().decode(value);
      }
    })();
    void new Response(server.stderr).text().then((t) => (err = t));
    const url = out.match(/listening on (\S+)/)![1];
    return {
      url,
      // the CLI's way: the password on the first line of standard input
      async createLogin(email, password, credits) {
        const p = Bun.spawnSync([bin, "accounts", "create", "--email", email, "--credits", String(credits), "--json"], {
          cwd: dir,
          env,
          stdin: new TextEncoder().encode(`${password}\n`),
        });
        if (p.exitCode !== 0) throw new Error(`accounts create failed: ${p.stderr.toString()}`);
        return JSON.parse(p.stdout.toString()).account_id as string;
      },
      logs: () => out + err,
      async close() {
        server.kill("SIGTERM");
        await server.exited;
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { screenshots: false },
);
