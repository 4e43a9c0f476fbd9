import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { nearestImageSize } from "../../src/providers/image-sizes";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";

// An `openai` provider (the official SDK, pointed at the simulator) and an openai-compatible one
// whose image model is not one of OpenAI's.
let sim: Upstream;
let gw: TestGateway;
beforeAll(async () => {
  sim = await startUpstream();
  gw = await startGateway({
    configText: `${simProvider({ url: `${sim.url}/v1`, name: "oa", type: "openai" })}
${simProvider({ url: `${sim.url}/v1`, name: "compat", extra: 'models = { "image-generation" = "sd-xl" }' })}
[routes]
"image-generation" = ["oa", "compat"]

[plans.free.rate_limits]
standard = 10000
`,
  });
});
afterAll(async () => {
  await gw.close();
  await sim.close();
});

/** One call through the gateway; the size the simulator received and the size the response reports. */
async function generate(body: Record<string, unknown>): Promise<{ sent: unknown; model: unknown; reported: unknown }> {
  const { key } = gw.newKey({ credits: 100 });
  sim.reset();
  const r = await gw.post("/api/v1/ai/image-generation", body, { "x-api-key": key, "cache-control": "no-cache" });
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.json)}`);
  const calls = sim.calls.requests.filter((c) => c.path === "/v1/images/generations");
  expect(calls.length).toBe(1);
  return { sent: calls[0]?.body.size, model: calls[0]?.body.model, reported: r.json.data.result.size };
}

/** no model in the request: the provider's default image model, gpt-image-1 */
const DEFAULT = "(default)";

describe("image sizes sent to OpenAI are ones its image API accepts", () => {
  test.each([
    // default model gpt-image-1: 1024x1024, 1536x1024, 1024x1536
    [{ aspect_ratio: "1:1" }, DEFAULT, "1024x1024"],
    [{ aspect_ratio: "16:9" }, DEFAULT, "1536x1024"],
    [{ aspect_ratio: "9:16" }, DEFAULT, "1024x1536"],
    [{ aspect_ratio: "4:3" }, DEFAULT, "1536x1024"],
    [{ aspect_ratio: "3:2" }, DEFAULT, "1536x1024"],
    // dall-e-3: 1024x1024, 1792x1024, 1024x1792
    [{ aspect_ratio: "16:9" }, "dall-e-3", "1792x1024"],
    [{ aspect_ratio: "9:16" }, "dall-e-3", "1024x1792"],
    [{ aspect_ratio: "3:2" }, "dall-e-3", "1792x1024"],
    // dall-e-2: squares 256, 512, 1024; nearest in area among equal ratios
    [{ size: "500x500" }, "dall-e-2", "512x512"],
    [{ size: "300x200" }, "dall-e-2", "256x256"],
    [{ aspect_ratio: "16:9" }, "dall-e-2", "1024x1024"],
    // a caller's size is snapped too, to the nearest ratio first
    [{ size: "512x512" }, DEFAULT, "1024x1024"],
    [{ size: "800x1200" }, DEFAULT, "1024x1536"],
    [{ size: "1024x1792" }, "dall-e-3", "1024x1792"],
    // an OpenAI model the gateway has no list for gets the gpt-image sizes
    [{ size: "1920x1080" }, "gpt-image-2-preview", "1536x1024"],
    [{ size: "1920x1080" }, "some-future-model", "1536x1024"],
  ])("%o with model %s: the upstream gets %s and the response reports it", async (shape, model, expected) => {
    const got = await generate({ prompt: "a lighthouse at dusk", ...shape, ...(model === DEFAULT ? {} : { model }) });
    expect(got.model).toBe(model === DEFAULT ? "gpt-image-1" : model);
    expect(got.sent).toBe(expected);
    expect(got.reported).toBe(expected);
  });

  test("an openai-compatible server with a model that is not OpenAI's gets the size asked for", async () => {
    const ratio = await generate({ prompt: "a lighthouse", aspect_ratio: "16:9", model: "compat/sd-xl" });
    expect(ratio).toEqual({ sent: "1792x1008", model: "sd-xl", reported: "1792x1008" });
    const exact = await generate({ prompt: "a lighthouse", size: "640x480", model: "compat/sd-xl" });
    expect(exact).toEqual({ sent: "640x480", model: "sd-xl", reported: "640x480" });
  });

  test("an openai-compatible server serving an OpenAI model gets that model's sizes", async () => {
    const got = await generate({ prompt: "a lighthouse", aspect_ratio: "9:16", model: "compat/dall-e-3" });
    expect(got).toEqual({ sent: "1024x1792", model: "dall-e-3", reported: "1024x1792" });
  });
});

describe("nearestImageSize", () => {
  test("portrait and landscape are symmetric: 2:1 and 1:2 are equally far from square", () => {
    const sizes = ["1024x1024", "1792x1024", "1024x1792"];
    expect(nearestImageSize("2000x1000", sizes)).toBe("1792x1024");
    expect(nearestImageSize("1000x2000", sizes)).toBe("1024x1792");
    expect(nearestImageSize("1100x1000", sizes)).toBe("1024x1024");
  });
});
