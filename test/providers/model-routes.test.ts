/**
 * Conditional routing (issue 39, docs/routing.md): `[[model_routes]]` rules send a request for a
 * model to another model group when its `x-textai-route` header or the caller's tags match. A
 * header picks the group on /v1 and on a function alike; a value no rule names falls through to
 * the model asked for; the caller's residency tags still restrict the group picked (every allowed
 * deployment failing is the client's failure). Real server, two upstream simulators recording
 * every call; and the rules' checks at config load.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { groupToml } from "../helpers/groups-toml";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

const ADMIN = "model-routes-admin-token-0123456789abcdef01";

let a: Upstream;
let b: Upstream;
let gw: TestGateway;

const providers = () => `${simProvider({ url: `${a.url}/v1`, name: "sim-a", model: "a-default" })}
${simProvider({ url: `${b.url}/v1`, name: "sim-b", model: "b-default" })}`;

const groups = [
  groupToml("rt", [{ provider: "sim-a", model: "rt-default", tags: { region: "eu" } }]),
  groupToml("rt-batch", [
    { provider: "sim-b", model: "batch-us", tags: { region: "us" } },
    { provider: "sim-a", model: "batch-eu", tags: { region: "eu" } },
  ]),
  groupToml("rt-gold", [{ provider: "sim-a", model: "gold" }]),
].join("\n");

const rules = `
[[model_routes]]
model = "rt"
when_header = "batch"
group = "rt-batch"

[[model_routes]]
model = "rt"
when_tags = { tier = "gold" }
group = "rt-gold"
`;

beforeAll(async () => {
  [a, b] = await Promise.all([startUpstream(), startUpstream()]);
  gw = await startGateway({
    env: { TEXTAI_ADMIN_TOKEN: ADMIN },
    configText: `${providers()}\n[cache]\nenabled = false\n${groups}${rules}`,
  });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([a?.close(), b?.close()]);
});

async function keyWith(policy?: unknown): Promise<string> {
  const k = gw.newKey({ credits: 1000 });
  if (policy !== undefined) {
    const r = await fetch(`${gw.url}/admin/v1/keys/${k.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ policy }),
    });
    expect(r.status).toBe(200);
  }
  return k.key;
}

type Path = "chat" | "function";

async function call(path: Path, key: string, route?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (route !== undefined) headers["x-textai-route"] = route;
  const r =
    path === "chat"
      ? await gw.post("/v1/chat/completions", { model: "rt", messages: [{ role: "user", content: "Hello" }] }, headers)
      : await gw.post("/api/v1/ai/chat", { message: "Hello", model: "rt" }, headers);
  return {
    status: r.status,
    deployment: r.headers.get("x-textai-deployment"),
    code: r.json.error?.code as string | undefined,
    message: r.json.error?.message as string | undefined,
  };
}

describe("[[model_routes]] through a real server", () => {
  for (const path of ["chat", "function"] as Path[]) {
    test(`${path}: the x-textai-route header picks the group; no header or an unknown value is the model asked for`, async () => {
      const key = await keyWith();
      expect(await call(path, key)).toMatchObject({ status: 200, deployment: "sim-a/rt-default" });
      expect(await call(path, key, "batch")).toMatchObject({ status: 200, deployment: "sim-b/batch-us" });
      expect(await call(path, key, "nightly")).toMatchObject({ status: 200, deployment: "sim-a/rt-default" });
    });

    test(`${path}: residency still applies to the group picked, even when its eu deployment fails`, async () => {
      const key = await keyWith({ tags: { region: "eu" } });
      expect(await call(path, key, "batch")).toMatchObject({ status: 200, deployment: "sim-a/batch-eu" });
      a.reset();
      b.reset();
      a.program([{ status: 500, times: 10 }], { model: "batch-eu" });
      const failed = await call(path, key, "batch");
      expect(failed.status).toBeGreaterThanOrEqual(500);
      expect(a.calls.count).toBeGreaterThanOrEqual(1);
      expect(b.calls.count).toBe(0);
      a.reset();
    });
  }

  test("a caller's tag picks a group (the key's or its account's), the header rule coming first in config order", async () => {
    expect((await call("chat", await keyWith({ tags: { tier: "gold" } }))).deployment).toBe("sim-a/gold");
    const k = gw.newKey({ credits: 1000 });
    const r = await fetch(`${gw.url}/admin/v1/accounts/${k.accountId}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ tags: { tier: "gold" } }),
    });
    expect(r.status).toBe(200);
    expect((await call("chat", k.key)).deployment).toBe("sim-a/gold");
    expect((await call("chat", k.key, "batch")).deployment).toBe("sim-b/batch-us");
  });

  test("a key whose allowed_models names only the model asked for may not be routed to another group", async () => {
    const key = await keyWith({ allowed_models: ["rt"] });
    expect(await call("chat", key)).toMatchObject({ status: 200, deployment: "sim-a/rt-default" });
    const before = a.calls.count + b.calls.count;
    for (const path of ["chat", "function"] as Path[]) {
      const refused = await call(path, key, "batch");
      expect(refused.status).toBe(403);
      // the refusal names the group the rule picked and why the call went there (it said "any model that serves ...")
      expect(refused.message).toStartWith(
        'this key may not use the model group "rt-batch", where a [[model_routes]] rule sends "rt" (the request\'s x-textai-route: batch); its allowed models: rt',
      );
    }
    expect(a.calls.count + b.calls.count).toBe(before);
  });
});

describe("[[model_routes]] at config load", () => {
  const load = (extra: string) => () => loadConfig({ TEXTAI_CONFIG: "config.toml" }, `${providers()}\n${groups}${extra}`);

  test("a valid table loads, in config order", () => {
    expect(load(rules)().modelRoutes).toEqual([
      { model: "rt", whenHeader: "batch", group: "rt-batch" },
      { model: "rt", whenTags: { tier: "gold" }, group: "rt-gold" },
    ]);
  });

  test("an unknown group, a rule to itself, a rule without a condition, an unknown field: each stops the start naming it", () => {
    expect(load('[[model_routes]]\nmodel = "rt"\nwhen_header = "x"\ngroup = "nope"\n')).toThrow(
      /model_routes\[0\]\.group: unknown model group "nope"/,
    );
    expect(load('[[model_routes]]\nmodel = "rt"\nwhen_header = "x"\ngroup = "rt"\n')).toThrow(/to itself/);
    expect(load('[[model_routes]]\nmodel = "rt"\ngroup = "rt-gold"\n')).toThrow(/model_routes\[0\]: needs a condition/);
    expect(load('[[model_routes]]\nmodel = "rt"\nwhen = "x"\ngroup = "rt-gold"\n')).toThrow(ConfigError);
  });
});
