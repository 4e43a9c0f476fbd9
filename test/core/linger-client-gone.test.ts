import { afterAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SpawnedGateway, spawnGateway } from "../helpers/spawned";

/**
 * A client that declares a body far over the limit, reads the start of its 413 and goes away while
 * the connection lingers (http/linger.ts) must not take the gateway with it: the answer's stream is
 * cancelled then, and a close of a cancelled stream threw outside any handler and ended the process
 * (found 2026-12-06 with a raw socket against `textai serve`). A real process, so that an uncaught
 * error ends it as it would in production.
 */
let gw: SpawnedGateway;
afterAll(() => gw?.proc.kill());

test("clients gone while their 413 lingers leave the gateway up and answering", async () => {
  gw = await spawnGateway({ TEXTAI_DB: join(mkdtempSync(join(tmpdir(), "textai-linger-")), "textai.db") });
  const { port, hostname } = new URL(gw.url);
  const goAway = () =>
    new Promise<void>((resolve) => {
      const s = connect({ port: Number(port), host: hostname }, () => {
        s.write(
          `POST /api/v1/ai/pii-redaction HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 99999999\r\n\r\n{"text":"`,
        );
      });
      // the answer's first bytes, then the client is gone (a reset, no more of its body)
      s.once("data", () => {
        s.resetAndDestroy();
        resolve();
      });
      s.once("error", () => resolve());
    });
  for (let round = 0; round < 5; round++) await Promise.all([goAway(), goAway(), goAway()]);
  // the lingering readers notice within their idle bound (1 s)
  await Bun.sleep(1500);
  expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  expect(gw.proc.exitCode).toBeNull();
});
