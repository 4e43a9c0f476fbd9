/**
 * A streamed `/v1/messages` answer over Chat Completions: the chat chunks (restored by the
 * guardrails first, http/proxy-stream.ts) as Anthropic's events, in Anthropic's order
 * (`message_start`, `ping`, then per content block `content_block_start`, its
 * `content_block_delta`s (`text_delta`, `input_json_delta`) and `content_block_stop`, then
 * `message_delta` with the stop reason and usage, `message_stop`), each framed with its `event:`
 * line; a stream cut after its first byte ends with an `error` event. An `anthropic` provider's own
 * events (the request passed through) are relayed as they came, restored, its own error event too.
 */
import { isObject } from "../providers/types";
import { messagesErrorBody, messagesErrorType, messagesErrorTypeOfUpstream } from "./messages-errors";
import { messagesUsage, stopReason, stopSequenceOf } from "./messages-translate";
import type { StreamFailure, StreamWire } from "./proxy-stream";

type Json = Record<string, unknown>;
const enc = new TextEncoder();

/** The content block being streamed: text, or the tool call of this chat tool index. */
type Open = { kind: "text" } | { kind: "tool"; tool: number };

export class MessagesStreamWire implements StreamWire {
  private started = false;
  private finished = false;
  private open: Open | null = null;
  private index = -1;
  private finish: unknown = null;
  private stopSequence: string | null = null;
  private usage: unknown;
  private model: string;

  /**
   * `promptTokens`: the gateway's estimate of the input, what message_start says before the
   * provider's count comes at the end. `native`: the events are Anthropic's own (an `anthropic`
   * provider was sent the request as sent): relayed as they are, its message_delta and
   * message_stop included.
   */
  constructor(
    private readonly ctx: { id: string; model: string; stopSequences: unknown; promptTokens: number; native?: boolean },
  ) {
    this.model = ctx.model;
  }

  private start(out: Json[]): void {
    if (this.started) return;
    this.started = true;
    const message = {
      id: this.ctx.id,
      type: "message",
      role: "assistant",
      model: this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      usage: {
        input_tokens: this.ctx.promptTokens,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    };
    out.push({ type: "message_start", message }, { type: "ping" });
  }

  private close(out: Json[]): void {
    if (!this.open) return;
    out.push({ type: "content_block_stop", index: this.index });
    this.open = null;
  }

  private openBlock(out: Json[], open: Open, block: Json): void {
    this.close(out);
    this.open = open;
    this.index++;
    out.push({ type: "content_block_start", index: this.index, content_block: block });
  }

  private text(out: Json[], text: string): void {
    if (this.open?.kind !== "text") this.openBlock(out, { kind: "text" }, { type: "text", text: "", citations: null });
    out.push({ type: "content_block_delta", index: this.index, delta: { type: "text_delta", text } });
  }

  private toolCall(out: Json[], call: Json): void {
    const tool = typeof call.index === "number" ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    const same = this.open?.kind === "tool" && this.open.tool === tool;
    if (!same || typeof call.id === "string") {
      const id = typeof call.id === "string" ? call.id : `toolu_${this.ctx.id.slice(4)}_${tool}`;
      this.openBlock(out, { kind: "tool", tool }, { type: "tool_use", id, name: String(fn.name ?? ""), input: {} });
    }
    if (typeof fn.arguments === "string" && fn.arguments !== "")
      out.push({
        type: "content_block_delta",
        index: this.index,
        delta: { type: "input_json_delta", partial_json: fn.arguments },
      });
  }

  events(chunk: unknown): unknown[] {
    if (this.ctx.native) return [chunk];
    const out: Json[] = [];
    if (!isObject(chunk)) return out;
    if (!this.started && typeof chunk.model === "string") this.model = chunk.model;
    this.start(out);
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c) => isObject(c) && (c.index ?? 0) === 0) : undefined;
    if (!isObject(choice)) return out;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const text = typeof delta.content === "string" ? delta.content : typeof delta.refusal === "string" ? delta.refusal : "";
    if (text !== "") this.text(out, text);
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) if (isObject(call)) this.toolCall(out, call);
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      this.finish = choice.finish_reason;
      this.stopSequence = stopSequenceOf(choice, this.ctx.stopSequences);
    }
    return out;
  }

  end(charged: { input: number; output: number }): unknown[] {
    if (this.finished || this.ctx.native) return [];
    this.finished = true;
    const out: Json[] = [];
    this.start(out);
    this.close(out);
    const usage = messagesUsage(this.usage, charged);
    out.push(
      {
        type: "message_delta",
        delta: { stop_reason: stopReason(this.finish, this.stopSequence), stop_sequence: this.stopSequence, stop_details: null },
        usage,
      },
      { type: "message_stop" },
    );
    return out;
  }

  frame(event: unknown): Uint8Array {
    const type = isObject(event) && typeof event.type === "string" ? event.type : "message";
    return enc.encode(`event: ${type}\ndata: ${JSON.stringify(event)}\n\n`);
  }

  /**
   * An `anthropic` provider's own error event goes on as it sent it (its type and message: an
   * overloaded_error stays one); another provider's error, or a failure of the gateway's, in
   * Anthropic's type for what it was (messages-errors.ts).
   */
  error(failure: StreamFailure): Uint8Array {
    const { upstream } = failure;
    const body =
      this.ctx.native && upstream?.type
        ? messagesErrorBody(upstream.type, upstream.message)
        : messagesErrorBody(upstream ? messagesErrorTypeOfUpstream(upstream) : messagesErrorType(failure.code), failure.message);
    return enc.encode(`event: error\ndata: ${body}\n\n`);
  }
}
