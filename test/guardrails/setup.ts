import { afterAll, beforeAll } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";
import { simProvider, startUpstream, type Upstream } from "../helpers/upstream";
import { ALL_FEATURES } from "../openai/setup";

/**
 * A gateway in front of a new upstream simulator (provider "sim" serving "model-a", every /v1
 * feature, embeddings by "embed-a"), with `plans` (TOML: the plans' guardrails) after the provider.
 * The caller closes both.
 */
export async function guardedGateway(
  plans: string,
  env: Record<string, string> = {},
): Promise<{ gw: TestGateway; sim: Upstream }> {
  const sim = await startUpstream();
  const gw = await startGateway({
    env,
    configText: `${simProvider({
      url: `${sim.url}/v1`,
      name: "sim",
      model: "model-a",
      extra: `features = ${ALL_FEATURES}\nembedding_model = "embed-a"`,
    })}
${plans}`,
  });
  return { gw, sim };
}

/** A test file's guarded gateway: filled in before its tests run, closed after them. */
export interface GuardedSuite {
  gw: TestGateway;
  sim: Upstream;
  /** a key per plan asked for */
  keys: Record<string, string>;
  /** everything the simulator was sent since request number `from`, as one text */
  sentSince(from: number): string;
}

/** guardedGateway for the tests of a file (started in beforeAll, closed in afterAll), with a key on each of `plans`. */
export function guardedSuite(config: string, plans: string[]): GuardedSuite {
  const suite = {
    keys: {},
    sentSince: (from: number) => JSON.stringify(suite.sim.calls.requests.slice(from).map((r) => r.body)),
  } as GuardedSuite;
  beforeAll(async () => {
    Object.assign(suite, await guardedGateway(config));
    for (const plan of plans) suite.keys[plan] = suite.gw.newKey({ plan, credits: 100_000 }).key;
  });
  afterAll(async () => {
    await suite.gw.close();
    await suite.sim.close();
  });
  return suite;
}

/** A plan's `redact_pii` line with every kind the guardrails know how to find. */
export const REDACT_EVERY_KIND = `redact_pii = ["email", "phone", "credit_card", "ssn", "ip_address", "name", "address"]`;

/** The plan of issue 41's white-box review: every kind redacted (and restored), cards refused. */
export const STRICT_PLAN = `[plans.strict.guardrails]
${REDACT_EVERY_KIND}
restore_pii = true
block_pii = ["credit_card"]
`;
