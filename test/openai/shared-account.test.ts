// Every tenant's /v1 call reaches the upstream through the operator's one account: objects stored
// there, and URLs the upstream would fetch, must not let one tenant reach another's data or the
// operator's network. Each refusal reaches no provider and costs nothing.
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { openaiClient, providerToml, rawPost, useGateway } from "./setup";

describe("objects stored in the shared upstream account", () => {
  const ctx = useGateway();

  test("store, previous_response_id, conversation, item references, file and vector-store ids: 400 naming the field", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 50 });
    sim.reset();
    const cases: [string, Record<string, unknown>, string][] = [
      ["/v1/chat/completions", { model: "model-a", messages: [{ role: "user", content: "hi" }], store: true }, "store"],
      [
        "/v1/chat/completions",
        {
          model: "model-a",
          messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-abc" } }] }],
        },
        "messages[0].content[0]",
      ],
      ["/v1/responses", { model: "model-a", input: "x", previous_response_id: "resp_other_tenant" }, "previous_response_id"],
      ["/v1/responses", { model: "model-a", input: "x", conversation: "conv_123" }, "conversation"],
      ["/v1/responses", { model: "model-a", input: "x", store: true }, "store"],
      ["/v1/responses", { model: "model-a", input: "x", background: true }, "background"],
      ["/v1/responses", { model: "model-a", input: [{ type: "item_reference", id: "msg_1" }] }, "input[0]"],
      [
        "/v1/responses",
        { model: "model-a", input: [{ role: "user", content: [{ type: "input_file", file_id: "file-abc" }] }] },
        "input[0].content[0].file_id",
      ],
      [
        "/v1/responses",
        { model: "model-a", input: "x", tools: [{ type: "file_search", vector_store_ids: ["vs_1"] }] },
        "tools[0]",
      ],
    ];
    for (const [path, body, param] of cases) {
      const res = await rawPost(gw, path, key, body);
      const got = (await res.json()) as { error: { message: string; param: string; type: string } };
      expect({ path, param, status: res.status, got: got.error.param }).toEqual({ path, param, status: 400, got: param });
      expect(got.error.type).toBe("invalid_request_error");
      expect(got.error.message).toContain("shared by every tenant");
    }
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(50);

    // the SDK raises OpenAI's own class for it
    const err = await openaiClient(gw, key)
      .responses.create({ model: "model-a", input: "x", previous_response_id: "resp_1" })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);

    // store: false and an inline file are still served
    const fine = await rawPost(gw, "/v1/chat/completions", key, {
      model: "model-a",
      messages: [{ role: "user", content: "hi" }],
      store: false,
    });
    expect(fine.status).toBe(200);
  });
});

describe("URLs the provider would fetch", () => {
  const ctx = useGateway({
    configText: (url) => `
${providerToml("selfhosted", url, "model-a")}
[[providers]]
name = "fetcher"
type = "openai-compatible"
base_url = "${url}"
api_key = "sk-sim"
default_model = "model-f"
features = ["tools", "images", "structured_output", "responses", "remote_urls"]

[routes]
"chat-completions" = ["selfhosted"]
"responses" = ["fetcher"]
`,
  });
  const image = (url: string) => ({
    model: "model-a",
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "image_url", image_url: { url } },
        ],
      },
    ],
  });

  test("a self-hosted backend gets no URLs to fetch by default; data: URLs still pass", async () => {
    const { sim, gw } = ctx;
    const { key, accountId } = gw.newKey({ credits: 10 });
    sim.reset();
    const res = await rawPost(gw, "/v1/chat/completions", key, image("https://example.com/cat.png"));
    const got = (await res.json()) as { error: { message: string; param: string } };
    expect(res.status).toBe(400);
    expect(got.error.param).toBe("messages[0].content[1].image_url.url");
    expect(got.error.message).toContain("selfhosted (no remote_urls support)");
    expect(sim.calls.count).toBe(0);
    expect(gw.deps.ledger.balance(accountId)).toBe(10);

    const inline = await rawPost(gw, "/v1/chat/completions", key, image("data:image/png;base64,iVBORw0KGgo="));
    expect(inline.status).toBe(200);
  });

  test("with remote_urls on, private, loopback and link-local targets are refused, named or resolved; public ones pass", async () => {
    const { sim, gw } = ctx;
    const { key } = gw.newKey({ credits: 20 });
    sim.reset();
    const input = (url: string) => ({
      model: "model-f",
      input: [{ role: "user", content: [{ type: "input_image", image_url: url }] }],
    });
    for (const url of [
      "http://169.254.169.254/latest/meta-data/",
      "http://127.0.0.1:5432/",
      "http://10.1.2.3/x.png",
      "http://192.168.0.1/x.png",
      "http://[::1]/x.png",
      "http://[::ffff:127.0.0.1]/x.png",
      "http://localhost:8080/x.png",
      "http://0.0.0.0/x.png",
    ]) {
      const res = await rawPost(gw, "/v1/responses", key, input(url));
      const got = (await res.json()) as { error: { message: string; param: string } };
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect(got.error.param).toBe("input[0].content[0].image_url");
      expect(got.error.message).toContain("private, loopback or link-local");
    }
    expect(sim.calls.count).toBe(0);
    const ok = await rawPost(gw, "/v1/responses", key, input("https://93.184.216.34/cat.png"));
    expect(ok.status).toBe(200);
    expect(sim.calls.count).toBe(1);
  });
});

test("privateAddress: every private, loopback, link-local and embedded-IPv4 form, and public addresses not", async () => {
  const { privateAddress } = await import("../../src/providers/shared-account");
  for (const a of ["127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0"])
    expect({ a, p: privateAddress(a) }).toEqual({ a, p: true });
  for (const a of ["::1", "::", "::ffff:7f00:1", "::ffff:10.0.0.1", "fe80::1", "fd00::1", "64:ff9b::a00:1", "ff02::1"])
    expect({ a, p: privateAddress(a) }).toEqual({ a, p: true });
  for (const a of ["8.8.8.8", "93.184.216.34", "172.15.0.1", "::ffff:8.8.8.8", "2606:4700::1111", "64:ff9b::808:808"])
    expect({ a, p: privateAddress(a) }).toEqual({ a, p: false });
  expect(privateAddress("not an address")).toBe(true);
});
