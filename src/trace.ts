// Types only: what the request path knows of tracing. The OpenTelemetry implementation
// (tracing/otel.ts) is loaded by server.ts only when OTEL_EXPORTER_OTLP_ENDPOINT is set; without
// it every hook below is one `?.` on an undefined field.

/** Tokens a model reported for one call. */
export interface TraceUsage {
  input: number;
  output: number;
}

/** How one provider attempt ended. */
export interface AttemptEnd {
  /** the error code of meta.attempts ("http_503", "timeout", "aborted", ...); absent: it answered */
  error?: string;
  /** the model that answered, when the provider said */
  model?: string;
  usage?: TraceUsage;
  /** the provider's answer (an OpenAI-style body), read for its usage report only */
  answer?: unknown;
}

/** The span of one provider attempt (kind CLIENT), started before the call leaves. */
export interface AttemptTrace {
  /** `traceparent` (and `tracestate`) naming this attempt's span as the parent, for the provider call */
  readonly headers: Record<string, string>;
  /** a streamed event on its way to the client: its usage report, if any, is kept */
  event(value: unknown): void;
  /** ends the span; later calls do nothing */
  end(outcome?: AttemptEnd): void;
}

/** What the gateway asks of a provider attempt, for the GenAI attributes. */
export interface AttemptInfo {
  /** the configured provider name */
  provider: string;
  /** its type (openai, groq, openai-compatible, local, mock) */
  type: string;
  /** it runs in the gateway's process (the offline engine) */
  inProcess?: boolean;
  /** the model sent to it */
  model: string;
  /** GenAI operation: chat, embeddings, generate_content */
  operation: string;
}

/** One request's trace: its server span and the child spans hung under it. */
export interface RequestTrace {
  /** a stage of the request ran from `start` to `end` (performance.now() times): a child span */
  stage(name: string, start: number, end: number): void;
  attempt(info: AttemptInfo): AttemptTrace;
  /** the answer is streamed on after its headers: the server span ends at the second end() */
  streaming(): void;
  /** the request is over (the access-log hook, and the end of a stream): ends the server span */
  end(facts: RequestFacts): void;
}

/** What the server span is given at the end, all metadata: never a body. */
export interface RequestFacts {
  requestId: string;
  method: string;
  /** the route pattern ("/api/v1/ai/:name"), when one matched */
  route?: string;
  path: string;
  status: number;
  errorCode?: string;
  fn?: string;
  provider?: string;
  model?: string;
  credits?: number;
  cached?: boolean;
}

export interface Tracing {
  /** the server span of a request, continuing the client's `traceparent` when it sent one */
  begin(headers: Headers, startPerf: number): RequestTrace;
  /** exports what is still queued, then stops */
  shutdown(): Promise<void>;
}
