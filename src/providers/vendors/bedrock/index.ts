import type { ProviderConfig } from "../../../config";
import type { VendorDescriptor } from "../descriptor";
import type * as Adapter from "./provider";

/** What a bedrock entry must hold beyond the schema (docs/providers.md#bedrock). */
function check(c: ProviderConfig): { field: string; message: string } | undefined {
  if (c.aws_session_token && !c.aws_access_key_id)
    return {
      field: "aws_session_token",
      message: "a session token goes with the access key id it was issued for: set aws_access_key_id too",
    };
  if (Boolean(c.aws_access_key_id) !== Boolean(c.aws_secret_access_key))
    return {
      field: c.aws_access_key_id ? "aws_secret_access_key" : "aws_access_key_id",
      message: "give both, or neither (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY then)",
    };
  if (c.api_key)
    return {
      field: "api_key",
      message: "type bedrock signs with AWS credentials (aws_access_key_id, aws_secret_access_key), not a key",
    };
  return undefined;
}

/**
 * Type `bedrock`: Amazon Bedrock Runtime (Converse, ConverseStream, InvokeModel for Titan text
 * embeddings), SigV4-signed by aws4fetch, translated to and from the gateway's calls and OpenAI's
 * shapes by its own adapter (provider.ts). Its credentials and region default to the AWS SDKs'
 * environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION),
 * which config.ts reads into Config.providerEnv and buildProviders hands to the adapter
 * (AdapterOptions.env); they enable no provider by themselves (a machine often has them for other
 * AWS services), so it has no `env`.
 */
export const bedrock: VendorDescriptor = {
  type: "bedrock",
  // https://bedrock-runtime.{region}.amazonaws.com unless base_url says otherwise (provider.ts)
  baseUrl: { required: false },
  ownKeys: ["region", "aws_access_key_id", "aws_secret_access_key", "aws_session_token"],
  check,
  models: { function: "us.anthropic.claude-haiku-4-5-20251001-v1:0", embedding: "amazon.titan-embed-text-v2:0" },
  // images as bytes (data: URLs: Converse fetches no URL); no Responses API (through chat completions)
  features: { always: ["tools", "images", "structured_output", "embeddings"] },
  catalog: "vendor",
  genAiSystem: "aws.bedrock",
  build: (config, opts) => (require("./provider") as typeof Adapter).bedrockProvider(config, opts, bedrock),
};
