/**
 * Tracing with OpenTelemetry (docs/tracing.md): a server span per request, child spans for its
 * stages (authentication, cache lookup, credits, charge) and one CLIENT span per provider attempt,
 * exported in batches over OTLP/HTTP (JSON). Loaded by server.ts only when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set, so a gateway without it never loads these packages.
 *
 * Spans carry metadata only (ids, names, statuses, counts): never a request or response body,
 * never an error message (it may quote the input), never a key.
 */
import {
  type Attributes,
  type Context,
  type DiagLogger,
  DiagLogLevel,
  diag,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { hrTime, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { TracingConfig } from "../config";
import type { Logger } from "../log";
import { reportedUsage, StreamUsage } from "../providers/usage";
import { vendorOf } from "../providers/vendors";
import type { AttemptEnd, AttemptInfo, AttemptTrace, RequestFacts, RequestTrace, TraceUsage, Tracing } from "../trace";

const propagator = new W3CTraceContextPropagator();

/**
 * Every time given to a span, on one clock: the performance clock from the process's time origin.
 * A plain number is turned into wall time by an offset the SDK takes per span from Date.now()
 * (whole milliseconds), so two spans' times could disagree by up to a millisecond and a child
 * end after its parent.
 */
const at = (perf: number = performance.now()) => hrTime(perf);

const headerGetter: TextMapGetter<Headers> = {
  get: (h, key) => h.get(key) ?? undefined,
  keys: (h) => [...h.keys()],
};

/** Child spans of the request stages that Server-Timing also reports (http/state.ts `mark`). */
const STAGE_SPANS: Record<string, string> = {
  body: "read body",
  auth: "authenticate",
  ratelimit: "rate limit",
  validate: "validate",
  cache: "cache lookup",
  // "credits" is the hold of a miss, or the whole charge of a cache hit (no settle follows): see end()
  settle: "charge",
};

/**
 * gen_ai.system: the GenAI product, as its vendor's descriptor names it (openai, groq; the offline
 * engine textai.offline); a self-hosted server is named as configured.
 */
function genAiSystem(info: { provider: string; type: string }): string {
  return vendorOf(info.type)?.genAiSystem ?? info.provider;
}

class AttemptSpan implements AttemptTrace {
  readonly headers: Record<string, string> = {};
  private usage: TraceUsage | undefined;
  private readonly streamed = new StreamUsage();
  private done = false;

  constructor(
    private readonly span: Span,
    private readonly system: string,
    private readonly owner: RequestSpans,
  ) {
    propagator.inject(trace.setSpan(ROOT_CONTEXT, span), this.headers, {
      set: (carrier, key, value) => {
        carrier[key] = value;
      },
    });
  }

  event(value: unknown): void {
    this.streamed.see(value);
    this.usage = this.streamed.get() ?? this.usage;
  }

  end(outcome: AttemptEnd = {}): void {
    if (this.done) return;
    this.done = true;
    const usage = outcome.usage ?? (outcome.answer !== undefined ? reportedUsage(outcome.answer) : null) ?? this.usage;
    const attrs: Attributes = {};
    const answer = outcome.answer as { model?: unknown } | null | undefined;
    const model = outcome.model ?? (typeof answer?.model === "string" ? answer.model : undefined);
    if (model) attrs["gen_ai.response.model"] = model;
    if (usage) {
      attrs["gen_ai.usage.input_tokens"] = usage.input;
      attrs["gen_ai.usage.output_tokens"] = usage.output;
    }
    if (outcome.error) {
      attrs["error.type"] = outcome.error;
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
    } else this.owner.answered(this.system, usage ?? undefined);
    this.span.setAttributes(attrs);
    this.span.end(at());
  }
}

class RequestSpans implements RequestTrace {
  private readonly span: Span;
  private readonly ctx: Context;
  private readonly stages: { name: string; start: number; end: number }[] = [];
  private pending = 1;
  private requestModel: string | undefined;
  private usage: TraceUsage | undefined;
  private system: string | undefined;
  private route: string | undefined;

  constructor(
    private readonly tracer: Tracer,
    private readonly kindOf: (provider: string) => { type: string; inProcess?: boolean },
    headers: Headers,
    startPerf: number,
  ) {
    const parent = propagator.extract(ROOT_CONTEXT, headers, headerGetter);
    this.span = tracer.startSpan("request", { kind: SpanKind.SERVER, startTime: at(startPerf) }, parent);
    this.ctx = trace.setSpan(parent, this.span);
  }

  stage(name: string, start: number, end: number): void {
    this.stages.push({ name, start, end });
  }

  attempt(info: AttemptInfo): AttemptTrace {
    this.requestModel ??= info.model;
    const system = genAiSystem(info);
    const span = this.tracer.startSpan(
      `${info.operation} ${info.model}`,
      {
        kind: SpanKind.CLIENT,
        startTime: at(),
        attributes: {
          "gen_ai.operation.name": info.operation,
          "gen_ai.system": system,
          "gen_ai.request.model": info.model,
          "textai.provider": info.provider,
        },
      },
      this.ctx,
    );
    return new AttemptSpan(span, system, this);
  }

  answered(system: string, usage: TraceUsage | undefined): void {
    this.system = system;
    if (usage) this.usage = usage;
  }

  streaming(): void {
    this.pending++;
  }

  end(f: RequestFacts): void {
    // a stream ends after the access-log hook, which alone knows the route
    if (f.route) this.route = f.route;
    if (--this.pending !== 0) return;
    const settled = this.stages.some((s) => s.name === "settle");
    for (const s of this.stages) {
      const name = s.name === "credits" ? (settled ? "hold credits" : "charge") : STAGE_SPANS[s.name];
      if (!name) continue;
      this.tracer.startSpan(name, { startTime: at(s.start), attributes: { "textai.stage": s.name } }, this.ctx).end(at(s.end));
    }
    const span = this.span;
    const route = this.route;
    span.updateName(route ? `${f.method} ${route}` : f.method);
    const attrs: Attributes = {
      "http.request.method": f.method,
      "url.path": f.path,
      "http.response.status_code": f.status,
      "textai.request_id": f.requestId,
    };
    if (route) attrs["http.route"] = route;
    if (f.fn) attrs["textai.function"] = f.fn;
    if (f.credits !== undefined) attrs["textai.credits"] = f.credits;
    if (f.cached !== undefined) attrs["textai.cache"] = f.cached ? "HIT" : "MISS";
    if (f.provider) {
      attrs["textai.provider"] = f.provider;
      // a cache hit made no attempt: the system of the provider whose answer was kept
      attrs["gen_ai.system"] = this.system ?? genAiSystem({ provider: f.provider, ...this.kindOf(f.provider) });
    }
    const model = this.requestModel ?? f.model;
    if (model) attrs["gen_ai.request.model"] = model;
    if (f.model) attrs["gen_ai.response.model"] = f.model;
    if (this.usage) {
      attrs["gen_ai.usage.input_tokens"] = this.usage.input;
      attrs["gen_ai.usage.output_tokens"] = this.usage.output;
    }
    if (f.errorCode) attrs["error.type"] = f.errorCode;
    span.setAttributes(attrs);
    // a server span is in error for 5xx only (the client's mistakes are not the server's)
    if (f.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: f.errorCode });
    span.end(at());
  }
}

/** Export failures (collector down, refused) go to the gateway's log, at most once a minute. */
function diagnostics(logger: Logger): DiagLogger {
  let last = 0;
  const say = (level: "warn" | "error") => (message: string) => {
    const now = Date.now();
    if (now - last < 60_000) return;
    last = now;
    logger.log(level, "tracing: export problem", { detail: String(message).slice(0, 300) });
  };
  const quiet = () => {};
  return { error: say("error"), warn: say("warn"), info: quiet, debug: quiet, verbose: quiet };
}

/** `providers`: each configured provider's type and whether it runs in process, by name, for gen_ai.system */
export function startTracing(
  config: TracingConfig,
  logger: Logger,
  providers: ReadonlyMap<string, { type: string; inProcess?: boolean }>,
): Tracing {
  diag.setLogger(diagnostics(logger), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  const exporter = new OTLPTraceExporter({ url: config.tracesUrl });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": config.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: config.scheduleDelayMs })],
  });
  const tracer = provider.getTracer("text-ai-gateway");
  const kindOf = (name: string) => {
    const p = providers.get(name);
    return { type: p?.type ?? "", inProcess: p?.inProcess };
  };
  // the host only: a URL may carry credentials
  logger.log("info", "tracing on", { otlp_host: new URL(config.tracesUrl).host, service: config.serviceName });
  return {
    begin: (headers, startPerf) => new RequestSpans(tracer, kindOf, headers, startPerf),
    // a collector that does not answer must not hold the shutdown up for the exporter's 10 s timeout
    shutdown: () => Promise.race([provider.shutdown(), new Promise<void>((done) => setTimeout(done, 2000).unref())]),
  };
}
