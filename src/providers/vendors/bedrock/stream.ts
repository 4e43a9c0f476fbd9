/**
 * A ConverseStream's events (messageStart, contentBlockStart, contentBlockDelta, contentBlockStop,
 * messageStop, metadata; eventstream.ts decodes them) as Chat Completions chunks: text deltas as
 * `content`, reasoning as `reasoning_content`, tool uses as `tool_calls` (their input's JSON
 * pieces as `arguments`), the format tool's input as `content` (a response_format), the finish
 * from messageStop's `stopReason`, and the usage chunk (metadata's usage) when
 * `stream_options.include_usage` asks for it. A stream that ends before messageStop was cut:
 * ProviderError `connection`, as for an OpenAI-style stream without a finish.
 */
import { isObject, ProviderError } from "../../types";
import { FORMAT_TOOL } from "../translating";
import { chatUsage, finishReason } from "./translate";

type Json = Record<string, unknown>;

export async function* chatChunks(
  events: AsyncIterable<unknown>,
  opts: { model: string; formatted: boolean; includeUsage: boolean },
): AsyncIterable<unknown> {
  const head = {
    id: `chatcmpl-${crypto.randomUUID()}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: opts.model,
  };
  const chunk = (delta: Json, finish: string | null = null): Json => ({
    ...head,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  /** content block index -> position in tool_calls */
  const tools = new Map<number, number>();
  /** content block indexes whose input is the answer (the format tool) */
  const answer = new Set<number>();
  let usage: unknown = null;
  let stopped = false;
  for await (const e of events) {
    if (!isObject(e)) continue;
    if (isObject(e.messageStart)) yield chunk({ role: "assistant", content: "" });
    else if (isObject(e.contentBlockStart)) {
      const index = Number(e.contentBlockStart.contentBlockIndex);
      const start = isObject(e.contentBlockStart.start) ? e.contentBlockStart.start : {};
      const use = isObject(start.toolUse) ? start.toolUse : null;
      if (!use) continue;
      if (opts.formatted && use.name === FORMAT_TOOL) {
        answer.add(index);
        continue;
      }
      const position = tools.size;
      tools.set(index, position);
      yield chunk({
        tool_calls: [{ index: position, id: use.toolUseId, type: "function", function: { name: use.name, arguments: "" } }],
      });
    } else if (isObject(e.contentBlockDelta)) {
      const index = Number(e.contentBlockDelta.contentBlockIndex);
      const d = isObject(e.contentBlockDelta.delta) ? e.contentBlockDelta.delta : {};
      if (typeof d.text === "string") yield chunk({ content: d.text });
      else if (isObject(d.reasoningContent) && typeof d.reasoningContent.text === "string")
        yield chunk({ reasoning_content: d.reasoningContent.text });
      else if (isObject(d.toolUse) && typeof d.toolUse.input === "string") {
        if (answer.has(index)) yield chunk({ content: d.toolUse.input });
        else {
          const position = tools.get(index);
          if (position !== undefined)
            yield chunk({ tool_calls: [{ index: position, function: { arguments: d.toolUse.input } }] });
        }
      }
    } else if (isObject(e.messageStop)) {
      stopped = true;
      yield chunk({}, finishReason(e.messageStop.stopReason, opts.formatted));
    } else if (isObject(e.metadata)) usage = e.metadata.usage ?? usage;
  }
  if (!stopped) throw new ProviderError("connection", "upstream stream ended early");
  if (opts.includeUsage && usage) yield { ...head, choices: [], usage: chatUsage(usage) };
}
