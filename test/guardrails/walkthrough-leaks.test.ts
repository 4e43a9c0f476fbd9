/**
 * What a self-hoster's walkthrough (2026-12-06) saw reach the provider through the guardrails, and
 * one false alarm, through a real server under a plan that redacts every kind:
 * - an Irish address's tail: "Road Lower", the town's postal district ("Dublin 6") and the Eircode
 *   ("D06 X2Y3") went out after "[ADDRESS_1]";
 * - a lower-case name with Irish "o" written apart ("sean o brien"): "o brien" went out;
 * - "the Lyon office" went out as "the [NAME_1] office".
 * And, found beside them, a lower-case name after "ask", "ping" and the like: "ask sean murphy" went out whole.
 */
import { expect, test } from "bun:test";
import { rawPost } from "../openai/setup";
import { guardedSuite, REDACT_EVERY_KIND } from "./setup";

const suite = guardedSuite(`[plans.redacting.guardrails]\n${REDACT_EVERY_KIND}\n`, ["redacting"]);

async function sentFor(content: string): Promise<string> {
  const from = suite.sim.calls.requests.length;
  const r = await rawPost(suite.gw, "/v1/chat/completions", suite.keys.redacting as string, {
    model: "model-a",
    messages: [{ role: "user", content }],
  });
  expect(r.status).toBe(200);
  return suite.sentSince(from);
}

test("an Irish address goes out whole as one placeholder: the direction word, the postal district, the Eircode", async () => {
  for (const [text, parts] of [
    [
      "Please ship it to 14 Rathmines Road Lower, Dublin 6, D06 X2Y3 by Friday.",
      ["Rathmines", "Lower", "Dublin 6", "D06", "X2Y3"],
    ],
    ["Deliver to 14 Main Street, Galway H91 E2K3 please.", ["Main Street", "Galway", "H91", "E2K3"]],
    ["Our new address is 2 Harcourt Street Upper, Dublin 2 from Monday.", ["Harcourt", "Upper", "Dublin 2"]],
  ] as const) {
    const sent = await sentFor(text);
    for (const p of parts) expect(sent, text).not.toContain(p);
    expect(sent).toContain("[ADDRESS_1]");
  }
});

test("a lower-case name with Irish 'o' written apart goes out whole as one placeholder", async () => {
  const sent = await sentFor("talk to sean o brien about the invoice");
  expect(sent).not.toContain("brien");
  expect(sent).toContain("talk to [NAME_1] about the invoice");
});

test("a lower-case name after a verb that reaches a person (ask, tell, ping, email, cc, met) goes out as one placeholder", async () => {
  for (const [text, name] of [
    ["ask sean murphy about the invoice", "murphy"],
    ["ping anna kowalski when the build is done", "kowalski"],
  ] as const) {
    const sent = await sentFor(text);
    expect(sent, text).not.toContain(name);
    expect(sent, text).toContain("[NAME_1]");
  }
});

test("a town before a firm's site word is no name: 'the Lyon office' goes out as written", async () => {
  const sent = await sentFor("Send the files to the Lyon office before noon, and copy our Leeds warehouse.");
  expect(sent).toContain("the Lyon office");
  expect(sent).toContain("our Leeds warehouse");
  expect(sent).not.toContain("[NAME_");
});
