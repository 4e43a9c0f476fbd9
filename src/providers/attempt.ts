import type { TraceUsage } from "../trace";
import { judge, judgeText, resultSchema } from "./answer";
import { type AttemptInput, type AttemptResult, type ChatMessage, type CompletionResult, ProviderError } from "./types";

export type { AttemptInput, AttemptResult } from "./types";

/**
 * One provider's try at a function call, including the single repair round-trip for invalid
 * output. Resolves null when the provider cannot serve this particular request (an in-process
 * engine declined); throws ProviderError on failure. A GatewayError thrown by a function's own
 * implementation (not_found for another account's FAQ collection, ...) is the client's answer and passes through.
 */
export async function attemptFunction(input: AttemptInput): Promise<AttemptResult | null> {
  if (input.provider.functions) return input.provider.functions.attempt(input);
  if (input.def.kind === "image") return attemptImage(input);
  return attemptText(input);
}

const usageOf = (r: CompletionResult): TraceUsage | undefined =>
  r.usage && { input: r.usage.prompt_tokens, output: r.usage.completion_tokens };

function userText(messages: ChatMessage[]): string {
  return messages
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .join("\n");
}

/**
 * Image functions: the prompt is the user part of def.prompt(request) (so the function composes
 * style and negative prompt), the size is request.size; def.postprocess maps the provider's
 * ImageResult ({model, images}) to the function's result schema before validation.
 */
async function attemptImage({ def, request, provider, model, signal, headers }: AttemptInput): Promise<AttemptResult> {
  if (!provider.image) throw new ProviderError("unsupported", "provider cannot generate images");
  const fields = (request ?? {}) as Record<string, unknown>;
  const size = typeof fields.size === "string" && /^\d+x\d+$/.test(fields.size) ? fields.size : "1024x1024";
  const n = typeof fields.n === "number" ? fields.n : undefined;
  const image = await provider.image({ prompt: userText(def.prompt(request)), size, model, n, signal, headers });
  const verdict = judge(def, request, resultSchema(def, request), image);
  if (!verdict.ok) throw new ProviderError("invalid_output", "image result does not match the function's result schema");
  return { result: verdict.value, model: image.model };
}

async function attemptText({ def, request, provider, model, signal, headers }: AttemptInput): Promise<AttemptResult> {
  const schema = resultSchema(def, request);
  const messages = def.prompt(request);
  const base = { fn: def.name, model, signal, headers, schema: { name: def.name, schema: schema as Record<string, unknown> } };
  const first = await provider.complete({ ...base, messages });
  const verdict = judgeText(def, request, schema, first.text);
  if (verdict.ok) return { result: verdict.value, model: first.model, usage: usageOf(first) };

  // One repair round-trip on the same provider: models usually fix what they are told is wrong.
  const repair: ChatMessage[] = [
    ...messages,
    { role: "assistant", content: first.text },
    {
      role: "user",
      content: `Your answer is invalid:\n- ${verdict.problems.join("\n- ")}\nAnswer again with the corrected JSON only.`,
    },
  ];
  const second = await provider.complete({ ...base, messages: repair });
  const again = judgeText(def, request, schema, second.text);
  if (again.ok) {
    const a = usageOf(first);
    const b = usageOf(second);
    const usage = a && b ? { input: a.input + b.input, output: a.output + b.output } : (b ?? a);
    return { result: again.value, model: second.model, usage };
  }
  throw new ProviderError("invalid_output", "answer failed validation after one repair attempt");
}
