import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { cli, type SpawnedGateway, spawnGateway } from "../helpers/spawned";

// docs/openai-compatible.md's "Try /v1 without a vendor account", step by step: the simulator
// script, a gateway with the documented config file, a key from the CLI, the documented call.
const ROOT = join(import.meta.dir, "../..");
const DOC = join(ROOT, "docs/openai-compatible.md");

/** The section's shell blocks, and the heredocs they write (by their end marker). */
async function documentedSteps() {
  const doc = await Bun.file(DOC).text();
  const start = doc.indexOf("## Try `/v1` without a vendor account");
  expect(start).toBeGreaterThan(0);
  const section = doc.slice(start, doc.indexOf("\n## ", start + 4));
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  const heredoc = (marker: string) => {
    const m = new RegExp(`<<'${marker}'\\n([\\s\\S]*?)\\n${marker}\\n`).exec(section);
    if (!m?.[1]) throw new Error(`docs/openai-compatible.md: no heredoc ${marker} in the section`);
    return m[1];
  };
  return { section, blocks, toml: heredoc("TOML"), script: heredoc("JS") };
}

describe("docs/openai-compatible.md: a first /v1 call through the simulator, as documented", () => {
  let sim: Subprocess<"ignore", "pipe", "pipe"> | undefined;
  let gw: SpawnedGateway | undefined;
  const dir = mkdtempSync(join(tmpdir(), "textai-try-v1-"));
  // the script imports "openai": it runs from a folder inside the repository (node_modules), .tmp/ is ignored by git
  const scriptDir = join(ROOT, ".tmp");
  const scriptPath = join(scriptDir, `try-v1-${process.pid}.mjs`);

  beforeAll(() => mkdirSync(scriptDir, { recursive: true }));
  afterAll(async () => {
    for (const p of [gw?.proc, sim]) p?.kill("SIGINT");
    await Promise.all([gw?.exited, sim?.exited]);
    rmSync(dir, { recursive: true, force: true });
    rmSync(scriptPath, { force: true });
  });

  test("the commands name only npx -y bun@1.4.5, and the simulator script, config, key and call give the README's answer", async () => {
    const { blocks, toml, script } = await documentedSteps();
    expect(blocks.length).toBe(3);
    const commands = blocks
      .flatMap((b) => b.split("\n"))
      .filter((l) => l && !l.startsWith("#") && !/^(\[|name|type|base_url|default_model|import|const|console|TOML|JS)/.test(l));
    for (const line of commands)
      expect(line).toMatch(
        /^(npx -y bun@1\.4\.5 |cat > |TEXTAI_CONFIG=\S+ npx -y bun@1\.4\.5 |TEXTAI_KEY=\S+ npx -y bun@1\.4\.5 )/,
      );
    expect(blocks[0]).toContain("npx -y bun@1.4.5 test/helpers/upstream-server.ts --port 9100");

    // terminal 1: the script the docs name (port 0 here: a free one), which prints its address
    sim = Bun.spawn(["bun", "test/helpers/upstream-server.ts", "--port", "0"], {
      cwd: ROOT,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = sim.stdout.getReader();
    let out = "";
    while (!/listening on (http:\/\/127\.0\.0\.1:\d+)/.test(out)) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the simulator exited: ${out}`);
      out += new TextDecoder().decode(value);
    }
    const simUrl = (/listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out) as RegExpExecArray)[1] as string;
    expect(out).toContain(`base_url ${simUrl}/v1`);

    // terminal 2: the documented config file, its base_url on the simulator's port, and serve
    expect(toml).toContain('base_url = "http://127.0.0.1:9100/v1"');
    const configPath = join(dir, "try-v1.toml");
    await Bun.write(configPath, toml.replace("http://127.0.0.1:9100", simUrl));
    const db = join(dir, "textai.db");
    gw = await spawnGateway({ TEXTAI_CONFIG: configPath, TEXTAI_DB: db });

    // terminal 3: a key from the CLI, then the documented script with it
    const created = cli(["keys", "create", "--label", "try v1"], { TEXTAI_DB: db });
    const key = /tai_live_\w+/.exec(created)?.[0];
    expect(key).toBeString();
    expect(script).toContain('baseURL: "http://127.0.0.1:8080/v1"');
    await Bun.write(scriptPath, script.replace("http://127.0.0.1:8080", gw.url));
    const run = Bun.spawnSync(["bun", scriptPath], { cwd: ROOT, env: { ...process.env, TEXTAI_KEY: key as string } });
    expect(run.stderr.toString()).toBe("");
    expect(run.exitCode).toBe(0);
    // what the docs say it prints
    expect(run.stdout.toString().trim()).toBe("Mock answer about: Hi");

    // the call went through the gateway to the simulator, and is in the request log (written every 500 ms)
    type Row = { function: string; provider: string; status: number };
    let rows: Row[] = [];
    for (let i = 0; i < 20 && rows.length === 0; i++) {
      if (i > 0) await Bun.sleep(250);
      rows = JSON.parse(cli(["requests", "--json"], { TEXTAI_DB: db })) as Row[];
    }
    expect(rows).toContainEqual(expect.objectContaining({ function: "chat-completions", provider: "sim", status: 200 }));
  }, 60_000);

  test("the Node.js version the docs name for the SDK examples is the openai package's own engines field", async () => {
    const pkg = (await Bun.file(join(ROOT, "node_modules/openai/package.json")).json()) as {
      version: string;
      engines: { node: string };
    };
    // the text as read, line breaks as spaces
    const doc = (await Bun.file(DOC).text()).replace(/\s+/g, " ");
    expect(doc).toContain(`"engines": {"node": "${pkg.engines.node}"}`);
    const major = /^>=(\d+)/.exec(pkg.engines.node)?.[1];
    expect(major, pkg.engines.node).toBeString();
    expect(doc).toContain(`run the examples with Node.js ${major}`);
    expect(doc).toContain(`Node.js ${major}+`);
    expect(doc).toContain(`the lockfile has ${pkg.version}`);
  });
});
