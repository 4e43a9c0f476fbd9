// The overview's call count says what it counts (the calls answered and charged), and links to the
// Requests page, which lists every request, refused ones too (issue 36, item 8).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

const TOKEN = "operator-token-for-the-overview-count-0123456789";
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: TOKEN } });
});
afterAll(() => gw.close());

async function signedInCookie(email: string, password: string): Promise<{ accountId: string; cookie: string }> {
  const made = await gw.post("/admin/v1/accounts", { email, password, credits: 50 }, { authorization: `Bearer ${TOKEN}` });
  expect(made.status).toBe(201);
  const res = await fetch(`${gw.url}/dashboard/login`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: new URL(gw.url).origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email, password }),
  });
  expect(res.status).toBe(303);
  return { accountId: made.json.data.result.id, cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] as string };
}

describe("dashboard overview: the month's call count says which calls it counts", () => {
  test("one answered call and one refused: the figure is 1, labelled as charged calls, and links to the Requests page that lists both", async () => {
    const { accountId, cookie } = await signedInCookie("count@example.com", "a long enough password");
    const { key } = gw.newKey({ accountId });
    const h = { "x-api-key": key };
    const answered = await gw.post("/api/v1/ai/sentiment-analysis", { text: "I love it." }, h);
    expect(answered.status).toBe(200);
    const refused = await gw.post("/api/v1/ai/sentiment-analysis", { txt: "I love it." }, h);
    expect(refused.status).toBe(400);
    const ids = [answered.headers.get("x-request-id"), refused.headers.get("x-request-id")] as string[];

    const page = await (await fetch(`${gw.url}/dashboard`, { headers: { cookie } })).text();
    const figure =
      /<div class="figure"><span class="name">([^<]+)<\/span><span class="value" data-testid="requests">(\d+)<\/span><span class="unit">([^<]*)<a href="([^"]+)">/.exec(
        page,
      );
    expect(figure, page.slice(0, 2000)).not.toBeNull();
    const [, name, value, unit, href] = figure as RegExpExecArray;
    expect(name).toBe("Charged calls this month");
    expect(Number(value)).toBe(1);
    expect(unit).toContain("answered and charged");
    const month = new Date().toISOString().slice(0, 8);
    expect(href).toBe(`/dashboard/requests?from=${month}01`);

    // the page it links to lists every request of the month, the refused one included (the log is written every 500 ms)
    let listed = "";
    for (let i = 0; i < 20 && !ids.every((id) => listed.includes(`data-request-id="${id}"`)); i++) {
      if (i > 0) await Bun.sleep(250);
      listed = await (await fetch(gw.url + href.replaceAll("&amp;", "&"), { headers: { cookie } })).text();
    }
    for (const id of ids) expect(listed).toContain(`data-request-id="${id}"`);

    // the JSON figure is the same count
    const api = await fetch(`${gw.url}/api/v1/account/usage`, { headers: h });
    expect(((await api.json()) as { data: { result: { requests: number } } }).data.result.requests).toBe(1);
    // two password hashes and the sentiment engine's first load: slow on a busy machine
  }, 30_000);

  test("the operator's view of the account uses the same label", async () => {
    const { accountId } = await signedInCookie("count2@example.com", "a long enough password");
    const op = await fetch(`${gw.url}/dashboard/operator/login`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: new URL(gw.url).origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: TOKEN }),
    });
    const cookie = (op.headers.get("set-cookie") ?? "").split(";")[0] as string;
    const page = await (await fetch(`${gw.url}/dashboard/operator/accounts/${accountId}`, { headers: { cookie } })).text();
    expect(page).toContain('<span class="name">Charged calls this month</span>');
    expect(page).not.toContain("Requests this month");
  }, 30_000);
});
