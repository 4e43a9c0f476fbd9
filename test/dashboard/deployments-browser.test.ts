/**
 * Issue 39: the operator console shows each model group's deployments and their state (in flight,
 * calls and tokens in the window against their limits, cool-down, latency), and /metrics has them
 * per deployment, labelled by the deployment's id only. The state is filled through the service the
 * group router uses (deps.deploymentState); a configured deployment never called shows too. TEXTAI_SCREENSHOTS=1 writes docs/screenshots/deployments.png.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { groupToml } from "../helpers/groups-toml";
import { simProvider } from "../helpers/upstream";
import { skipBrowser } from "./browser-suite";

const CHROMIUM = "/usr/bin/chromium";
const WAIT = { timeout: 20_000 };
const ADMIN = "operator-token-for-deployments-0123456789";
const SHOTS =
  process.env.TEXTAI_SCREENSHOTS === "1"
    ? join(import.meta.dir, "../../docs/screenshots")
    : mkdtempSync(join(tmpdir(), "textai-shots-"));
const EU = "chat-fast/azure-eu/gpt-4o-mini";
const ORG2 = "chat-fast/openai-org2/gpt-4o-mini";
const LARGE = "chat-large/anthropic/claude-sonnet";
/** a configured deployment no call has reached: shown (and on /metrics) from the start */
const IDLE = "chat-fast/idle/never-called";
const CONFIG = `${simProvider({ url: "http://127.0.0.1:9/v1", name: "idle", model: "never-called" })}
${groupToml("chat-fast", [{ provider: "idle", model: "never-called", rpm: 60 }], "ordered")}`;

describe("model-group deployments seen from outside", () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN }, configText: CONFIG });
    const state = gw.deps.deploymentState;
    for (let i = 0; i < 3; i++) expect(await state.acquire(EU, { rpm: 600, tpm: 200_000 }, 1000)).toBe(true);
    state.release(EU, { tokensEstimated: 1000, tokensUsed: 400, ttfbMs: 120 });
    state.release(EU, { tokensEstimated: 1000, tokensUsed: 600, ttfbMs: 220 });
    expect(await state.acquire(ORG2, { rpm: 1 }, 10)).toBe(true);
    expect(await state.acquire(ORG2, { rpm: 1 }, 10)).toBe(false);
    await state.coolDown(ORG2, 30_000);
    expect(await state.acquire(LARGE, {}, 10)).toBe(true);
  });
  afterAll(async () => {
    await gw?.close();
  });

  test("/metrics: calls, refusals, cool-downs, in flight, latency and remaining rpm/tpm per deployment id", async () => {
    const text = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    const value = (name: string, id: string) => {
      const line = text.split("\n").find((l) => l.startsWith(`${name}{deployment="${id}"}`));
      return line === undefined ? undefined : Number(line.split(" ").at(-1));
    };
    expect(value("textai_deployment_calls_total", EU)).toBe(3);
    expect(value("textai_deployment_refusals_total", ORG2)).toBe(1);
    expect(value("textai_deployment_cooldowns_total", ORG2)).toBe(1);
    expect(value("textai_deployment_cooling", ORG2)).toBe(1);
    expect(value("textai_deployment_cooling", EU)).toBe(0);
    expect(value("textai_deployment_in_flight", EU)).toBe(1);
    // EWMA, alpha 0.2: 120, then 120 + 0.2 * (220 - 120)
    expect(value("textai_deployment_latency_seconds", EU)).toBeCloseTo(0.14, 6);
    expect(value("textai_deployment_latency_seconds", LARGE)).toBeUndefined();
    expect(value("textai_deployment_remaining_rpm", EU)).toBe(597);
    expect(value("textai_deployment_remaining_tpm", EU)).toBe(200_000 - 2000);
    expect(value("textai_deployment_remaining_rpm", ORG2)).toBe(0);
    // no limit, no remaining
    expect(value("textai_deployment_remaining_rpm", LARGE)).toBeUndefined();
    expect(text).toContain("# TYPE textai_deployment_calls_total counter");
    expect(value("textai_deployment_calls_total", IDLE)).toBe(0);
    expect(value("textai_deployment_remaining_rpm", IDLE)).toBe(60);
  });

  describe.skipIf(skipBrowser)("operator console in headless Chromium", () => {
    let browser: Browser;
    beforeAll(async () => {
      if (!existsSync(CHROMIUM))
        throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set TEXTAI_SKIP_BROWSER=1`);
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    });
    afterAll(async () => {
      await browser?.close();
    });

    test("each group's deployments and their state", async () => {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${gw.url}/dashboard/operator`);
      await page.getByLabel("Admin token").fill(ADMIN);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Operator console" }).waitFor(WAIT);
      const fast = page.getByRole("table", { name: "Model group chat-fast: its deployments" });
      await fast.waitFor(WAIT);
      const eu = fast.getByRole("row", { name: /azure-eu\/gpt-4o-mini/ });
      expect(await eu.getByRole("cell").allTextContents()).toEqual([
        "azure-eu/gpt-4o-mini",
        "1",
        "3 of 600",
        "2000 of 200000",
        "no",
        "140 ms",
        "3",
      ]);
      const org2 = await fast
        .getByRole("row", { name: /openai-org2/ })
        .getByRole("cell")
        .allTextContents();
      expect(org2.slice(0, 3)).toEqual(["openai-org2/gpt-4o-mini", "1", "1 of 1"]);
      // a 30 s cool-down, seen a few seconds after it began (more on a loaded machine)
      const left = Number(/^cooling down, (\d+) s left$/.exec(org2[4] ?? "")?.[1]);
      expect(left).toBeGreaterThanOrEqual(15);
      expect(left).toBeLessThanOrEqual(30);
      expect(org2[5]).toBe("no answer yet");
      expect(
        await fast
          .getByRole("row", { name: /idle\/never-called/ })
          .getByRole("cell")
          .allTextContents(),
      ).toEqual(["idle/never-called", "0", "0 of 60", "0", "no", "no answer yet", "0"]);
      const large = page.getByRole("table", { name: "Model group chat-large: its deployments" });
      expect(
        await large
          .getByRole("row", { name: /anthropic\/claude-sonnet/ })
          .getByRole("cell")
          .nth(2)
          .textContent(),
      ).toBe("1");
      await page.screenshot({ path: join(SHOTS, "deployments.png"), fullPage: true });
      expect(errors).toEqual([]);
    }, 60_000);
  });
});
