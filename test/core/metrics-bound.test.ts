import { describe, expect, test } from "bun:test";
import { MAX_LABEL_SETS, Metrics } from "../../src/metrics";

const series = (text: string, name: string) =>
  text.split("\n").filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe("metrics label sets are bounded", () => {
  test("a counter labelled by an unbounded value stops growing at MAX_LABEL_SETS; the rest is counted as overflow", () => {
    const m = new Metrics();
    const n = MAX_LABEL_SETS + 500;
    for (let i = 0; i < n; i++) m.inc("t_total", "test", { key: `key_${i}` });
    const lines = series(m.render(), "t_total");
    expect(lines.length).toBe(MAX_LABEL_SETS + 1);
    expect(lines).toContain('t_total{overflow="true"} 500');
    // label sets already held keep counting under their own labels
    m.inc("t_total", "test", { key: "key_0" });
    expect(series(m.render(), "t_total")).toContain('t_total{key="key_0"} 2');
  });

  test("a histogram is bounded the same way, and counts every observation", () => {
    const m = new Metrics();
    for (let i = 0; i < MAX_LABEL_SETS + 10; i++) m.observe("t_seconds", "test", { request: `req_${i}` }, 0.002);
    const counts = series(m.render(), "t_seconds_count");
    expect(counts.length).toBe(MAX_LABEL_SETS + 1);
    expect(counts).toContain('t_seconds_count{overflow="true"} 10');
  });

  test("bounded labels (function x status) are all kept", () => {
    const m = new Metrics();
    for (const fn of ["a", "b", "c"])
      for (const status of ["200", "400", "429"])
        for (let i = 0; i < 100; i++) m.inc("r_total", "test", { function: fn, status });
    const lines = series(m.render(), "r_total");
    expect(lines.length).toBe(9);
    expect(lines).toContain('r_total{function="b",status="429"} 100');
  });
});

describe("the gateway's metrics", () => {
  test("are labelled per function and status, never per key or request", async () => {
    const { startGateway } = await import("../helpers/gateway");
    const { wordCount } = await import("../helpers/echo-function");
    const gw = await startGateway({
      functions: [wordCount],
      env: { TEXTAI_ADMIN_TOKEN: "bound-admin-0123456789abcdef0123456789" },
    });
    const scrape = async () =>
      (await fetch(`${gw.url}/metrics`, { headers: { authorization: "Bearer bound-admin-0123456789abcdef0123456789" } })).text();
    try {
      const seriesCount = async () => (await scrape()).split("\n").filter((l) => /^textai_/.test(l)).length;
      const first = gw.newKey();
      expect((await gw.post("/api/v1/ai/word-count", { text: "a b" }, { "x-api-key": first.key })).status).toBe(200);
      await seriesCount(); // the scrape itself is a request (function "other"): its series exist from now on
      const before = await seriesCount();
      const keys = Array.from({ length: 20 }, () => gw.newKey());
      const requestIds: string[] = [];
      for (const k of keys) {
        const r = await gw.post("/api/v1/ai/word-count", { text: `one two ${k.id}` }, { "x-api-key": k.key });
        expect(r.status).toBe(200);
        requestIds.push(r.json.request_id);
      }
      const text = await scrape();
      expect(await seriesCount()).toBe(before);
      for (const k of [first, ...keys]) {
        expect(text).not.toContain(k.id);
        expect(text).not.toContain(k.accountId);
      }
      for (const id of requestIds) expect(text).not.toContain(id);
    } finally {
      await gw.close();
    }
  });
});
