/**
 * A streamed `/v1` answer as Server-Sent Events (http/proxy-pipeline.ts opens it with
 * `chargedStream`): the upstream's events relayed one frame each, the usage chunk a client did not
 * ask for dropped, PII placeholders restored, and the charge (`StreamedCharge`) settled once the
 * stream has ended, or its client has left; a stream cut after its first byte ends with an error
 * event, never a fake `[DONE]`. A route that translated another API's body into a chat one frames
 * the chunks its own way (a `StreamWire`: http/messages-stream.ts).
 */
import type { Reservation } from "../credits/interface";
import type { StreamedCharge } from "../credits/streamed-charge";
import { type ErrorCode, GatewayError } from "../errors";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import type { ProxyStreamOutcome } from "../providers/chat";
import { type RequestGuard, StreamRestorer } from "../providers/guardrails";
import { isObject, ProviderError, type ProxyApi } from "../providers/types";
import { endTrace, mark, type RequestState } from "./state";

const enc = new TextEncoder();
const DONE = enc.encode("data: [DONE]\n\n");

/** One SSE frame per upstream event; the Responses API names its events. */
function frame(api: ProxyApi, event: unknown): Uint8Array {
  const type = api === "responses" && isObject(event) && typeof event.type === "string" ? event.type : null;
  return enc.encode(`${type ? `event: ${type}\n` : ""}data: ${JSON.stringify(event)}\n\n`);
}

/**
 * The error event that ends a stream cut after its first byte (never followed by [DONE]); a
 * Responses stream numbers it after the last event sent (ResponseErrorEvent requires it).
 */
function errorFrame(api: ProxyApi, failure: StreamFailure, sequenceNumber: number): Uint8Array {
  const { message, code } = failure;
  if (api === "responses") {
    const event = { type: "error", code, message, param: null, sequence_number: sequenceNumber };
    return enc.encode(`event: error\ndata: ${JSON.stringify(event)}\n\n`);
  }
  // the upstream's own error type when it sent one (an Anthropic provider's overloaded_error), else api_error
  const type = failure.upstream?.type ?? "api_error";
  return enc.encode(`data: ${JSON.stringify({ error: { message, type, param: null, code } })}\n\n`);
}

/**
 * Why a stream ended early, as its client is told: the gateway's code and message, and when the
 * upstream itself said why (an error event inside its stream, or an exception with a status after
 * the first event), its own error: type, message (as its provider lets messages pass) and status.
 */
export interface StreamFailure {
  code: ErrorCode;
  message: string;
  upstream?: { type: string | null; code: string | null; message: string; status?: number };
}

/** A stream's failure (what its relay caught) as its client is told it; never an internal class name. */
export function streamFailure(err: unknown): StreamFailure {
  if (err instanceof GatewayError) return { code: err.code, message: err.message };
  if (!(err instanceof ProviderError)) return { code: "provider_error", message: "upstream stream failed" };
  const { upstream } = err;
  if (upstream && (err.kind === "upstream_error" || err.kind === "status"))
    return {
      code: "provider_error",
      message: `upstream stream failed (${err.code}${upstream.type ? ` ${upstream.type}` : ""}): ${upstream.message}`,
      upstream: { type: upstream.type, code: upstream.code, message: upstream.message, status: err.status },
    };
  return { code: "provider_error", message: `upstream stream failed (${err.code})` };
}

/**
 * Another API's framing of a chat stream (the inbound Messages API's): what the client is sent for
 * each upstream chunk, once restored, at the end (after the charge, so its usage is the charged
 * one) and when the stream is cut. The usage chunk is always handed to it; no `[DONE]` follows.
 */
export interface StreamWire {
  /** the client's events for one upstream chunk: none, one or several */
  events(chunk: unknown): unknown[];
  /** the events that end a completed stream, given the tokens it was charged on */
  end(charged: { input: number; output: number }): unknown[];
  frame(event: unknown): Uint8Array;
  /** the event that ends a stream cut after its first byte */
  error(failure: StreamFailure): Uint8Array;
}

/** Whether the client asked for the usage chunk of a chat stream. */
export const asksUsage = (body: Record<string, unknown>) =>
  isObject(body.stream_options) && body.stream_options.include_usage === true;

/** A chat chunk as the client asked for it without usage: no `usage` field, no usage-only chunk (null: drop it). */
function withoutUsage(event: unknown): unknown {
  if (!isObject(event) || !("usage" in event)) return event;
  const { usage: _usage, ...rest } = event;
  return Array.isArray(rest.choices) && rest.choices.length === 0 ? null : rest;
}

/** What a charged answer tells the request log and the access log: who answered, what it cost. */
export function noteCharge(state: RequestState, r: Reservation, provider: string, model: string, cached: boolean): void {
  state.provider = provider;
  state.model = model;
  state.credits = r.amount;
  state.cached = cached;
}

export interface StreamAnswer {
  api: ProxyApi;
  fn: string;
  /** the client's body (without api_key): what it asked for (usage chunk), what a restore reads */
  body: Record<string, unknown>;
  guard: RequestGuard | null;
  request: Request;
  state: RequestState;
  outcome: ProxyStreamOutcome;
  reservation: Reservation;
  charge: StreamedCharge;
  metrics: Metrics;
  logger: Logger;
  /** another API's framing of the chunks (a route that translated its body); OpenAI's when absent */
  wire?: StreamWire;
}

type How = "completed" | "cut" | "client_closed";

/** The relay of one stream: pulled by the client's reads, cancelled when it leaves. */
class Relay {
  /** events to send before the next upstream one (a restorer may turn one event into two) */
  private queued: unknown[] = [];
  private lastSequence = -1;
  private readonly events: AsyncIterator<unknown>;
  private readonly restorer: StreamRestorer | null;
  /** a chat stream whose client did not ask for the usage chunk (the gateway did, to charge it) */
  private readonly strip: boolean;
  private streamDone = () => {};
  private readonly wire: StreamWire | null;

  constructor(private c: StreamAnswer) {
    this.events = c.outcome.events[Symbol.asyncIterator]();
    // an inbound API's events passed through are restored as that API's (the Messages API's)
    this.restorer = c.guard?.restores ? new StreamRestorer(c.guard, c.outcome.native ? "messages" : c.api, c.body) : null;
    this.wire = c.wire ?? null;
    this.strip = c.api === "chat/completions" && !asksUsage(c.body) && !this.wire;
    // the request log records a stream once it has ended, with its outcome and charge
    c.state.streamEnded = new Promise<void>((resolve) => {
      this.streamDone = resolve;
    });
  }

  /** The access log line was written when the stream began (status 200); how it ended is told here. */
  private ended(how: How, error?: string): void {
    const { state, fn } = this.c;
    if (how === "cut") state.status = 502;
    this.streamDone();
    this.c.metrics.inc("textai_streams_total", "Streamed answers by function and how they ended", { function: fn, outcome: how });
    if (how !== "completed")
      this.c.logger.log(how === "cut" ? "warn" : "info", "stream ended early", {
        request_id: state.requestId,
        fn,
        provider: this.c.outcome.provider,
        status: how === "cut" ? 502 : 499,
        credits: how === "client_closed" ? this.c.reservation.amount : 0,
        // why it was cut: the upstream's kind (upstream_error, connection, timeout, http_529...)
        ...(error ? { error } : {}),
      });
  }

  /** Charges what was delivered (once), and records it. */
  private async settle(): Promise<void> {
    const { state, charge, outcome } = this.c;
    const t = performance.now();
    await charge.charge();
    mark(state, "settle", t);
    noteCharge(state, this.c.reservation, outcome.provider, outcome.model, false);
    state.tokens = charge.tokens().usage;
  }

  /** The client left before the end: the upstream is closed, what it was sent is charged. */
  async abandoned(): Promise<void> {
    const { state, charge } = this.c;
    if (!charge.open) return;
    state.status = 499;
    state.errorCode = "client_closed";
    const closing = Promise.resolve(this.events.return?.()).catch(() => {});
    try {
      await this.settle();
    } catch (err) {
      this.c.logger.log("error", "charge of an abandoned stream failed", {
        request_id: state.requestId,
        fn: this.c.fn,
        error: (err as Error).message,
      });
    }
    this.ended("client_closed");
    endTrace(state, this.c.request);
    await closing;
  }

  private send(controller: ReadableStreamDefaultController<Uint8Array>, out: unknown): void {
    const seq = isObject(out) ? out.sequence_number : undefined;
    if (typeof seq === "number") this.lastSequence = seq;
    controller.enqueue(this.wire ? this.wire.frame(out) : frame(this.c.api, out));
  }

  /** What the client is sent for upstream events (restored): as they are, or in the wire's framing. */
  private toClient(events: unknown[]): unknown[] {
    const { wire } = this;
    return wire ? events.flatMap((e) => wire.events(e)) : events;
  }

  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    const { queued, restorer, events, c } = this;
    try {
      if (queued.length > 0) return this.send(controller, queued.shift());
      let next = await events.next();
      // an event the client did not ask for (the usage chunk) is skipped: pull must enqueue or close
      for (; !next.done; next = await events.next()) {
        c.charge.saw(next.value);
        const out = this.strip ? withoutUsage(next.value) : next.value;
        if (out === null) continue;
        // restore_pii: the client's values back, a placeholder cut between chunks included
        queued.push(...this.toClient(restorer ? restorer.push(out) : [out]));
        if (queued.length > 0) return this.send(controller, queued.shift());
      }
      if (restorer) queued.push(...this.toClient(restorer.end()));
      if (queued.length > 0) return this.send(controller, queued.shift());
      if (!c.charge.open) return;
      await this.settle();
      this.ended("completed");
      endTrace(c.state, c.request);
      if (this.wire) for (const e of this.wire.end(c.charge.tokens().usage)) this.send(controller, e);
      else if (c.api === "chat/completions") controller.enqueue(DONE);
      controller.close();
    } catch (err) {
      // the client left (Bun aborts its signal, which aborts the upstream): charged for what it was sent
      if (c.request.signal.aborted) return this.abandoned();
      this.cut(controller, err);
    }
  }

  /** The charge failed, or the stream was cut after the first byte: an error event, never a fake [DONE]. */
  private cut(controller: ReadableStreamDefaultController<Uint8Array>, err: unknown): void {
    const { c } = this;
    if (c.charge.open) {
      c.charge.release();
      this.ended("cut", err instanceof ProviderError ? err.code : err instanceof GatewayError ? err.code : "unexpected");
    }
    const failure = streamFailure(err);
    c.state.errorCode = failure.code;
    endTrace(c.state, c.request);
    try {
      controller.enqueue(this.wire ? this.wire.error(failure) : errorFrame(c.api, failure, this.lastSequence + 1));
      controller.close();
    } catch {
      // the client is gone already
    }
    this.streamDone();
  }
}

/** The stream's answer: status 200 and its headers now, its events as the client reads them. */
export function streamAnswer(c: StreamAnswer): Response {
  const { state, outcome } = c;
  noteStreamStart(state, outcome);
  const relay = new Relay(c);
  const sse = new ReadableStream<Uint8Array>({
    pull: (controller) => relay.pull(controller),
    cancel: () => relay.abandoned(),
  });
  state.status = 200;
  state.trace?.streaming();
  if (outcome.deployment) state.headers["x-textai-deployment"] = outcome.deployment;
  return new Response(sse, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-textai-provider": outcome.provider,
      ...state.headers,
    },
  });
}

function noteStreamStart(state: RequestState, outcome: ProxyStreamOutcome): void {
  state.provider = outcome.provider;
  state.model = outcome.model;
}
