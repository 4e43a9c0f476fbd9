/**
 * A Messages API stream (message_start, content_block_start/delta/stop, message_delta,
 * message_stop, ping) as Chat Completions chunks: text deltas as `content`, thinking as
 * `reasoning_content`, tool_use blocks as `tool_calls` (their input's JSON pieces as `arguments`),
 * the format tool's input as `content` (a response_format), the finish from `stop_reason`, and the
 * usage chunk when `stream_options.include_usage` asks for it. A stream that ends before
 * message_stop was cut: ProviderError `connection`, as for an OpenAI-style stream without a finish.
 */
import { isObject, ProviderError } from "../../types";
import { FORMAT_TOOL } from "../translating";
import { chatUsage, finishReason } from "./translate";

type Json = Record<string, unknown>;

interface State {
  head: Json;
  /** usage so far: message_start's, with message_delta's counts laid over it */
  usage: Json;
  /** the content block index of each tool call, to its position in `tool_calls` */
  tools: Map<number, number>;
  /** content block indexes whose input is the answer (the format tool) */
  answer: Set<number>;
}

const chunk = (s: State, delta: Json, finish: string | null = null): Json => ({
  ...s.head,
  choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
});

function start(s: State, event: Json, formatted: boolean): Json | null {
  const index = Number(event.index);
  const block = isObject(event.content_block) ? event.content_block : {};
  if (block.type !== "tool_use") return null;
  if (formatted && block.name === FORMAT_TOOL) {
    s.answer.add(index);
    return null;
  }
  const position = s.tools.size;
  s.tools.set(index, position);
  return chunk(s, {
    tool_calls: [{ index: position, id: block.id, type: "function", function: { name: block.name, arguments: "" } }],
  });
}

function delta(s: State, event: Json): Json | null {
  const index = Number(event.index);
  const d = isObject(event.delta) ? event.delta : {};
  if (d.type === "text_delta" && typeof d.text === "string") return chunk(s, { content: d.text });
  if (d.type === "thinking_delta" && typeof d.thinking === "string") return chunk(s, { reasoning_content: d.thinking });
  if (d.type !== "input_json_delta" || typeof d.partial_json !== "string") return null;
  if (s.answer.has(index)) return chunk(s, { content: d.partial_json });
  const position = s.tools.get(index);
  return position === undefined ? null : chunk(s, { tool_calls: [{ index: position, function: { arguments: d.partial_json } }] });
}

/** The chunks of one Anthropic stream event (none for ping, block stops, signatures). */
function translate(s: State, event: Json, formatted: boolean): Json[] {
  switch (event.type) {
    case "message_start": {
      const msg = isObject(event.message) ? event.message : {};
      s.head = { ...s.head, id: msg.id ?? s.head.id, model: msg.model ?? s.head.model };
      if (isObject(msg.usage)) s.usage = { ...msg.usage };
      return [chunk(s, { role: "assistant", content: "" })];
    }
    case "content_block_start": {
      const c = start(s, event, formatted);
      return c ? [c] : [];
    }
    case "content_block_delta": {
      const c = delta(s, event);
      return c ? [c] : [];
    }
    case "message_delta": {
      if (isObject(event.usage)) for (const [k, v] of Object.entries(event.usage)) if (v !== null) s.usage[k] = v;
      const d = isObject(event.delta) ? event.delta : {};
      return d.stop_reason ? [chunk(s, {}, finishReason(d.stop_reason, formatted))] : [];
    }
    default:
      return [];
  }
}

/**
 * The chat chunks of `events` (Anthropic's, parsed); `includeUsage`: the last chunk is the usage
 * chunk (empty choices), as OpenAI sends it.
 */
export async function* chatChunks(
  events: AsyncIterable<unknown>,
  opts: { model: string; formatted: boolean; includeUsage: boolean },
): AsyncIterable<unknown> {
  const s: State = {
    head: { id: "msg", object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: opts.model },
    usage: {},
    tools: new Map(),
    answer: new Set(),
  };
  let stopped = false;
  // read to the end (the API closes the stream after message_stop), so the request ends as complete
  for await (const e of events) {
    if (!isObject(e) || stopped) continue;
    for (const c of translate(s, e, opts.formatted)) yield c;
    stopped = e.type === "message_stop";
  }
  if (!stopped) throw new ProviderError("connection", "upstream stream ended early");
  if (opts.includeUsage) yield { ...s.head, choices: [], usage: chatUsage(s.usage) };
}
