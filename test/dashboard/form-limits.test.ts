/**
 * A dashboard form's length limits (`maxlength`, `minlength`) are the server's own checks, taken
 * from the constants the server checks with: every limited field of every form is listed here,
 * read from the pages the real server serves, and compared. 2026-12-06, a walkthrough: the join
 * form's name had maxlength="200" while the server (and docs/teams.md) take 254 characters, and so
 * did the operator's "Create an account" form.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MAX_WEBHOOK_URL } from "../../src/alerts/sign";
import { MAX_LABEL, MAX_NAME } from "../../src/auth/attributes";
import { MIN_PASSWORD } from "../../src/auth/passwords";
import { MAX_REASON } from "../../src/credits/amount";
import { shown, submit } from "../helpers/dashboard-forms";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN = "operator-token-for-the-form-limits-test-0123";
const admin = { authorization: `Bearer ${TOKEN}` };
const PASSWORD = "a long enough password";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN }, configText: "[dashboard]\nsignup = true\n" });
});
afterAll(() => gw.close());

/** each limited input of a page: "FORM ACTION NAME" -> { maxlength, minlength } as the page says them */
async function limitsOf(path: string, cookie: string): Promise<Map<string, Record<string, number>>> {
  const res = await fetch(gw.url + path, { headers: cookie ? { cookie } : {} });
  expect(res.status, path).toBe(200);
  const found = new Map<string, Record<string, number>>();
  let action = "";
  await new HTMLRewriter()
    .on("form", { element: (e) => void (action = e.getAttribute("action") ?? "") })
    .on("input", {
      element(e) {
        const limits: Record<string, number> = {};
        for (const attr of ["maxlength", "minlength"]) {
          const v = e.getAttribute(attr);
          if (v !== null) limits[attr] = Number(v);
        }
        if (Object.keys(limits).length) found.set(`${action} ${e.getAttribute("name")}`, limits);
      },
    })
    .transform(res)
    .text();
  return found;
}

test("every length limit of every dashboard form is the server's own, and a name of the largest length joins", async () => {
  const made = await gw.post("/admin/v1/accounts", { email: "limits@example.com", password: PASSWORD }, admin);
  expect(made.status).toBe(201);
  const account = made.json.data.result.id as string;
  const owner = await submit(gw.url, "/dashboard/login", { email: "limits@example.com", password: PASSWORD });
  expect(owner.location, shown(owner)).toBe("/dashboard");
  const op = await submit(gw.url, "/dashboard/operator/login", { token: TOKEN });
  expect(op.location, shown(op)).toBe("/dashboard/operator");
  const invited = await gw.post(`/admin/v1/accounts/${account}/members`, { email: "joiner@example.com", role: "viewer" }, admin);
  expect(invited.status).toBe(201);
  const join = new URL(invited.json.data.result.url);

  const all = new Map<string, Record<string, number>>();
  for (const [path, cookie] of [
    ["/dashboard/signup", ""],
    ["/dashboard/keys", owner.cookie],
    ["/dashboard/password", owner.cookie],
    ["/dashboard/alerts", owner.cookie],
    ["/dashboard/members", owner.cookie],
    ["/dashboard/operator", op.cookie],
    [`/dashboard/operator/accounts/${account}`, op.cookie],
    [join.pathname + join.search, ""],
  ] as const)
    for (const [k, v] of await limitsOf(path, cookie)) all.set(k.replace(join.search, "").replace(account, "ACC"), v);

  expect(Object.fromEntries(all)).toEqual({
    "/dashboard/signup password": { minlength: MIN_PASSWORD },
    "/dashboard/keys label": { maxlength: MAX_LABEL },
    "/dashboard/password next": { minlength: MIN_PASSWORD },
    "/dashboard/alerts url": { maxlength: MAX_WEBHOOK_URL },
    "/dashboard/operator/accounts password": { minlength: MIN_PASSWORD },
    "/dashboard/operator/accounts name": { maxlength: MAX_NAME },
    "/dashboard/operator/accounts/ACC/credits reason": { maxlength: MAX_REASON },
    "/dashboard/join/ACC name": { maxlength: MAX_NAME },
    "/dashboard/join/ACC password": { minlength: MIN_PASSWORD },
  });

  // the join form takes a name as long as its field lets one be typed
  const joined = await submit(gw.url, join.pathname + join.search, { name: "n".repeat(MAX_NAME), password: PASSWORD });
  expect(joined.location, shown(joined)).toBe("/dashboard");
}, 30_000);
