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
