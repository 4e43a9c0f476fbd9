/**
 * Issue 39 in the spirit of admission-parity.test.ts: a model group named by a function route
 * (`[routes] translation = ["par"]`) and by a /v1 call (`"model": "par"`) ends the same way: the
 * answer names the deployment that served it, a key's residency tag keeps the call on deployments
 * with the same value (every one failing is the client's failure, never another region's answer),
 * and a tag no deployment can meet is the same 400, sent nowhere, uncharged. Real server, two
 * upstream simulators recording every call.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "group-parity-admin-token-0123456789abcdef01";
const ANSWER = JSON.stringify({ translated_text: "Hola", source_language: "en", target_language: "es" });

let eu: Upstream;
let us: Upstream;
let gw: TestGateway;

beforeAll(async () => {
  [eu, us] = await Promise.all([startUpstream(), startUpstream()]);
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `${simProvider({ url: `${eu.url}/v1`, name: "sim-eu", model: "eu-default" })}
${simProvider({ url: `${us.url}/v1`, name: "sim-us", model: "us-default" })}
[cache]
enabled = false

[routes]
translation = ["par"]

[[models]]
name = "par"
fallbacks = ["par-us"]
[[models.deployments]]
provider = "sim-eu"
model = "par-eu"
tags = { region = "eu" }

[[models]]
name = "par-us"
[[models.deployments]]
provider = "sim-us"
model = "par-us"
tags = { region = "us" }
`,
  });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([eu?.close(), us?.close()]);
});

type Path = "function" | "chat";
const PATHS: Path[] = ["function", "chat"];

async function tagged(region: string | null): Promise<{ key: string; accountId: string }> {
  const k = gw.newKey({ credits: 100 });
  if (region !== null) {
    const r = await fetch(`${gw.url}/admin/v1/keys/${k.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ policy: { tags: { region } } }),
    });
    expect(r.status).toBe(200);
  }
  return k;
}

/** One call through `path`; the upstream's answer for the function is a valid translation. */
async function call(path: Path, key: string): Promise<{ status: number; code: string | null; deployment: string | null }> {
  if (path === "function") {
    for (const [sim, model] of [
      [eu, "par-eu"],
      [us, "par-us"],
    ] as const)
      sim.program([{ content: ANSWER, times: 1 }], { model });
    const r = await gw.post("/api/v1/ai/translation", { text: "Hello", target_language: "es" }, { "x-api-key": key });
    return {
      status: r.status,
      code: r.status === 200 ? null : String(r.json.error?.code),
      deployment: r.headers.get("x-textai-deployment"),
    };
  }
  const r = await gw.post(
    "/v1/chat/completions",
    { model: "par", messages: [{ role: "user", content: "Hello" }] },
    {
      authorization: `Bearer ${key}`,
    },
  );
  return {
    status: r.status,
    code: r.status === 200 ? null : String(r.json.error?.code),
    deployment: r.headers.get("x-textai-deployment"),
  };
}

const sent = () => eu.calls.count + us.calls.count;

describe("a model group through a function route and /v1", () => {
  test("the answer names the deployment that served it, on both paths", async () => {
    for (const path of PATHS) {
      const k = await tagged(null);
      expect(await call(path, k.key), path).toEqual({ status: 200, code: null, deployment: "sim-eu/par-eu" });
    }
  });

  test("a key tagged eu: the eu deployment failing is the client's failure on both paths, the us one never called", async () => {
    const outcomes = [];
    for (const path of PATHS) {
      const k = await tagged("eu");
      eu.reset();
      us.reset();
      eu.program([{ status: 500, times: 2 }], { model: "par-eu" });
      const o = await call(path, k.key);
      expect(o.status, path).toBeGreaterThanOrEqual(500);
      expect(us.calls.count, path).toBe(0);
      outcomes.push({ status: o.status, code: o.code });
      eu.reset();
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
  });

  test("a tag no deployment can meet: the same 400 invalid_request naming it, sent nowhere, uncharged", async () => {
    for (const path of PATHS) {
      const k = await tagged("apac");
      const before = sent();
      const o = await call(path, k.key);
      expect({ status: o.status, code: o.code }, path).toEqual({ status: 400, code: "invalid_request" });
      expect(sent(), path).toBe(before);
      expect(Number(await gw.deps.ledger.balance(k.accountId)), path).toBe(100);
    }
  });
});
