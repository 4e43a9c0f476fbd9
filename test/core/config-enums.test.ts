/**
 * A config field that takes one of a set of values (a union of literals: a model group's
 * `strategy`, a provider's `features`, an `[[sso.map]]` entry's `role`, TEXTAI_REDIS_CLUSTER, ...)
 * says the values it accepts when it is given another, as a provider's unknown `type` does: the
 * real process, exit 2, before anything starts. 2026-12-06, a walkthrough: an unknown `strategy`
 * stopped start-up with `invalid value for "models.0.strategy": Expected union value`.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GROUP_STRATEGIES, PROVIDER_FEATURES, SSO_ROLES } from "../../src/config";

const CLI = join(import.meta.dir, "../../src/cli.ts");
const dir = mkdtempSync(join(tmpdir(), "textai-config-enums-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PROVIDER = '[[providers]]\nname = "eu"\ntype = "openai-compatible"\nbase_url = "http://127.0.0.1:9/v1"\n';

/** `textai serve` with this config file and environment: its exit code and the first line it wrote to standard error. */
async function serve(name: string, toml: string, env: Record<string, string> = {}) {
  const config = join(dir, `${name}.toml`);
  await Bun.write(config, toml);
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("TEXTAI_") && k !== "PORT") base[k] = v;
  const r = Bun.spawnSync([process.execPath, CLI, "serve"], {
    env: { ...base, PORT: "0", TEXTAI_DB: join(dir, `${name}.db`), TEXTAI_CONFIG: config, ...env },
    stdin: "ignore",
    timeout: 20_000,
  });
  return { code: r.exitCode, first: r.stderr.toString().split("\n")[0] as string };
}

test("each enum field of the config, given another value, is refused naming the field, the value and the accepted values", async () => {
  const cases: [string, string, Record<string, string>, string][] = [
    [
      "strategy",
      `${PROVIDER}[[models]]\nname = "g"\nstrategy = "fastest"\n[[models.deployments]]\nprovider = "eu"\nmodel = "m"\n`,
      {},
      `invalid value for "models.0.strategy": "fastest" is not one of ${GROUP_STRATEGIES.join(", ")}`,
    ],
    [
      "features",
      `[[providers]]\nname = "eu"\ntype = "openai-compatible"\nbase_url = "http://127.0.0.1:9/v1"\nfeatures = ["tools", "telepathy"]\n`,
      {},
      `invalid value for "providers.0.features.1": "telepathy" is not one of ${PROVIDER_FEATURES.join(", ")}`,
    ],
    [
      "role",
      `${PROVIDER}[sso]\nissuer = "https://idp.example.invalid"\nclient_id = "c"\nclient_secret = "s"\nredirect_uri = "https://gw.example.com/dashboard/sso/callback"\n[[sso.map]]\ngroup = "eng"\naccount = "acc_x"\nrole = "superuser"\n`,
      {},
      `invalid value for "sso.map.0.role": "superuser" is not one of ${SSO_ROLES.join(", ")}`,
    ],
    ["redis-cluster", PROVIDER, { TEXTAI_REDIS_CLUSTER: "yes" }, 'TEXTAI_REDIS_CLUSTER: one of true, false, got "yes"'],
    ["log-level", PROVIDER, { TEXTAI_LOG_LEVEL: "loud" }, 'TEXTAI_LOG_LEVEL: one of debug, info, warn, error, got "loud"'],
  ];
  for (const [name, toml, env, said] of cases) {
    const r = await serve(name, toml, env);
    expect(r.code, name).toBe(2);
    expect(r.first, name).toStartWith("error: ");
    expect(r.first, name).toContain(said);
    expect(r.first, name).not.toContain("Expected union value");
  }
}, 60_000);
