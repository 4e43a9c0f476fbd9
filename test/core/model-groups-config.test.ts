/**
 * `[[models]]` (issue 39, CONTRACT section 16): model groups are validated when the config loads,
 * each mistake refused with an error naming where it is.
 */
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { MemoryDeploymentState } from "../../src/deployments/memory";
import { getFunction } from "../../src/functions/registry";
import { buildProviders } from "../../src/providers/index";
import { ProviderRouter } from "../../src/providers/router";

const PROVIDERS = `
[[providers]]
name = "eu"
type = "openai-compatible"
base_url = "http://127.0.0.1:9/v1"

[[providers]]
name = "us"
type = "openai-compatible"
base_url = "http://127.0.0.1:9/v1"
`;

const load = (text: string) => loadConfig({}, PROVIDERS + text);
const refused = (text: string): string => {
  try {
    load(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("the config loaded");
};

const group = (name: string, extra = "", deployments = '[[models.deployments]]\nprovider = "eu"\nmodel = "m"\n') =>
  `[[models]]\nname = "${name}"\n${extra}\n${deployments}`;

describe("[[models]]", () => {
  test("a valid group loads with its defaults, and a route may name it", () => {
    const c =
      load(`${group("chat", 'strategy = "weighted"\nfallbacks = ["spare"]', '[[models.deployments]]\nprovider = "eu"\nmodel = "m"\nweight = 3\nrpm = 60\ntags = { region = "eu" }\n')}
${group("spare")}
[routes]
translation = ["chat", "us"]
`);
    expect(c.models.map((g) => g.name)).toEqual(["chat", "spare"]);
    const [d] = c.models[0]?.deployments ?? [];
    expect(d).toMatchObject({
      id: "chat/eu/m",
      provider: "eu",
      model: "m",
      weight: 3,
      rpm: 60,
      tags: { region: "eu" },
      priority: 0,
    });
    expect(c.models[1]).toMatchObject({ strategy: "ordered", fallbacks: [] });
    expect(c.routes.translation).toEqual(["chat", "us"]);
    expect(loadConfig({}, PROVIDERS).models).toEqual([]);
  });

  test("an unknown provider, a name taken by a provider, a duplicate group", () => {
    expect(refused(group("chat", "", '[[models.deployments]]\nprovider = "asia"\nmodel = "m"\n'))).toContain(
      'models[0] ("chat").deployments[0].provider: unknown provider "asia"',
    );
    expect(refused(group("eu"))).toContain("may not be named as a provider");
    expect(refused(group("local"))).toContain("may not be named as a provider");
    expect(refused(group("chat") + group("chat"))).toContain('duplicate model group "chat"');
  });

  test("a weight of 0 or below, an unknown strategy", () => {
    for (const w of ["0", "-1"])
      expect(refused(group("chat", "", `[[models.deployments]]\nprovider = "eu"\nmodel = "m"\nweight = ${w}\n`))).toContain(
        "deployments[0].weight: must be a number above 0",
      );
    expect(refused(group("chat", 'strategy = "random"'))).toContain("models.0.strategy");
  });

  test("an unknown fallback group, fallbacks in a circle", () => {
    expect(refused(group("chat", 'fallbacks = ["nowhere"]'))).toContain('fallbacks: unknown model group "nowhere"');
    const circle = group("a", 'fallbacks = ["b"]') + group("b", 'fallbacks = ["c"]') + group("c", 'fallbacks = ["a"]');
    expect(refused(circle)).toContain("the fallbacks run in a circle (a -> b -> c -> a)");
    expect(refused(group("self", 'fallbacks = ["self"]'))).toContain("circle (self -> self)");
  });

  test("a route naming neither a provider nor a group", () => {
    expect(refused(`${group("chat")}\n[routes]\ntranslation = ["nothing"]\n`)).toContain(
      'routes.translation: unknown provider "nothing" (one of eu, us, local, chat)',
    );
  });

  test("a route naming a group stands for its deployments' providers (a function can be served; the first provider tried)", () => {
    const c =
      load(`${group("chat", 'fallbacks = ["spare"]')}\n${group("spare", "", '[[models.deployments]]\nprovider = "us"\nmodel = "n"\n')}
[routes]
translation = ["chat", "local"]
`);
    const router = new ProviderRouter(c, buildProviders(c), { deploymentState: new MemoryDeploymentState() });
    const def = getFunction("translation");
    if (!def) throw new Error("no translation function");
    expect(router.routeFor(def)).toEqual(["eu", "us"]);
    expect(router.canServe(def)).toBe(true);
    expect(router.resolveModel(def, {})).toEqual({ provider: "chat", model: "chat" });
    expect(() => new ProviderRouter(c, buildProviders(c))).toThrow("need a deployment state");
  });
});
