/**
 * CSV formula injection (issue 35, finding 7): the dashboard's request-log CSV, opened the way a
 * spreadsheet would open it (RFC 4180 with `,`, and re-split on `;`, tab and `|` as a spreadsheet
 * told another separator does), has no cell that starts with a formula trigger, in ASCII or in its
 * fullwidth form, whatever model names the key holder sent.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "admin-token-csv-injection-0123456789abcdef";
const PASSWORD = "a long enough password";
/** model names a key holder might plant, each a formula once a spreadsheet opens the export */
const PLANTED = [
  "=1+1",
  "+1+1",
  "-1+1",
  "@SUM(1)",
  "\t=1",
  ";=1",
  "＝1+1",
  "＋1",
  "－1",
  "＠SUM(1)",
  "﹦1",
  "a,=1",
  "a;+1",
  "a|@x",
  'a; "=1',
  ' =HYPERLINK("http://example.com","x")',
  "x\t-1",
];

let gw: TestGateway;
let sim: Upstream;
beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: simProvider({ url: `${sim.url}/v1`, name: "sim", model: "model-a" }),
  });
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

/** RFC 4180 with a separator of choice: quoted cells may hold the separator, quotes ("") and line breaks. */
function parseCsv(text: string, sep: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 2;
        continue;
      }
      if (ch === '"') quoted = false;
      else cell += ch;
      i++;
      continue;
    }
    if (ch === '"' && cell === "") quoted = true;
    else if (ch === sep) {
      row.push(cell);
      cell = "";
    } else if (ch === "\r" && text[i + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      i++;
    } else cell += ch;
    i++;
  }
  if (cell !== "" || row.length) rows.push([...row, cell]);
  return rows;
}

/** How a spreadsheet reads a cell's start: NFKC folds fullwidth forms; spaces and quotes before it are skipped. */
function startsFormula(cell: string): boolean {
  const head = cell.normalize("NFKC").replace(/^[\s"]+/, "");
  return /^[=+\-@]/.test(head) || /^[\t\r]/.test(cell);
}

test("no cell of the request-log CSV starts a formula, split on ',', ';', tab or '|', quoted or not", async () => {
  const made = await gw.post(
    "/admin/v1/accounts",
    { email: "csv@example.com", password: PASSWORD, credits: 1000 },
    { authorization: `Bearer ${ADMIN}` },
  );
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  // a key label is the client's text too: written, neutralised, in the key_label column
  const key = gw.newKey({ accountId: made.json.data.result.id, label: '=HYPERLINK("http://x")' });
  const ids: string[] = [];
  for (const model of PLANTED) {
    const r = await gw.post(
      "/v1/chat/completions",
      { model, messages: [{ role: "user", content: "hello" }] },
      { authorization: `Bearer ${key.key}` },
    );
    ids.push(r.headers.get("x-request-id") ?? "");
  }
  const origin = new URL(gw.url).origin;
  const login = await fetch(`${gw.url}/dashboard/login`, {
    method: "POST",
    redirect: "manual",
    headers: { origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: "csv@example.com", password: PASSWORD }),
  });
  expect(login.status).toBe(303);
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
  // the log is written in the background: wait until every planted call is in the export
  let text = "";
  for (const until = Date.now() + 5000; Date.now() < until; await Bun.sleep(100)) {
    const csv = await fetch(`${gw.url}/dashboard/requests.csv`, { headers: { cookie } });
    expect(csv.status).toBe(200);
    text = await csv.text();
    if (parseCsv(text, ",").length > PLANTED.length) break;
  }
  const rows = parseCsv(text, ",");
  const header = rows[0] as string[];
  const modelAt = header.indexOf("model");
  expect(modelAt).toBeGreaterThan(0);
  // each row's key by its label too, as the page shows it
  const labelAt = header.indexOf("key_label");
  expect(labelAt).toBe(header.length - 1);
  expect(new Set(rows.slice(1).map((r) => r[labelAt]))).toEqual(new Set(['\'=HYPERLINK("http://x")']));
  // every planted name is in the export, intact once the apostrophes put before triggers are taken out
  const models = rows.slice(1).map((r) => r[modelAt] as string);
  for (const m of PLANTED)
    expect(
      models.map((x) => x.replaceAll("'", "")),
      JSON.stringify(m),
    ).toContain(m.replaceAll("'", ""));
  // and no cell starts a formula, however the file is split
  for (const sep of [",", ";", "\t", "|"]) {
    const quotedCells = parseCsv(text, sep).flat();
    const naiveCells = text.split(/\r\n/).flatMap((line) => line.split(sep));
    for (const cell of [...quotedCells, ...naiveCells])
      expect(startsFormula(cell), `separator ${JSON.stringify(sep)}: cell ${JSON.stringify(cell)}`).toBe(false);
  }
}, 30_000);
