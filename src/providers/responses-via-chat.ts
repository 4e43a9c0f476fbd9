/**
 * The Responses API answered through Chat Completions, for providers without it (docs/openai-compatible.md). Only what maps one to one is translated: text and image input,
 * instructions, function tools and their results, json_schema output, sampling and the output
 * limit. Anything else (stored state, built-in tools, reasoning, ...) makes the request
 * untranslatable, so such a provider is skipped instead of sent a request with fields removed.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Fields with a Chat Completions equivalent; `store: false` and `truncation: "disabled"` change nothing. */
const DIRECT = ["temperature", "top_p", "user", "metadata", "parallel_tool_calls", "stream", "service_tier"];
const NEUTRAL: Record<string, unknown> = { store: false, truncation: "disabled" };
const TRANSLATED = new Set(["model", "input", "instructions", "tools", "tool_choice", "text", "max_output_tokens"]);

/** The first field of a Responses request that Chat Completions cannot express, or null. */
export function untranslatable(body: Json): string | null {
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined || DIRECT.includes(key) || TRANSLATED.has(key)) continue;
    if (key in NEUTRAL && NEUTRAL[key] === value) continue;
    return key;
  }
  if (Array.isArray(body.tools) && body.tools.some((t) => !isObject(t) || t.type !== "function")) return "tools";
  const format = isObject(body.text) ? body.text.format : undefined;
  if (isObject(body.text) && Object.keys(body.text).some((k) => k !== "format")) return "text";
  if (format !== undefined && (!isObject(format) || !["text", "json_schema", "json_object"].includes(String(format.type))))
    return "text.format";
  if (body.input !== undefined && typeof body.input !== "string" && !Array.isArray(body.input)) return "input";
  for (const [i, item] of (Array.isArray(body.input) ? body.input : []).entries()) {
    const bad = untranslatableItem(item, `input[${i}]`);
    if (bad) return bad;
  }
  return null;
}

/** The place in one input item (`input[2]`, `input[2].content[1]`) Chat Completions cannot express, or null. */
function untranslatableItem(item: unknown, at: string): string | null {
  if (!isObject(item)) return at;
  const type = item.type ?? "message";
  if (type === "function_call" || type === "function_call_output") return null;
  if (type !== "message") return at;
  if (typeof item.content === "string") return null;
  if (!Array.isArray(item.content)) return `${at}.content`;
  for (const [j, p] of item.content.entries()) {
    if (!isObject(p) || !["input_text", "output_text", "input_image"].includes(String(p.type))) return `${at}.content[${j}]`;
    if (p.type === "input_image" && typeof p.image_url !== "string") return `${at}.content[${j}]`;
  }
  return null;
}

function contentOf(content: unknown): unknown {
  if (typeof content === "string") return content;
  return (content as Json[]).map((p) =>
    p.type === "input_image"
      ? { type: "image_url", image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } }
      : { type: "text", text: p.text },
  );
}

/** The Chat Completions request for a translatable Responses request. */
export function chatFromResponses(body: Json): Json {
  const messages: Json[] = [];
  if (typeof body.instructions === "string") messages.push({ role: "system", content: body.instructions });
  const items: Json[] = typeof body.input === "string" ? [{ role: "user", content: body.input }] : ((body.input as Json[]) ?? []);
  for (const item of items) {
    if (item.type === "function_call") {
      const call = { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } };
      const last = messages[messages.length - 1];
      // consecutive calls are one assistant turn with several tool_calls
      if (last?.role === "assistant" && Array.isArray(last.tool_calls) && last.content === null) last.tool_calls.push(call);
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (item.type === "function_call_output") {
      messages.push({
        role: "tool",
        tool_call_id: item.call_id,
        content: typeof item.output === "string" ? item.output : JSON.stringify(item.output),
      });
    } else messages.push({ role: item.role, content: contentOf(item.content) });
  }
  const chat: Json = { model: body.model, messages };
  for (const key of DIRECT) if (body[key] !== undefined) chat[key] = body[key];
  if (body.max_output_tokens !== undefined) chat.max_tokens = body.max_output_tokens;
  if (Array.isArray(body.tools)) {
    chat.tools = (body.tools as Json[]).map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        ...(t.parameters !== undefined ? { parameters: t.parameters } : {}),
        ...(t.strict !== undefined && t.strict !== null ? { strict: t.strict } : {}),
      },
    }));
  }
  const choice = body.tool_choice;
  if (choice !== undefined)
    chat.tool_choice =
      isObject(choice) && choice.type === "function" ? { type: "function", function: { name: choice.name } } : choice;
  const format = isObject(body.text) && isObject(body.text.format) ? body.text.format : undefined;
  if (format?.type === "json_schema") {
    const { type: _t, name, schema, strict, description } = format;
    chat.response_format = {
      type: "json_schema",
      json_schema: {
        name,
        schema,
        ...(strict !== undefined ? { strict } : {}),
        ...(description !== undefined ? { description } : {}),
      },
    };
  } else if (format?.type === "json_object") chat.response_format = { type: "json_object" };
  if (body.stream === true) chat.stream_options = { include_usage: true };
  return chat;
}

interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

function usageOf(u: ChatUsage | undefined | null) {
  if (!u) return null;
  const input = u.prompt_tokens ?? 0;
  const output = u.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: u.prompt_tokens_details?.cache_write_tokens ?? 0,
    },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
  };
}

const seconds = () => Math.floor(Date.now() / 1000);

/** Which response an envelope is: the same id and creation time in every event of a stream. */
interface ResponseRef {
  id: string;
  createdAt: number;
}

/**
 * The Response object around `output`, echoing the request as OpenAI does. Fields the schema
 * types without null (`usage`, `user`) are left out while there is nothing to say.
 */
function envelope(
  body: Json,
  ref: ResponseRef,
  model: string,
  status: string,
  output: Json[],
  usage: unknown,
  finish?: string | null,
) {
  return {
    id: ref.id,
    object: "response",
    created_at: ref.createdAt,
    status,
    completed_at: status === "completed" ? seconds() : null,
    error: null,
    incomplete_details: finish === "length" ? { reason: "max_output_tokens" } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: "disabled",
    ...(usage ? { usage } : {}),
    ...(typeof body.user === "string" ? { user: body.user } : {}),
    metadata: body.metadata ?? {},
  };
}

const statusOf = (finish: string | null | undefined) => (finish === "length" ? "incomplete" : "completed");
const messageItem = (id: string, text: string, status = "completed") => ({
  type: "message",
  id,
  status,
  role: "assistant",
  content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
});
const callItem = (call: { id: string; name: string; arguments: string }, status = "completed") => ({
  type: "function_call",
  id: `fc_${call.id}`,
  call_id: call.id,
  name: call.name,
  arguments: call.arguments,
  status,
});

/** A Chat Completions answer as a Response. */
export function responseFromChat(body: Json, chat: Json, responseId: string): Json {
  const choice = (Array.isArray(chat.choices) ? chat.choices[0] : undefined) as
    | {
        message?: { content?: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[] };
        finish_reason?: string;
      }
    | undefined;
  const output: Json[] = [];
  const text = choice?.message?.content;
  if (typeof text === "string" && text !== "") output.push(messageItem(`msg_${responseId}`, text));
  for (const c of choice?.message?.tool_calls ?? []) output.push(callItem({ id: c.id, ...c.function }));
  const model = typeof chat.model === "string" ? chat.model : String(body.model);
  return envelope(
    body,
    { id: `resp_${responseId}`, createdAt: seconds() },
    model,
    statusOf(choice?.finish_reason),
    output,
    usageOf(chat.usage as ChatUsage),
    choice?.finish_reason,
  );
}

interface ChunkChoice {
  delta?: {
    content?: string | null;
    tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
  };
  finish_reason?: string | null;
}

/** Chat Completions chunks as the Responses API's named events (created ... completed). */
export async function* responseEventsFromChat(
  body: Json,
  chunks: AsyncIterable<unknown>,
  responseId: string,
): AsyncIterable<Json> {
  let seq = 0;
  const event = (type: string, data: Json): Json => ({ type, sequence_number: seq++, ...data });
  let model = String(body.model);
  const ref: ResponseRef = { id: `resp_${responseId}`, createdAt: seconds() };
  yield event("response.created", { response: envelope(body, ref, model, "in_progress", [], null) });
  yield event("response.in_progress", { response: envelope(body, ref, model, "in_progress", [], null) });
  const output: Json[] = [];
  let text: { index: number; id: string; value: string } | null = null;
  const calls = new Map<number, { index: number; id: string; name: string; arguments: string }>();
  let finish: string | null = null;
  let usage: ChatUsage | undefined;
  const closeText = function* () {
    if (!text) return;
    const ids = { item_id: text.id, output_index: text.index };
    const part = { type: "output_text", text: text.value, annotations: [], logprobs: [] };
    yield event("response.output_text.done", { ...ids, content_index: 0, text: text.value, logprobs: [] });
    yield event("response.content_part.done", { ...ids, content_index: 0, part });
    const item = messageItem(text.id, text.value);
    output[text.index] = item;
    yield event("response.output_item.done", { output_index: text.index, item });
    text = null;
  };
  for await (const raw of chunks) {
    const chunk = raw as { model?: string; choices?: ChunkChoice[]; usage?: ChatUsage | null };
    if (typeof chunk.model === "string") model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const content = choice.delta?.content;
    if (content) {
      if (!text) {
        text = { index: output.length, id: `msg_${responseId}`, value: "" };
        output.push({});
        yield event("response.output_item.added", {
          output_index: text.index,
          item: { ...messageItem(text.id, "", "in_progress"), content: [] },
        });
        yield event("response.content_part.added", {
          item_id: text.id,
          output_index: text.index,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [], logprobs: [] },
        });
      }
      text.value += content;
      yield event("response.output_text.delta", {
        item_id: text.id,
        output_index: text.index,
        content_index: 0,
        delta: content,
        logprobs: [],
      });
    }
    for (const d of choice.delta?.tool_calls ?? []) {
      let call = calls.get(d.index);
      if (!call) {
        yield* closeText();
        call = { index: output.length, id: d.id ?? `call_${d.index}`, name: d.function?.name ?? "", arguments: "" };
        calls.set(d.index, call);
        output.push({});
        yield event("response.output_item.added", { output_index: call.index, item: callItem(call, "in_progress") });
      }
      const delta = d.function?.arguments;
      if (delta) {
        call.arguments += delta;
        yield event("response.function_call_arguments.delta", { item_id: `fc_${call.id}`, output_index: call.index, delta });
      }
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  yield* closeText();
  for (const call of calls.values()) {
    yield event("response.function_call_arguments.done", {
      item_id: `fc_${call.id}`,
      name: call.name,
      output_index: call.index,
      arguments: call.arguments,
    });
    const item = callItem(call);
    output[call.index] = item;
    yield event("response.output_item.done", { output_index: call.index, item });
  }
  const status = statusOf(finish);
  yield event(status === "completed" ? "response.completed" : "response.incomplete", {
    response: envelope(body, ref, model, status, output, usageOf(usage), finish),
  });
}
