/**
 * The provider contract's failure modes (failure-modes.ts, the cases transport-contract.test.ts
 * runs on the OpenAI simulator) against the vendor simulators: a `mistral` provider on the Mistral
 * simulator and an `azure-openai` provider on the Azure OpenAI simulator. Each case must end in a
 * ProviderError (or an answer) that is the same, field by field, through the lean HTTP transport
 * (on the HTTP/1.1 client and on fetch) and through the SDK, with one call to the simulator each.
 * (Groq's and self-hosted servers' cases are another provider type's and are left out.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ProviderConfig } from "../../src/config";
import { buildOpenAILikeProvider } from "../../src/providers/index";
import type { OpenAILikeProvider } from "../../src/providers/openai-like";
import { ProviderError } from "../../src/providers/types";
import { type AzureSim, startAzure } from "../helpers/azure-sim";
import { type MistralSim, startMistral } from "../helpers/mistral-sim";
import type { Fault } from "../helpers/upstream";
import { FAILURE_MODES as PARITY } from "./failure-modes";

let mistral: MistralSim;
let azure: AzureSim;
beforeAll(async () => {
  mistral = await startMistral();
  azure = await startAzure();
});
afterAll(async () => {
  await mistral.close();
  await azure.close();
});

const TRANSPORTS = ["http", "http-fetch", "sdk"] as const;
type Transport = (typeof TRANSPORTS)[number];

interface Vendor {
  name: string;
  config: () => ProviderConfig;
  model: string;
  program: (faults: Fault[]) => void;
  reset: () => void;
  count: () => number;
}

const VENDORS: Vendor[] = [
  {
    name: "mistral",
    config: () => ({ name: "m", type: "mistral", base_url: mistral.baseUrl, api_key: mistral.apiKey }),
    model: "mistral-small-latest",
    program: (f) => mistral.program(f),
    reset: () => mistral.reset(),
    count: () => mistral.calls.count,
  },
  {
    name: "azure-openai",
    config: () => ({ name: "a", type: "azure-openai", endpoint: azure.endpoint, api_key: azure.apiKey }),
    model: "gpt-4o-mini",
    program: (f) => azure.program(f),
    reset: () => azure.reset(),
    count: () => azure.calls.count,
  },
];

function provider(v: Vendor, transport: Transport): OpenAILikeProvider {
  const opts = transport === "http-fetch" ? { transport: "http" as const, fetch } : { transport };
  return buildOpenAILikeProvider(v.config(), opts);
}

async function settle(p: Promise<unknown>): Promise<unknown> {
  try {
    const ok = await p;
    return { ok: Array.isArray(ok) ? ok.length : typeof ok };
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    return { error: { kind: e.kind, message: e.message, status: e.status, retryAfterMs: e.retryAfterMs, upstream: e.upstream } };
  }
}
async function drain(events: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of events) out.push(e);
  return out;
}

const CASES = PARITY.filter((c) => (c.kind ?? "openai") === "openai");

describe.each(VENDORS)("$name", (v) => {
  for (const c of CASES) {
    test(c.name, async () => {
      v.reset();
      const outcomes: unknown[] = [];
      for (const transport of TRANSPORTS) {
        v.program(c.faults);
        const p = provider(v, transport);
        const body = { model: v.model, messages: [{ role: "user", content: "hello contract suite" }] };
        const signal = new AbortController().signal;
        outcomes.push(
          await settle(
            c.stream
              ? drain(p.proxyStream({ api: "chat/completions", body: { ...body, stream: true }, signal }))
              : p.proxy({ api: "chat/completions", body, signal }),
          ),
        );
      }
      // a ProviderError (settle throws on anything else) or an answer, the same through each transport
      expect(outcomes[1]).toEqual(outcomes[0]);
      expect(outcomes[2]).toEqual(outcomes[0]);
      expect(v.count()).toBe(3);
    });
  }
});
