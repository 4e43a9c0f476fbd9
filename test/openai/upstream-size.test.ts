/**
 * An upstream whose answer never ends (a broken or hostile OpenAI-compatible server): the gateway
 * reads at most 64 MiB of it (MAX_UPSTREAM_BODY), leaves the rest unread, and treats the attempt as
 * a failed connection: the next provider answers, or the client gets 502 uncharged. Before the
 * cap the body was read, and held in memory, until the provider's timeout.
 */
import { expect, test } from "bun:test";
import { MAX_UPSTREAM_BODY } from "../../src/providers/http-transport";
import { openaiClient, providerToml, rawPost, useGateway } from "./setup";

const ctx = useGateway({
  configText: (url) => `
${providerToml("primary", url, "model-a", "timeout_ms = 60000")}
${providerToml("backup", url, "model-b", 'models = { "shared" = "model-a" }')}
`,
});

const ask = (content: string) => [{ role: "user" as const, content }];

/** Waits until the simulator has stopped sending (the gateway left the body), and gives what it sent. */
async function settled(tally: { sent: number }): Promise<number> {
  let last = -1;
  while (tally.sent !== last) {
    last = tally.sent;
    await Bun.sleep(100);
  }
  return last;
}

test("an endless answer is cut at 64 MiB: the next provider answers, and one credit is charged", async () => {
  const { sim, gw } = ctx;
  const { key, accountId } = gw.newKey({ credits: 10 });
  const tally = { sent: 0 };
  sim.reset();
  sim.program([{ endless: tally }]);
  const { data, response } = await openaiClient(gw, key)
    .chat.completions.create({ model: "model-a", messages: ask("endless then answer") })
    .withResponse();
  expect(data.choices[0]?.message.content).toBeString();
  expect(response.headers.get("x-textai-provider")).toBe("backup");
  const sent = await settled(tally);
  expect(sent).toBeGreaterThanOrEqual(MAX_UPSTREAM_BODY - 1024 * 1024);
  // left unread past the cap (what sits in socket buffers aside), not read on until the 60 s timeout
  expect(sent).toBeLessThan(2 * MAX_UPSTREAM_BODY);
  expect(gw.deps.ledger.balance(accountId)).toBe(9);
});

test("with no provider left: 502 provider_error, nothing charged, and the node serves on", async () => {
  const { sim, gw } = ctx;
  const { key, accountId } = gw.newKey({ credits: 10 });
  const tally = { sent: 0 };
  sim.reset();
  // both providers' attempts
  sim.program([{ endless: tally, times: 2 }]);
  const res = await rawPost(gw, "/v1/chat/completions", key, { model: "model-a", messages: ask("endless, alone") });
  const body = (await res.json()) as { error: { code: string } };
  expect(res.status).toBe(502);
  expect(body.error.code).toBe("provider_error");
  expect(sim.calls.count).toBe(2);
  expect(await settled(tally)).toBeLessThan(4 * MAX_UPSTREAM_BODY);
  expect(gw.deps.ledger.balance(accountId)).toBe(10);
  const health = await fetch(`${gw.url}/health`);
  expect(health.status).toBe(200);
});
