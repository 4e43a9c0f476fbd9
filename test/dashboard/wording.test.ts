/**
 * The dashboard says "1 account", "3 members", never "account(s)": every count and its noun goes
 * through html.ts `counted` (2026-12-06: "credit(s)", "account(s)" and "member(s)" were on its pages;
 * then "Credit ledger (1 entries)", "1 credits" under the balance, "expiring in 1 days", written
 * without it). The sources are read for a count written before a plural, and every page is rendered
 * by the real server with one of each thing and read for "1 <plural>".
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { counted } from "../../src/http/routes/dashboard/html";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { requestFrom } from "../helpers/raw-http";

const DIR = join(import.meta.dir, "../../src/http/routes/dashboard");
/** the CLI's lines too ("Audit chain intact: 1 entries", "Granted 1 credits" until 2026-12-06) */
const CLI = join(import.meta.dir, "../../src/cli.ts");

/** Every line of the dashboard's sources (ts, js) and the CLI's, with its file and number, comments left out. */
function sourceLines(): { where: string; line: string }[] {
  const out: { where: string; line: string }[] = [];
  const files = (readdirSync(DIR, { recursive: true }) as string[]).map((f) => join(DIR, f));
  for (const f of [...files, CLI]) {
    if (!/\.(ts|js)$/.test(f)) continue;
    readFileSync(f, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (!/^\s*(\/\/|\/?\*)/.test(line)) out.push({ where: `${f}:${i + 1}`, line });
      });
  }
  return out;
}

test("no page text writes a plural as word(s)", () => {
  // a word then "(s)" inside a string or template (code like `(s) =>` has no letter before it)
  const found = sourceLines()
    // (http(s) is a word of its own)
    .filter(({ line }) => /(?<!http)(?<=[a-z])\(s\)(?=[\s`"'.,:])/i.test(line))
    .map(({ where, line }) => `${where}: ${line.trim()}`);
  expect(found).toEqual([]);
});

test("counted: one and many", () => {
  expect([counted(1, "account"), counted(3, "member"), counted(0, "credit"), counted(2, "entry", "entries")]).toEqual([
    "1 account",
    "3 members",
    "0 credits",
    "2 entries",
  ]);
});

/** words that end in "s" and may follow a number without being a plural noun */
const NOT_PLURAL = new Set([
  "this",
  "was",
  "does",
  "its",
  "plus",
  "always",
  "across",
  "unless",
  "status",
  "class",
  "access",
  "address",
  "success",
  // verbs and labels after a name the CLI interpolates ("${flag} needs", "${target} exists")
  "needs",
  "holds",
  "exists",
  "reads",
  "tags",
  "belongs",
]);

test("no dashboard source writes a count and a plural noun itself: '(N entries)' goes through counted", () => {
  const found: string[] = [];
  // an interpolated count then a word in "s": "(${total} entries)", "${wait} seconds"
  for (const { where, line } of sourceLines())
    for (const m of line.matchAll(/\$\{[^}]+\}\)?[ ]+([a-z]{3,}s)\b/gi))
      if (!NOT_PLURAL.has((m[1] as string).toLowerCase())) found.push(`${where}: ${m[0]}`);
  expect(found).toEqual([]);
});

test("counted: the regular plurals, and irregular ones given", () => {
  expect([
    counted(1, "entry"),
    counted(2, "entry"),
    counted(2, "day"),
    counted(2, "key"),
    counted(3, "box"),
    counted(2, "person", "people"),
  ]).toEqual(["1 entry", "2 entries", "2 days", "2 keys", "3 boxes", "2 people"]);
});

/** A page's text as a reader sees it: tags between blocks are breaks, inline ones a space. */
const textOf = (page: string) =>
  page
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, "")
    .replace(/<\/?(td|th|tr|p|div|li|h\d|section|caption|option|label|dt|dd|table|form|header|nav|main)\b[^>]*>/gi, " | ")
    .replace(/<[^>]+>/g, " ")
    .replace(/&[a-z]+;|&#\d+;/g, " ")
    .replace(/\s+/g, " ");

describe('every page with one of each thing: no "1 <plural>"', () => {
  const ADMIN = "operator-token-for-wording-0123456789";
  const PASSWORD = "a long pass phrase for wording";
  let gw: TestGateway;
  const cookies: Record<string, string> = {};
  const signIn = async (path: string, form: Record<string, string>) => {
    const res = await requestFrom(gw.url, "127.0.0.1", "POST", path, { form });
    expect(res?.status).toBe(303);
    return (res?.headers["set-cookie"] ?? "").split(";")[0];
  };

  beforeAll(async () => {
    // an endpoint on this host (never called: nothing expires), so no name has to resolve
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN }, configText: "[alerts]\nallow_private_urls = true\n" });
    const made = async (email: string, credits: number) => {
      const r = await gw.post("/admin/v1/accounts", { email, password: PASSWORD, credits }, { authorization: `Bearer ${ADMIN}` });
      expect(r.status).toBe(201);
      return r.json.data.result.id as string;
    };
    // one account with 1 credit, one ledger entry (its grant), one member, one key, one alert endpoint
    // expiring its keys' alerts 1 day ahead; another with one call (one request, one function)
    const one = await made("one@example.com", 1);
    gw.newKey({ accountId: one, label: "only key" });
    cookies.one = await signIn("/dashboard/login", { email: "one@example.com", password: PASSWORD });
    const endpoint = await gw.post(
      "/admin/v1/webhooks",
      { account_id: one, url: "http://127.0.0.1:9/one", events: ["key.expiring"], expiring_days: 1 },
      { authorization: `Bearer ${ADMIN}` },
    );
    expect(endpoint.status, JSON.stringify(endpoint.json)).toBe(201);
    const called = await made("called@example.com", 2);
    const { key } = gw.newKey({ accountId: called, label: "caller" });
    expect((await gw.post("/api/v1/ai/sentiment-analysis", { text: "Fine." }, { "x-api-key": key })).status).toBe(200);
    cookies.called = await signIn("/dashboard/login", { email: "called@example.com", password: PASSWORD });
    cookies.operator = await signIn("/dashboard/operator/login", { token: ADMIN });
  }, 60_000);
  afterAll(() => gw?.close());

  const PAGES: [string, string[]][] = [
    [
      "one",
      [
        "/dashboard",
        "/dashboard/keys",
        "/dashboard/ledger",
        "/dashboard/requests",
        "/dashboard/alerts",
        "/dashboard/members",
        "/dashboard/audit",
        "/dashboard/playground",
      ],
    ],
    ["called", ["/dashboard", "/dashboard/ledger", "/dashboard/requests", "/dashboard/keys"]],
    ["operator", ["/dashboard/operator"]],
  ];
  for (const [who, paths] of PAGES)
    for (const path of paths)
      test(`${who}: ${path}`, async () => {
        const res = await fetch(gw.url + path, { headers: { cookie: cookies[who] }, redirect: "manual" });
        expect(res.status).toBe(200);
        const text = textOf(await res.text());
        const plural = [...text.matchAll(/(?<![\d.,:-])\b1 ([a-z]{3,}s)\b/gi)]
          .filter((m) => !NOT_PLURAL.has(m[1].toLowerCase()))
          .map((m) => text.slice(Math.max(0, (m.index ?? 0) - 40), (m.index ?? 0) + 30));
        expect(plural).toEqual([]);
      });

  test("the pages above do show their counts of one", async () => {
    const get = async (who: string, path: string) =>
      textOf(await (await fetch(gw.url + path, { headers: { cookie: cookies[who] } })).text());
    expect(await get("one", "/dashboard/ledger")).toContain("Credit ledger (1 entry)");
    expect(await get("one", "/dashboard")).toMatch(/Balance 1 credit \|/);
    expect(await get("one", "/dashboard/alerts")).toContain("expiring in 1 day");
    expect(await get("one", "/dashboard/members")).toContain("1 member");
  });
});
