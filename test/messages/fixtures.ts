/** What the `/v1/messages` tests share: a tool, an image, and a wait for what the gateway records after answering. */
import type Anthropic from "@anthropic-ai/sdk";

export const WEATHER: Anthropic.Tool = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** a 1x1 PNG */
export const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** `what()` once `ok` says so (a charge, a log entry written after the answer), or its last value. */
export async function until<T>(what: () => T | Promise<T>, ok: (v: T) => boolean, tries = 100): Promise<T> {
  let v = await what();
  for (let i = 0; i < tries && !ok(v); i++) {
    await Bun.sleep(20);
    v = await what();
  }
  return v;
}
