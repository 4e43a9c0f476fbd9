/**
 * What a config file or environment names that could never work stops `textai serve` at start
 * (exit 2, the field named, what to write instead), instead of every call failing later:
 * - a provider's base URL that is no http(s) URL: "localhost:11434/v1" (Ollama's address without its
 *   scheme), "file:///etc/passwd", OPENAI_BASE_URL="api.example.com/v1" (each started, and every call
 *   was 502 provider_error "connection", until 2026-12-06);
 * - a key a table does not have: the one meant when one is near ("welcom_credits"), else the table's
 *   keys (it said `invalid value for "cache.ttl_secs": Unexpected property`).
 * - an `[sso]` naming an account that does not exist (`sso_required`, `[[sso.map]] account`), on
 *   SQLite before the port opens and on PostgreSQL once the database is migrated: the key, the id and
 *   the existing id closest to it (until 2026-12-06 it started silently, and a typo in
 *   `sso_required` left the meant account's passwords working).
 * The real process, as config-enums.test.ts runs it. And what may be meant (a provider's api_key_env
 * naming a variable this shell has not set, which a CLI verb's shell may lack by design) is a warning.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGateway } from "../helpers/gateway";
import { freshDatabase, sharedServersUp } from "../helpers/shared-servers";

const CLI = join(import.meta.dir, "../../src/cli.ts");
const dir = mkdtempSync(join(tmpdir(), "textai-config-refusals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** the environment of a user's shell: none of the test's TEXTAI_*, keys, base URLs or PORT */
function shellEnv(): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("TEXTAI_") && !k.endsWith("_API_KEY") && !k.endsWith("_BASE_URL") && k !== "PORT")
      base[k] = v;
  return base;
}

async function serve(name: string, toml: string, env: Record<string, string> = {}) {
  const config = join(dir, `${name}.toml`);
  await Bun.write(config, toml);
  const base = shellEnv();
  const r = Bun.spawnSync([process.execPath, CLI, "serve"], {
    env: { ...base, PORT: "0", TEXTAI_DB: join(dir, `${name}.db`), TEXTAI_CONFIG: config, ...env },
    stdin: "ignore",
    timeout: 20_000,
  });
  return { code: r.exitCode, err: r.stderr.toString() };
}

const provider = (baseUrl: string) => `[[providers]]\nname = "x"\ntype = "openai-compatible"\nbase_url = "${baseUrl}"\n`;

test("a provider base URL that is no http(s) URL stops the start, naming the entry and the URL to write", async () => {
  const cases: [string, string, Record<string, string>, string][] = [
    [
      "no-scheme",
      provider("localhost:11434/v1"),
      {},
      `"localhost:11434/v1" is not an http(s) URL (with its scheme: "http://localhost:11434/v1")`,
    ],
    ["file", provider("file:///etc/passwd"), {}, `"file:///etc/passwd" is not an http(s) URL`],
    [
      "env",
      "",
      { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: "api.example.com/v1" },
      `"api.example.com/v1" is not an http(s) URL`,
    ],
  ];
  for (const [name, toml, env, said] of cases) {
    const r = await serve(name, toml, env);
    expect(r.code, `${name}: ${r.err}`).toBe(2);
    expect(r.err, name).toContain(".base_url: ");
    expect(r.err, name).toContain(said);
  }
});

test("a key a table does not have stops the start naming the key meant, or the table's keys", async () => {
  const cases: [string, string, string][] = [
    ["top", "welcom_credits = 5\n", `unknown key "welcom_credits": did you mean "welcome_credits"?`],
    [
      "provider",
      `${provider("http://127.0.0.1:9/v1")}api_keyy = "k"\n`,
      `unknown key "providers.0.api_keyy": did you mean "api_key"?`,
    ],
    ["cache", "[cache]\nttl_secs = 5\n", `unknown key "cache.ttl_secs": the keys here are enabled, ttl_seconds`],
  ];
  for (const [name, toml, said] of cases) {
    const r = await serve(name, toml);
    expect(r.code, `${name}: ${r.err}`).toBe(2);
    expect(r.err, name).toContain(said);
  }
});

test("a provider's api_key_env naming a variable that is not set: the start warns, naming the provider and the variable", async () => {
  const gw = await startGateway({
    configText: `${provider("http://127.0.0.1:9/v1")}api_key_env = "TEXTAI_TEST_KEY_NOBODY_SET"\n`,
  });
  try {
    const warned = gw.logs
      .map((l) => JSON.parse(l) as Record<string, string>)
      .find((l) => l.level === "warn" && l.provider === "x");
    expect(warned?.msg).toBe(
      'provider "x": api_key_env names TEXTAI_TEST_KEY_NOBODY_SET, which is not set: its calls go without a key',
    );
  } finally {
    await gw.close();
  }
});

test("a route or a group naming a provider its environment variable switches on, unset: the start says which variable; a typo names the provider meant", async () => {
  const cases: [string, string, string][] = [
    [
      "route-groq",
      '[routes]\n"email-reply" = ["local", "groq"]\n',
      'routes.email-reply: provider "groq" is off: set GROQ_API_KEY to switch it on, or declare it as a [[providers]] entry named "groq"',
    ],
    [
      "group-anthropic",
      '[[models]]\nname = "chat-fast"\n[[models.deployments]]\nprovider = "anthropic"\nmodel = "claude-3-5-haiku-latest"\n',
      'models[0] ("chat-fast").deployments[0].provider: provider "anthropic" is off: set ANTHROPIC_API_KEY',
    ],
    ["route-typo", '[routes]\n"sentiment-analysis" = ["locl"]\n', 'unknown provider "locl" (did you mean "local"?)'],
  ];
  for (const [name, toml, said] of cases) {
    const r = await serve(name, toml);
    expect(r.code, `${name}: ${r.err}`).toBe(2);
    expect(r.err, name).toContain(said);
  }
});

test("the example config of docs/configuration.md starts as written, with the variables it names set", async () => {
  const doc = await Bun.file(join(import.meta.dir, "../../docs/configuration.md")).text();
  const example = /```toml\n([\s\S]*?)```/.exec(doc)?.[1] as string;
  expect(example).toContain("[[providers]]");
  const gw = await startGateway({ configText: example, env: { OLLAMA_KEY: "k" } });
  try {
    expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  } finally {
    await gw.close();
  }
});

/** `textai keys create` on a database: the new key's account id. */
function newAccount(env: Record<string, string>): string {
  const r = Bun.spawnSync([process.execPath, CLI, "keys", "create", "--label", "sso", "--json"], {
    env: { ...shellEnv(), ...env },
    stdin: "ignore",
  });
  expect(r.exitCode, r.stderr.toString()).toBe(0);
  return (JSON.parse(r.stdout.toString()) as { account_id: string }).account_id;
}

const ssoToml = (required: string, mapped: string) => `[sso]
issuer = "http://127.0.0.1:9"
client_id = "textai"
redirect_uri = "http://127.0.0.1:9/dashboard/sso/callback"
sso_required = ["${required}"]

[[sso.map]]
group = "eng"
account = "${mapped}"
role = "developer"
`;
const SECRET = { TEXTAI_SSO_CLIENT_SECRET: "a-secret-of-the-refusals-test" };
/** the id with its last character changed: a typo */
const typo = (id: string) => `${id.slice(0, -1)}${id.endsWith("x") ? "y" : "x"}`;

test("[sso] naming an account that does not exist stops the start (SQLite): the key, the id and the one meant", async () => {
  const db = join(dir, "sso-accounts.db");
  const real = newAccount({ TEXTAI_DB: db });
  const cases: [string, string, string][] = [
    [
      "sso-required-typo",
      ssoToml(typo(real), real),
      `sso.sso_required names the account "${typo(real)}", which does not exist: did you mean "${real}"?`,
    ],
    [
      "sso-map-unknown",
      ssoToml(real, "acc_nothing_like_any"),
      `sso.map[0].account names the account "acc_nothing_like_any", which does not exist: no account has an id near it`,
    ],
  ];
  for (const [name, toml, said] of cases) {
    const r = await serve(name, toml, { TEXTAI_DB: db, ...SECRET });
    expect(r.code, `${name}: ${r.err}`).toBe(2);
    expect(r.err, name).toContain(said);
  }
  // both named right: it starts (and is stopped here)
  const gw = await startGateway({ env: { TEXTAI_DB: db, ...SECRET }, configText: ssoToml(real, real) });
  await gw.close();
});

test("[sso] naming an account that does not exist stops the start on PostgreSQL once the database is migrated", async () => {
  if (!(await sharedServersUp("the [sso] start refusal on PostgreSQL"))) return;
  const pg = await freshDatabase();
  try {
    const real = newAccount({ TEXTAI_DATABASE_URL: pg.url });
    const r = await serve("sso-required-pg", ssoToml(typo(real), real), { TEXTAI_DATABASE_URL: pg.url, ...SECRET });
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain(`sso.sso_required names the account "${typo(real)}", which does not exist: did you mean "${real}"?`);
  } finally {
    await pg.drop();
  }
}, 30_000);
