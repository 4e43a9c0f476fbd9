import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RawConnection } from "../helpers/raw-http";
import { type SpawnedGateway, spawnGateway } from "../helpers/spawned";

// Issue 36, item 7: the drain ends as soon as nothing is in flight, and a request whose body or
// headers stall is not waited for past the drain's grace. Each gateway is its own process, stopped
// by SIGTERM as an orchestrator would.

async function gateway(grace: number): Promise<{ gw: SpawnedGateway; port: number; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "textai-drain-"));
  const gw = await spawnGateway({ TEXTAI_DB: join(dir, "textai.db"), TEXTAI_DRAIN_GRACE_MS: String(grace) });
  return { gw, port: Number(new URL(gw.url).port), dir };
}

/** SIGTERM, then the milliseconds until the process exited (it is killed after `limitMs`) */
async function stopTook(gw: SpawnedGateway, limitMs: number): Promise<{ ms: number; code: number }> {
  const t0 = performance.now();
  gw.proc.kill("SIGTERM");
  const killer = setTimeout(() => gw.proc.kill(9), limitMs);
  const code = await gw.exited;
  clearTimeout(killer);
  return { ms: performance.now() - t0, code };
}

const head = (framing: string) =>
  `POST /api/v1/ai/sentiment-analysis HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`;

test("an idle gateway stops at once on SIGTERM, kept-alive connections and all, whatever its grace", async () => {
  const { gw, port, dir } = await gateway(5000);
  try {
    // served something, and a kept-alive connection stays open, idle
    const kept = new RawConnection(port);
    await kept.ready;
    kept.send("GET", "/health");
    expect((await kept.next(5000))?.status).toBe(200);
    const { ms, code } = await stopTook(gw, 10_000);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(1000);
    expect(await kept.closed(1000)).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);

test("uploads stalled halfway and headers half sent are not waited for past the grace; the uploads are answered 503", async () => {
  const grace = 1000;
  const { gw, port, dir } = await gateway(grace);
  try {
    const chunked = new RawConnection(port);
    const sized = new RawConnection(port);
    const headers = new RawConnection(port);
    await Promise.all([chunked.ready, sized.ready, headers.ready]);
    chunked.write(`${head("transfer-encoding: chunked")}5\r\n{"tex\r\n`);
    sized.write(`${head("content-length: 5000")}{"text": "half of it`);
    headers.write("POST /api/v1/ai/sentiment-analysis HTTP/1.1\r\nhost: x\r\ncontent-type: app");
    await Bun.sleep(200);
    const stopped = stopTook(gw, 40_000);
    for (const c of [chunked, sized]) {
      const res = await c.next(grace + 3000);
      expect(res?.status, res?.body).toBe(503);
      expect(JSON.parse(res?.body ?? "{}").error.code).toBe("service_unavailable");
      expect(res?.headers.connection).toBe("close");
    }
    const { ms, code } = await stopped;
    expect(code).toBe(0);
    expect(ms).toBeLessThan(grace + 1500);
    for (const c of [chunked, sized, headers]) expect(await c.closed(1000)).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
