/** Shared set-up of the knowledge tests: a gateway with room in the rate limits, and JSON calls with a key. */
import { valueNow } from "../../src/maybe";
import { startGateway, type TestGateway } from "../helpers/gateway";

export const ROOMY_LIMITS = `[plans.free.rate_limits]\nstandard = 10000\nheavy = 10000\nbulk = 10000\n`;

export function roomyGateway(extraConfig = ""): Promise<TestGateway> {
  return startGateway({ configText: `${extraConfig}\n${ROOMY_LIMITS}` });
}

export interface Client {
  key: string;
  accountId: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests walk response JSON freely; assertions check its shape
  call(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; json: Record<string, any> }>;
  balance(): number;
}

export function client(gw: TestGateway, credits = 1000): Client {
  const k = gw.newKey({ credits });
  return {
    key: k.key,
    accountId: k.accountId,
    async call(method, path, body) {
      const res = await fetch(gw.url + path, {
        method,
        headers: { "x-api-key": k.key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      try {
        return { status: res.status, headers: res.headers, json: JSON.parse(text) };
      } catch {
        return { status: res.status, headers: res.headers, json: { raw: text } };
      }
    },
    balance: () => valueNow(gw.deps.ledger.balance(k.accountId)),
  };
}

/** The response, printed, for assertion messages. */
export const show = (r: { status: number; json: unknown }) => `${r.status} ${JSON.stringify(r.json).slice(0, 600)}`;
