/**
 * An OTLP/HTTP trace receiver on a real port: what a collector would be for the gateway. It accepts
 * POST /v1/traces in the JSON encoding (what @opentelemetry/exporter-trace-otlp-http sends) and
 * decodes every span, keeping the raw bodies too (to look for what must never be exported).
 *
 *   const otlp = await startOtlpReceiver();
 *   ... OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url ...
 *   const spans = await otlp.waitFor((all) => all.filter((s) => s.traceId === id), 3);
 */

/** OTLP span kinds (opentelemetry-proto trace.proto) */
export const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
export const STATUS_ERROR = 2;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  startNs: bigint;
  endNs: bigint;
  /** the resource's service.name */
  service: string;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** every export body as received */
  bodies: string[];
  /** content types of the exports */
  contentTypes: string[];
  /** waits (up to 4 s) until `pick` returns at least `count` spans, and returns them */
  waitFor(pick: (spans: ReceivedSpan[]) => ReceivedSpan[], count: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

function value(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return JSON.stringify(v);
}

const attributesOf = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

interface ExportBody {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        status?: { code?: number; message?: string };
        startTimeUnixNano: string | number;
        endTimeUnixNano: string | number;
      }[];
    }[];
  }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method !== "POST" || path !== "/v1/traces") return new Response("not found", { status: 404 });
      const text = await req.text();
      bodies.push(text);
      contentTypes.push(req.headers.get("content-type") ?? "");
      const body = JSON.parse(text) as ExportBody;
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)["service.name"] ?? "");
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
              status: s.status ?? {},
              startNs: BigInt(s.startTimeUnixNano),
              endNs: BigInt(s.endTimeUnixNano),
              service,
            });
          }
        }
      }
      return Response.json({ partialSuccess: {} });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    bodies,
    contentTypes,
    async waitFor(pick, count) {
      const until = Date.now() + 4_000;
      let got = pick(spans);
      while (got.length < count && Date.now() < until) {
        await Bun.sleep(20);
        got = pick(spans);
      }
      return got;
    },
    async close() {
      await server.stop(true);
    },
  };
}
