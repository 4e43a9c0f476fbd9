import type { ProviderConfig } from "../../src/config";
import type { AnthropicFault } from "../helpers/anthropic-upstream";
import type { BedrockFault, RawEvent } from "../helpers/bedrock-sim";
import type { GeminiFault } from "../helpers/gemini-upstream";
import type { Fault } from "../helpers/upstream";

/**
 * The failure modes of a provider call, each a fault the simulators answer with: the transport
 * contract (transport-contract.test.ts) requires every OpenAI-shaped transport to end each alike,
 * and the vendor contract (vendor-contract.test.ts) requires every other vendor's adapter to end
 * each as `openai` does (kind, status, Retry-After), against its own simulator, with the fault in
 * its vendor's framing where it has one (`vendors`: Anthropic's error event, Gemini's error object...), or a different outcome said and explained
 * where its API's own framing says more (`expect`).
 */
/** An OpenAI-type provider (its 4xx messages pass), a self-hosted one (withheld), or Groq (its own path). */
export type Kind = "openai" | "openai-compatible" | "groq";

export interface FailureMode {
  name: string;
  faults: Fault[];
  /** the OpenAI-shaped type it runs against (transport contract) */
  kind?: Kind;
  stream?: boolean;
  over?: Partial<ProviderConfig>;
  /** per vendor type: the fault in that vendor's own framing, and its outcome when it is not openai's */
  vendors?: Record<
    string,
    {
      faults?: (GeminiFault | AnthropicFault | BedrockFault)[];
      expect?: { kind: string; status?: number; retryAfterMs?: number };
    }
  >;
}

const geminiChunk = (text: string, finish?: string) =>
  JSON.stringify({
    candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
  });

/** A ConverseStream event message (Bedrock's binary framing: bedrock-sim.ts encodes it, CRCs included) */
const bedrockEvent = (type: string, payload: string): RawEvent => ({
  headers: { ":event-type": type, ":content-type": "application/json", ":message-type": "event" },
  payload,
});
const bedrockStart = bedrockEvent("messageStart", '{"role":"assistant"}');
const bedrockText = (text: string) =>
  bedrockEvent("contentBlockDelta", JSON.stringify({ contentBlockIndex: 0, delta: { text } }));

export const FAILURE_MODES: FailureMode[] = [
  { name: "400 with an OpenAI error", faults: [{ status: 400, errorCode: "c", param: "messages[0].content", message: "bad" }] },
  { name: "404 model not found", faults: [{ status: 404, errorType: "invalid_request_error", errorCode: "model_not_found" }] },
  { name: "413, withheld", faults: [{ status: 413, message: "too big for /srv" }], kind: "openai-compatible" },
  { name: "context length", faults: [{ status: 400, contextLength: true }] },
  { name: "context length, withheld", faults: [{ status: 400, contextLength: true }], kind: "openai-compatible" },
  { name: "500", faults: [{ status: 500 }] },
  { name: "429 Retry-After", faults: [{ status: 429, retryAfter: 3 }] },
  { name: "429 Retry-After on a stream", faults: [{ status: 429, retryAfter: 1 }], stream: true },
  { name: "groq: a dropped connection", faults: [{ drop: true }], kind: "groq" },
  { name: "groq: 429 Retry-After", faults: [{ raw: { status: 429, body: "" } }], kind: "groq" },
  {
    name: "a 4xx whose body is not JSON",
    faults: [{ raw: { status: 400, contentType: "text/html", body: "<h1>Bad Request</h1>" } }],
  },
  { name: "a 4xx with an empty body", faults: [{ raw: { status: 400, contentType: "text/plain", body: "" } }] },
  { name: "a 502 whose error is a string", faults: [{ raw: { status: 502, body: '{"error":"upstream down"}' } }] },
  { name: "a 400 whose JSON has no error", faults: [{ raw: { status: 400, body: '{"detail":"nope"}' } }] },
  { name: "a 200 with malformed JSON", faults: [{ raw: { body: '{"id":"chatcmpl-1","choices":[' } }] },
  { name: "a 200 that is not JSON", faults: [{ raw: { contentType: "text/plain", body: "hello" } }] },
  { name: "a 200 with an empty JSON body", faults: [{ raw: { body: "" } }] },
  {
    name: "a stream with a malformed event",
    faults: [
      { raw: { contentType: "text/event-stream", body: 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {broken\n\n' } },
    ],
    stream: true,
    vendors: {
      bedrock: { faults: [{ events: [bedrockStart, bedrockText("a"), bedrockEvent("contentBlockDelta", "{broken")] }] },
      gemini: {
        faults: [{ raw: { contentType: "text/event-stream", body: `data: ${geminiChunk("a")}\r\n\r\ndata: {broken\r\n\r\n` } }],
      },
    },
  },
  {
    name: "a stream with an error payload",
    faults: [
      { raw: { contentType: "text/event-stream", body: 'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n' } },
    ],
    stream: true,
    vendors: {
      // an exception message of the stream (Bedrock's framing): its status, a 503 the router retries elsewhere
      bedrock: { faults: [{ streamException: "serviceUnavailableException" }], expect: { kind: "status", status: 503 } },
      anthropic: {
        faults: [
          {
            raw: {
              contentType: "text/event-stream",
              body: 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
            },
          },
        ],
      },
      // Google's error object carries its HTTP code: a 503 the router retries elsewhere, as OpenAI's connection failure
      gemini: {
        faults: [
          {
            raw: {
              contentType: "text/event-stream",
              body: 'data: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}\r\n\r\n',
            },
          },
        ],
        expect: { kind: "status", status: 503 },
      },
    },
  },
  {
    name: "a stream with an error event",
    faults: [{ raw: { contentType: "text/event-stream", body: 'event: error\ndata: {"message":"boom"}\n\n' } }],
    stream: true,
    vendors: {
      // an error message (`:message-type: error`, an error code and no status): read as a 500, retried elsewhere
      bedrock: {
        faults: [
          {
            events: [
              bedrockStart,
              {
                headers: { ":message-type": "error", ":error-code": "InternalFailure", ":error-message": "boom" },
                payload: "",
              },
            ],
          },
        ],
        expect: { kind: "status", status: 500 },
      },
      // an error without a code: Google's framing has none, it is read as a 500 (retried elsewhere, as OpenAI's connection failure)
      gemini: { expect: { kind: "status", status: 500 } },
    },
  },
  {
    name: "a stream that ends without a finish",
    faults: [
      {
        raw: {
          contentType: "text/event-stream",
          body: ': comment\r\ndata: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\r\n\r\n',
        },
      },
    ],
    stream: true,
    vendors: {
      bedrock: { faults: [{ events: [bedrockStart, bedrockText("hi")] }] },
      gemini: {
        faults: [{ raw: { contentType: "text/event-stream", body: `: comment\r\ndata: ${geminiChunk("hi")}\r\n\r\n` } }],
      },
    },
  },
  {
    name: "a stream in CRLF with comments, multi-line data and no blank line at the end",
    faults: [
      {
        raw: {
          contentType: "text/event-stream",
          body: ': ping\r\n\r\ndata: {"choices":[{"index":0,\r\ndata: "delta":{"content":"x"},"finish_reason":null}]}\r\n\r\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        },
      },
    ],
    stream: true,
    vendors: {
      // Bedrock's binary framing has no lines: its messages split across reads at every 7th byte instead
      bedrock: {
        faults: [
          {
            events: [
              bedrockStart,
              bedrockText("x"),
              bedrockEvent("contentBlockStop", '{"contentBlockIndex":0}'),
              bedrockEvent("messageStop", '{"stopReason":"end_turn"}'),
              bedrockEvent("metadata", '{"usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4},"metrics":{"latencyMs":1}}'),
            ],
            pieceBytes: 7,
          },
        ],
      },
      anthropic: {
        faults: [
          {
            raw: {
              contentType: "text/event-stream",
              body:
                ': ping\r\n\r\nevent: message_start\r\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}\r\n\r\n' +
                'event: content_block_delta\r\ndata: {"type":"content_block_delta","index":0,\r\ndata: "delta":{"type":"text_delta","text":"x"}}\r\n\r\n' +
                'event: message_delta\r\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\r\n\r\nevent: message_stop\r\ndata: {"type":"message_stop"}',
            },
          },
        ],
      },
      gemini: {
        faults: [
          {
            raw: {
              contentType: "text/event-stream",
              body: `: ping\r\n\r\ndata: {"candidates":[{"index":0,\r\ndata: "content":{"parts":[{"text":"x"}]}}]}\r\n\r\ndata: ${geminiChunk("", "STOP")}`,
            },
          },
        ],
      },
    },
  },
  {
    name: "a stream answered with JSON instead of events",
    faults: [{ raw: { body: '{"id":"x","object":"chat.completion","choices":[]}' } }],
    stream: true,
  },
  {
    name: "a stream answered with an empty body",
    faults: [{ raw: { contentType: "text/event-stream", body: "" } }],
    stream: true,
  },
  { name: "a dropped connection", faults: [{ drop: true }] },
  { name: "a dropped stream", faults: [{ drop: true }], stream: true },
  { name: "a stream cut mid-way", faults: [{ streamCut: true }], stream: true },
];
