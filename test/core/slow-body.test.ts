import { afterAll, beforeAll, expect, test } from "bun:test";
import { wordCount } from "../helpers/echo-function";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { RawConnection } from "../helpers/raw-http";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ functions: [wordCount], configText: "[limits]\nbody_timeout_ms = 600\n" });
});
afterAll(() => gw.close());

test("a body trickling in, or never ending, is answered 408 within limits.body_timeout_ms and its connection closed", async () => {
  const { key } = gw.newKey({ credits: 5 });
  const head = (framing: string) =>
    `POST /api/v1/ai/word-count HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\n${framing}\r\n\r\n`;
  const sized = new RawConnection(gw.port);
  const chunked = new RawConnection(gw.port);
  await Promise.all([sized.ready, chunked.ready]);
  sized.write(`${head("content-length: 100000")}{"text": "`);
  chunked.write(`${head("transfer-encoding: chunked")}3\r\n{"t\r\n`);
  const t0 = performance.now();
  const drip = setInterval(() => {
    if (sized.state === "open") sized.write("a");
    if (chunked.state === "open") chunked.write("1\r\na\r\n");
  }, 100);
  try {
    for (const c of [sized, chunked]) {
      const res = await c.next(5000);
      expect(res?.status, res?.body).toBe(408);
      expect(JSON.parse(res?.body ?? "{}").error.code).toBe("request_timeout");
      expect(await c.closed(2000)).toBe(true);
    }
    expect(performance.now() - t0).toBeLessThan(3000);
    // meanwhile the gateway answers, and nothing was charged
    expect((await gw.get("/health")).status).toBe(200);
    const usage = await gw.get("/api/v1/account/usage", { "x-api-key": key });
    expect(usage.json.data.result.credits_used).toBe(0);
  } finally {
    clearInterval(drip);
  }
});

test("a chunked body that never stops is answered 413 at the size limit, while it is still being sent, and its connection closed", async () => {
  const { key } = gw.newKey({ credits: 5 });
  const c = new RawConnection(gw.port);
  await c.ready;
  c.write(
    `POST /api/v1/ai/word-count HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\ntransfer-encoding: chunked\r\n\r\n`,
  );
  const chunk = `10000\r\n${"a".repeat(0x10000)}\r\n`;
  // the client sends on until the answer begins to arrive
  let answered = false;
  c.socket.once("data", () => {
    answered = true;
  });
  let sent = 0;
  while (c.state === "open" && sent < 64 && !answered) {
    c.write(chunk);
    sent++;
    await Bun.sleep(5);
  }
  const res = await c.next(3000);
  expect(res?.status, res?.body).toBe(413);
  expect(JSON.parse(res?.body ?? "{}").error.code).toBe("payload_too_large");
  expect(res?.headers.connection).toBe("close");
  // the answer came at about the 1 MiB limit, not at the end of what the client meant to send
  expect(sent).toBeLessThan(64);
  // the rest is read and dropped for a while (the lingering close), then the connection ends
  expect(await c.closed(3000)).toBe(true);
});
