/**
 * Every way a key, account, member or key policy attribute comes in refuses the same bad values,
 * and stores nothing: the CLI (a process on a SQLite file of its own), the admin API and the
 * dashboard (a server on a real port). One table, test/helpers/bad-attributes.ts; one check per
 * attribute in src/ (src/auth/attributes.ts, src/auth/policy.ts, src/credits/amount.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CliCall, type HttpCall, type Made, rowsFor, stored } from "../helpers/bad-attributes";
import { withSetCookies } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN = "attribute-checks-admin-token-0123456789";
const CLI = join(import.meta.dir, "../../src/cli.ts");

describe("a bad attribute is refused on every way in, naming it, and nothing is stored", () => {
  const dir = mkdtempSync(join(tmpdir(), "textai-attributes-"));
  const cliDb = join(dir, "cli.db");
  let gw: TestGateway;
  let origin: string;
  const cookies: Record<"operator" | "owner", string> = { operator: "", owner: "" };
  let made: Made;

  const cli = ({ args, stdin }: CliCall) => {
    const r = Bun.spawnSync([process.execPath, CLI, ...args], {
      env: { ...process.env, TEXTAI_DB: cliDb, TEXTAI_CONFIG: "" },
      stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
    });
    return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
  };

  const send = async (call: HttpCall, headers: Record<string, string>) => {
    const res = await fetch(gw.url + call.path, {
      method: call.method,
      redirect: "manual",
      headers: { origin, ...headers, "content-type": call.form ? "application/x-www-form-urlencoded" : "application/json" },
      body: call.form ? new URLSearchParams(call.form) : JSON.stringify(call.json),
    });
    // a dashboard form answers 303 refused or not (Post/Redirect/Get): the page it leads to says how it went
    const location = call.form && res.status === 303 ? res.headers.get("location") : null;
    if (location) {
      await res.text();
      const cookie = withSetCookies(headers.cookie ?? "", res.headers.getSetCookie().join(", "));
      const page = await fetch(new URL(location, gw.url), { redirect: "manual", headers: { cookie } });
      return { status: page.status, text: await page.text(), json: {} as { error?: { code?: string; param?: string | null } } };
    }
    const text = await res.text();
    let json: { error?: { code?: string; param?: string | null } } = {};
    try {
      json = JSON.parse(text);
    } catch {
      // a dashboard page
    }
    return { status: res.status, text, json };
  };

  beforeAll(async () => {
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
    origin = new URL(gw.url).origin;
    const owner = await gw.post(
      "/admin/v1/accounts",
      { email: "owner@example.com", password: "a long enough password" },
      { authorization: `Bearer ${TOKEN}` },
    );
    expect(owner.status).toBe(201);
    const accountId = owner.json.data.result.id as string;
    made = { accountId, keyId: gw.newKey({ accountId }).id };
    const cookieOf = async (path: string, form: Record<string, string>) => {
      const res = await fetch(gw.url + path, {
        method: "POST",
        redirect: "manual",
        headers: { origin, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form),
      });
      expect(res.status).toBe(303);
      return (res.headers.get("set-cookie") ?? "").split(";")[0] as string;
    };
    cookies.owner = await cookieOf("/dashboard/login", { email: "owner@example.com", password: "a long enough password" });
    cookies.operator = await cookieOf("/dashboard/operator/login", { token: TOKEN });
  });
  afterAll(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the CLI: exit 2, the error names the flag, nothing stored", () => {
    const base = cli({ args: ["keys", "create", "--label", "base", "--json"] });
    expect(base.code, base.err).toBe(0);
    const { id, account_id } = JSON.parse(base.out) as { id: string; account_id: string };
    const { rows } = rowsFor((a) => a.cli, { accountId: account_id, keyId: id });
    expect(rows.length).toBeGreaterThan(60);
    const wrong: string[] = [];
    for (const { attr, value, call } of rows) {
      const before = stored(cliDb);
      const r = cli(call);
      const first = r.err.split("\n")[0] ?? "";
      const what = `${attr.name} ${JSON.stringify(value)}: ${call.args.join(" ")} -> exit ${r.code}, ${first}`;
      if (r.code !== 2 || !first.startsWith(`error: ${attr.flag}`) || stored(cliDb) !== before) wrong.push(what);
    }
    expect(wrong).toEqual([]);
  }, 180_000);

  test("the admin API: 400 invalid_request naming the field, nothing stored", async () => {
    const { rows } = rowsFor((a) => a.admin, made);
    expect(rows.length).toBeGreaterThan(70);
    const wrong: string[] = [];
    for (const { attr, value, call } of rows) {
      const before = stored(gw.dbPath);
      const r = await send(call, { authorization: `Bearer ${TOKEN}` });
      const param = r.json.error?.param ?? "";
      const what = `${attr.name} ${JSON.stringify(value)}: ${call.method} ${call.path} -> ${r.status} ${r.json.error?.code} ${param}`;
      const named = param === attr.param || param.startsWith(`${attr.param}.`);
      if (r.status !== 400 || r.json.error?.code !== "invalid_request" || !named || stored(gw.dbPath) !== before)
        wrong.push(what);
    }
    expect(wrong).toEqual([]);
  }, 60_000);

  test("the dashboard and the operator console: 400 (the field named on JSON routes; a form's page after its 303), nothing stored", async () => {
    const { rows } = rowsFor((a) => a.dashboard, made);
    expect(rows.length).toBeGreaterThan(25);
    const wrong: string[] = [];
    for (const { attr, value, call } of rows) {
      const before = stored(gw.dbPath);
      const r = await send(call, { cookie: cookies[call.as ?? "owner"] });
      const param = r.json.error?.param ?? null;
      const what = `${attr.name} ${JSON.stringify(value)}: ${call.method} ${call.path} -> ${r.status} ${param}`;
      const named = call.form !== undefined || param === attr.param;
      if (r.status !== 400 || !named || stored(gw.dbPath) !== before) wrong.push(what);
    }
    expect(wrong).toEqual([]);
    // an invitation's page: a name longer than a name holds is refused, never cut (an empty one is none given)
    const invited = await send(
      {
        method: "POST",
        path: `/admin/v1/accounts/${made.accountId}/members`,
        json: { email: "join@example.com", role: "viewer" },
      },
      { authorization: `Bearer ${TOKEN}` },
    );
    expect(invited.status).toBe(201);
    const link = new URL((invited.json as { data: { result: { url: string } } }).data.result.url);
    const before = stored(gw.dbPath);
    const joined = await send(
      { method: "POST", path: link.pathname + link.search, form: { name: "x".repeat(255), password: "a long enough password" } },
      {},
    );
    expect(joined.status).toBe(400);
    expect(joined.text).toContain("the name must be a text of 1 to 254 characters");
    expect(stored(gw.dbPath)).toBe(before);
  }, 60_000);
});
