/**
 * The failure modes of the provider contract (transport-contract.test.ts), as data: each case's
 * faults for a simulator to answer with (test/helpers/upstream.ts's `Fault`, which the vendor
 * simulators take too: mistral-sim.ts, azure-sim.ts), whether it is a stream, and the kind of
 * OpenAI-shaped provider it is for.
 */
import type { ProviderConfig } from "../../src/config";
import type { Fault } from "../helpers/upstream";

/** An OpenAI-type provider (its 4xx messages pass), a self-hosted one (withheld), or Groq (its own path). */
export type Kind = "openai" | "openai-compatible" | "groq";

export interface ContractCase {
  name: string;
  faults: Fault[];
  kind?: Kind;
  stream?: boolean;
  over?: Partial<ProviderConfig>;
}

/** Failure modes whose every field must be the same through both transports. */
export const PARITY: ContractCase[] = [
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
  },
  {
    name: "a stream with an error payload",
    faults: [
      { raw: { contentType: "text/event-stream", body: 'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n' } },
    ],
    stream: true,
  },
  {
    name: "a stream with an error event",
    faults: [{ raw: { contentType: "text/event-stream", body: 'event: error\ndata: {"message":"boom"}\n\n' } }],
    stream: true,
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
