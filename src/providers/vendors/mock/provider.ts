import type { ProviderConfig } from "../../../config";
import { sleep } from "../../abort";
import { hashEmbedding } from "../../embedding";
import { synthesize } from "../../synthesize";
import type { CompletionRequest, CompletionResult, ImageRequest, ImageResult, Provider } from "../../types";

/** 1x1 transparent PNG: the smallest valid image a client can decode. */
const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/** its model when the entry names none (the descriptor's `models.function`) */
export const MOCK_MODEL = "mock-1";
export const MOCK_IMAGE_MODEL = "mock-image-1";

function lastUserText(req: CompletionRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i];
    if (m?.role === "user") return m.content;
  }
  return "";
}

/** Seed from everything that shapes the answer, so equal requests get equal answers. */
function seedOf(req: CompletionRequest, model: string): string {
  return `${model}\u0000${req.fn}\u0000${req.messages.map((m) => `${m.role}:${m.content}`).join("\u0000")}`;
}

/** A free-text answer that visibly depends on the input (useful when eyeballing load tests). */
export function mockText(input: string): string {
  const words = input.split(/\s+/).filter(Boolean);
  const head = words.slice(0, 12).join(" ");
  return head ? `Mock answer about: ${head}` : "Mock answer.";
}

/**
 * Provider type `mock` (CONTRACT section 9): schema-valid synthetic results with configurable latency,
 * for load testing without any upstream. Never contacted unless configured.
 */
export class MockProvider implements Provider {
  readonly name: string;
  readonly type: string;
  readonly modelPatterns: readonly string[];
  private readonly latencyMs: number;

  constructor(private readonly config: ProviderConfig) {
    this.name = config.name;
    this.type = config.type;
    this.latencyMs = config.latency_ms ?? 0;
    this.modelPatterns = config.model_patterns ?? [];
  }

  modelFor(fn: string): string {
    return this.config.models?.[fn] ?? this.config.default_model ?? MOCK_MODEL;
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    await sleep(this.latencyMs, req.signal);
    const model = req.model ?? this.modelFor(req.fn);
    const text = req.schema ? JSON.stringify(synthesize(req.schema.schema, seedOf(req, model))) : mockText(lastUserText(req));
    return {
      text,
      model,
      usage: {
        prompt_tokens: estimateTokens(req.messages.map((m) => m.content).join(" ")),
        completion_tokens: estimateTokens(text),
      },
      finishReason: "stop",
    };
  }

  async image(req: ImageRequest): Promise<ImageResult> {
    await sleep(this.latencyMs, req.signal);
    const n = req.n ?? 1;
    return {
      model: req.model ?? MOCK_IMAGE_MODEL,
      images: Array.from({ length: n }, () => ({ b64_json: TINY_PNG, format: "png" as const })),
    };
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    await sleep(this.latencyMs, signal);
    return texts.map((t) => hashEmbedding(t));
  }

  listModels(): string[] {
    return [...new Set([this.config.default_model ?? MOCK_MODEL, ...Object.values(this.config.models ?? {})])];
  }
}

/** Rough token count (4 characters per token) for usage figures. */
function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}
