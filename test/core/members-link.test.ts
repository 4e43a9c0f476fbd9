/**
 * `members add` prints the invitation link where members reach the dashboard: `--base-url`, else the
 * address single sign-on is registered at, else the server serving the database (its note beside
 * the file), else HOST and PORT as `serve` would listen. 2026-12-06, a newcomer walkthrough: it was
 * `http://HOST:PORT` always, port 8080 unless PORT was set, whatever port the server ran on, and
 * `http://:::8080` with HOST=::.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stored } from "../helpers/bad-attributes";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { runCli } from "../helpers/spawned";

const dir = mkdtempSync(join(tmpdir(), "textai-members-link-"));
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI on `db`, as a user runs it (runCli), with `env`. */
const cli = (db: string, args: string[], env: Record<string, string> = {}) => runCli(args, { ...env, TEXTAI_DB: db });

/** A member invited with the CLI on `db` (to a new account of its own): the link's URL. */
function invite(db: string, env: Record<string, string> = {}, more: string[] = []): URL {
  const made = cli(db, ["keys", "create", "--label", "team", "--json"], env);
  expect(made.code, made.err).toBe(0);
  const account = JSON.parse(made.out).account_id as string;
  const r = cli(
    db,
    ["members", "add", "--account", account, "--email", "dev@example.com", "--role", "developer", "--json", ...more],
    env,
  );
  expect(r.code, r.err).toBe(0);
  const url = new URL(JSON.parse(r.out).url);
  expect(url.pathname).toBe(`/dashboard/join/${account}`);
  return url;
}

test("beside a running server, the link is on the server's own address (not port 8080)", () => {
  expect(gw.port).not.toBe(8080);
  expect(invite(gw.dbPath).origin).toBe(new URL(gw.url).origin);
}, 20_000);

test("without a server, HOST and PORT as serve would listen: an unspecified host as loopback, IPv6 in brackets", () => {
  expect(invite(join(dir, "v6.db"), { HOST: "::", PORT: "9123" }).origin).toBe("http://[::1]:9123");
  expect(invite(join(dir, "v4.db"), { HOST: "0.0.0.0", PORT: "9124" }).origin).toBe("http://127.0.0.1:9124");
}, 20_000);

test("with single sign-on, the address it is registered at; --base-url wins over everything", async () => {
  const config = join(dir, "sso.toml");
  await Bun.write(
    config,
    '[sso]\nissuer = "https://idp.example.invalid"\nclient_id = "textai"\nclient_secret = "a-secret"\nredirect_uri = "https://gw.example.com/dashboard/sso/callback"\n',
  );
  const db = join(dir, "sso.db");
  expect(invite(db, { TEXTAI_CONFIG: config }).origin).toBe("https://gw.example.com");
  const given = invite(db, { TEXTAI_CONFIG: config }, ["--base-url", "https://members.example.org/"]);
  expect(given.href.startsWith("https://members.example.org/dashboard/join/")).toBe(true);
}, 20_000);

test("a --base-url that is no http(s) address is refused naming it, exit 2, nothing stored", () => {
  const db = join(dir, "bad.db");
  const made = cli(db, ["keys", "create", "--label", "team", "--json"]);
  const account = JSON.parse(made.out).account_id as string;
  for (const bad of ["", "gw.example.com", "ftp://gw.example.com", "https://gw.example.com/?x=1"]) {
    const before = stored(db);
    const r = cli(db, [
      "members",
      "add",
      "--account",
      account,
      "--email",
      "dev@example.com",
      "--role",
      "viewer",
      "--base-url",
      bad,
    ]);
    expect(r.code, bad).toBe(2);
    expect(r.err.split("\n")[0], bad).toStartWith(
      "error: --base-url: must be the http(s) address members reach the dashboard at",
    );
    expect(stored(db), bad).toBe(before);
  }
}, 20_000);
