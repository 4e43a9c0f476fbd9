// The URL gate, by construction: every place OpenAI's request schemas let a string sit inside a
// content part or a tool output (test/fixtures/openai-openapi/requests.json) gets a hostile URL, and
// a provider without remote_urls must never be sent it. URLs are allowed (data:, or to a provider
// with remote_urls), not denied by shape: the walk below finds the next part type by itself.
import { describe, expect, test } from "bun:test";
import requests from "../fixtures/openai-openapi/requests.json";
import { simProvider } from "../helpers/upstream";
import { ALL_FEATURES, providerToml, rawPost, useGateway } from "./setup";

type Schema = Record<string, unknown>;
const SCHEMAS = requests.components.schemas as Record<string, Schema>;

/** The schema a `$ref` names, or null when the fixture does not vendor it (its README lists which). */
function resolve(s: Schema | undefined): Schema | null {
  if (!s) return null;
  const ref = s.$ref;
  if (typeof ref !== "string") return s;
  return resolve(SCHEMAS[ref.split("/").at(-1) as string]);
}

/** The alternatives of a union (anyOf, oneOf, flattened; `null` left out), or the schema itself. */
function alternatives(s: Schema | null): Schema[] {
  const r = resolve(s ?? undefined);
  if (!r) return [];
  const union = (r.anyOf ?? r.oneOf) as Schema[] | undefined;
  if (union) return union.flatMap((a) => alternatives(a));
  if (r.type === "null") return [];
  return [r];
}

const props = (s: Schema) => (s.properties ?? {}) as Record<string, Schema>;

/** Every string a part can hold, as a path inside the part ("image_url.url"), with whether it is an enum. */
function stringPaths(s: Schema, path: string[] = [], depth = 0): { path: string[]; enumerated: boolean }[] {
  if (depth > 6) return [];
  return alternatives(s).flatMap((alt) => {
    if (alt.type === "string") return [{ path, enumerated: Array.isArray(alt.enum) }];
    if (alt.type === "array") return stringPaths(alt.items as Schema, [...path, "0"], depth + 1);
    return Object.entries(props(alt)).flatMap(([k, v]) => stringPaths(v, [...path, k], depth + 1));
  });
}

/** A minimal valid instance: required properties only, first alternative, first enum value. */
function minimal(s: Schema | null, depth = 0): unknown {
  const alt = alternatives(s)[0];
  if (!alt || depth > 6) return null;
  if (Array.isArray(alt.enum)) return alt.enum[0];
  if (alt.type === "string") return "x";
  if (alt.type === "integer" || alt.type === "number") return 0;
  if (alt.type === "boolean") return false;
  if (alt.type === "array") return [minimal(alt.items as Schema, depth + 1)];
  const out: Record<string, unknown> = {};
  for (const k of (alt.required ?? []) as string[]) out[k] = minimal(props(alt)[k] ?? null, depth + 1);
  return out;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let at: Record<string, unknown> = target;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i] as string;
    if (typeof at[k] !== "object" || at[k] === null) at[k] = /^\d+$/.test(path[i + 1] as string) ? [] : {};
    at = at[k] as Record<string, unknown>;
  }
  at[path.at(-1) as string] = value;
}

interface Location {
  api: "chat/completions" | "responses";
  /** builds the request with `value` at the location */
  body: (value: string) => Record<string, unknown>;
  /** the field's path in the request, as the 400 names it */
  param: string;
  /** its last key */
  key: string;
  enumerated: boolean;
}

/** The parts a `content` / `output` property's array alternatives hold. */
const partsOf = (prop: Schema | undefined) =>
  alternatives(prop ?? null)
    .filter((a) => a.type === "array")
    .flatMap((a) => alternatives(a.items as Schema));

function locations(): Location[] {
  const out: Location[] = [];
  const addParts = (api: Location["api"], parts: Schema[], wrap: (part: unknown) => Record<string, unknown>, prefix: string) => {
    for (const part of parts) {
      for (const { path, enumerated } of stringPaths(part)) {
        out.push({
          api,
          param: `${prefix}.${path.join(".").replace(/\.(\d+)/g, "[$1]")}`,
          key: path.at(-1) as string,
          enumerated,
          body: (value) => {
            const p = minimal(part) as Record<string, unknown>;
            setPath(p, path, value);
            return wrap(p);
          },
        });
      }
    }
  };
  // chat: each message role's content parts
  const chatRequest = resolve(SCHEMAS.CreateChatCompletionRequest)?.allOf as Schema[];
  const messages = props(chatRequest[1] as Schema).messages as Schema;
  for (const message of alternatives(messages.items as Schema)) {
    const roleSchema = props(message).role as Schema;
    const role = (roleSchema.enum as string[])[0];
    const extra = role === "tool" ? { tool_call_id: "call_1" } : role === "function" ? { name: "f" } : {};
    addParts(
      "chat/completions",
      partsOf(props(message).content),
      (part) => ({ model: "model-a", messages: [{ role, ...extra, content: [part] }] }),
      "messages[0].content[0]",
    );
  }
  // responses: each input item's content parts and tool outputs
  const responseRequest = resolve(SCHEMAS.CreateResponse)?.allOf as Schema[];
  const input = alternatives(props(responseRequest[2] as Schema).input ?? null);
  const items = input.filter((a) => a.type === "array").flatMap((a) => alternatives(a.items as Schema));
  for (const item of items) {
    for (const field of ["content", "output"]) {
      const prop = props(item)[field];
      if (!prop) continue;
      const base = minimal(item) as Record<string, unknown>;
      delete base[field];
      addParts(
        "responses",
        partsOf(prop),
        (part) => ({ model: "model-a", input: [{ ...base, [field]: [part] }] }),
        `input[0].${field}[0]`,
      );
      // a tool output given as a string
      if (alternatives(prop).some((a) => a.type === "string"))
        out.push({
          api: "responses",
          param: `input[0].${field}`,
          key: field,
          enumerated: false,
          body: (value) => ({ model: "model-a", input: [{ ...base, [field]: value }] }),
        });
    }
  }
  return out;
}

/** Text the model reads: a URL there is text, forwarded as is (docs/shared-upstream.md). */
const TEXT = new Set(["text", "refusal", "output", "content"]);
const HOSTILE = [
  " http://169.254.169.254/latest/meta-data/",
  "file:///etc/passwd",
  "gopher://127.0.0.1:6379/_INFO",
  "HTTP:\\\\10.0.0.1\\x",
];
const DATA = "data:image/png;base64,iVBORw0KGgo=";
const PUBLIC = "https://93.184.216.34/cat.png";

const all = locations();
/** several hundred calls from one account in a minute */
const RATES = `[plans.free.rate_limits]\n"chat-completions" = 100000\nresponses = 100000\nstandard = 100000\n`;

test("the fixture yields every part type of the request schemas, in chat, Responses input and tool outputs", () => {
  const params = new Set(all.map((l) => `${l.api} ${l.param.replace(/\[\d+\]/g, "[]")}`));
  for (const expected of [
    "chat/completions messages[].content[].image_url.url",
    "chat/completions messages[].content[].input_audio.data",
    "chat/completions messages[].content[].file.file_data",
    "chat/completions messages[].content[].refusal",
    "responses input[].content[].image_url",
    "responses input[].content[].file_url",
    "responses input[].output[].image_url",
    "responses input[].output[].file_url",
    "responses input[].output",
  ])
    expect(params).toContain(expected);
  expect(all.length).toBeGreaterThan(40);
});

describe("a provider without remote_urls", () => {
  const ctx = useGateway({
    configText: (url) => `
${providerToml("selfhosted", url, "model-a")}
[routes]
"chat-completions" = ["selfhosted"]
responses = ["selfhosted"]
${RATES}`,
  });

  test("a URL at any string of any content part or tool output: 400 naming the field, no upstream call, nothing charged; text stays text", async () => {
    const { sim, gw } = ctx;
    const refused = gw.newKey({ credits: 100 });
    const text = gw.newKey({ credits: 1000 });
    sim.reset();
    const seen: { param: string; url: string; status: number; got: string | null; calls: number }[] = [];
    for (const loc of all) {
      for (const url of HOSTILE) {
        const before = sim.calls.count;
        const key = TEXT.has(loc.key) ? text.key : refused.key;
        const res = await rawPost(gw, `/v1/${loc.api}`, key, loc.body(url));
        const got = (await res.json()) as { error?: { param: string | null } };
        seen.push({ param: loc.param, url, status: res.status, got: got.error?.param ?? null, calls: sim.calls.count - before });
      }
    }
    for (const s of seen) {
      const loc = all.find((l) => l.param === s.param) as Location;
      if (TEXT.has(loc.key)) {
        // the model reads it; nothing is fetched
        expect({ ...s, status: s.status, calls: s.calls }).toEqual({ ...s, status: 200, calls: 1 });
      } else if (loc.key === "file_id") {
        // a file id names an object in the shared upstream account: refused whatever it holds
        expect({ ...s, status: s.status, calls: s.calls }).toEqual({ ...s, status: 400, calls: 0 });
      } else {
        expect(s).toEqual({ ...s, status: 400, got: loc.param, calls: 0 });
      }
    }
    const texts = seen.filter((s) => TEXT.has((all.find((l) => l.param === s.param) as Location).key)).length;
    expect(texts).toBeGreaterThan(0);
    expect(sim.calls.count).toBe(texts);
    // what was refused cost nothing
    expect(gw.deps.ledger.balance(refused.accountId)).toBe(100);
  }, 120_000);

  test("a data: URL at the same places is forwarded (a part type is not a URL, a file id is refused either way)", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 500 });
    sim.reset();
    for (const loc of all) {
      const res = await rawPost(gw, `/v1/${loc.api}`, key, loc.body(DATA));
      const expected = loc.key === "file_id" || loc.key === "type" ? 400 : 200;
      expect({ param: loc.param, status: res.status }).toEqual({ param: loc.param, status: expected });
      await res.text();
    }
  }, 120_000);

  test("shapes outside the schema: vLLM's short form, a plain-string image_url, video_url and audio_url parts, a part with no type", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 10 });
    sim.reset();
    const chat = (part: unknown) => ({ model: "model-a", messages: [{ role: "user", content: [part] }] });
    const cases: [Record<string, unknown>, string][] = [
      [chat({ image_url: "http://169.254.169.254/" }), "messages[0].content[0].image_url"],
      [chat({ type: "image_url", image_url: "http://169.254.169.254/" }), "messages[0].content[0].image_url"],
      [chat({ type: "video_url", video_url: { url: "http://10.0.0.1/v.mp4" } }), "messages[0].content[0].video_url.url"],
      [chat({ type: "audio_url", audio_url: { url: "http://10.0.0.1/a.mp3" } }), "messages[0].content[0].audio_url.url"],
      // no URL to see, but a part type nobody vouched for
      [chat({ type: "video_url", video_url: { url: "data:video/mp4;base64,AAAA" } }), "messages[0].content[0].type"],
      [chat({ type: "image", source: "/etc/passwd" }), "messages[0].content[0].type"],
      [
        {
          model: "model-a",
          input: [{ type: "function_call_output", call_id: "c1", output: [{ type: "input_image", image_url: "http://[::1]/" }] }],
        },
        "input[0].output[0].image_url",
      ],
    ];
    for (const [body, param] of cases) {
      const api = "messages" in body ? "chat/completions" : "responses";
      const res = await rawPost(gw, `/v1/${api}`, key, body);
      const got = (await res.json()) as { error: { param: string; message: string } };
      expect({ param, status: res.status, got: got.error?.param }).toEqual({ param, status: 400, got: param });
      expect(got.error.message).toContain("remote_urls");
    }
    expect(sim.calls.count).toBe(0);
  });
});

describe("a provider with remote_urls", () => {
  const ctx = useGateway({
    configText: (url) => `
${simProvider({ url, name: "fetcher", model: "model-a", extra: `features = ${ALL_FEATURES.replace("]", ', "remote_urls"]')}` })}
[routes]
"chat-completions" = ["fetcher"]
responses = ["fetcher"]
${RATES}`,
  });

  test("is sent a public URL at any of those places; a private or non-http one is still refused", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 500 });
    sim.reset();
    for (const loc of all) {
      if (loc.key === "file_id") continue;
      const res = await rawPost(gw, `/v1/${loc.api}`, key, loc.body(PUBLIC));
      expect({ param: loc.param, status: res.status }).toEqual({ param: loc.param, status: 200 });
      await res.text();
    }
    const forwarded = sim.calls.count;
    expect(forwarded).toBe(all.filter((l) => l.key !== "file_id").length);
    for (const loc of all.filter((l) => !TEXT.has(l.key) && l.key !== "file_id")) {
      for (const url of HOSTILE) {
        const res = await rawPost(gw, `/v1/${loc.api}`, key, loc.body(url));
        expect({ param: loc.param, url, status: res.status }).toEqual({ param: loc.param, url, status: 400 });
        await res.text();
      }
    }
    expect(sim.calls.count).toBe(forwarded);
  }, 120_000);
});
