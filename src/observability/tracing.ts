/**
 * Traces over OTLP/HTTP (OpenTelemetry's SDK and exporter, loaded only when an endpoint is set). The gateway
 * knows a call's whole shape only when it has ended — its attempts, retries, fallbacks, cache answers and
 * hooks, each with its times — so spans are written then, with their real start and end times and the ids
 * the gateway already gave them (the same as in the call's log records and the `traceparent` it returned).
 */
import { createHash } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace';

export type SpanKindName = 'server' | 'client' | 'internal';

/** One finished span, ids as OpenTelemetry writes them (lower-case hex: 32 for a trace, 16 for a span). */
export interface SpanRecord {
  name: string;
  kind: SpanKindName;
  traceId: string;
  spanId: string;
  /** Absent for a trace's root span. */
  parentSpanId: string | undefined;
  /** Milliseconds since the Unix epoch, fractional. */
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean | string[] | undefined>;
  /** Set when the span's operation failed: the error's type. */
  error: string | undefined;
}

export interface TraceExporter {
  export(spans: readonly SpanRecord[]): void;
  /** Sends what is queued and stops. */
  shutdown(): Promise<void>;
}

export interface TraceExportOptions {
  /** The OTLP/HTTP traces URL, e.g. `http://collector:4318/v1/traces`. */
  url: string;
  serviceName: string;
  headers: Record<string, string>;
  /** How long spans wait to be sent in a batch, ms. */
  delayMs: number;
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const ZERO32 = '0'.repeat(32);
const ZERO16 = '0'.repeat(16);

/**
 * The OpenTelemetry trace id of a gateway trace id: the gateway's own ids are UUIDs (a W3C trace id with
 * dashes); any other id a client chose (`x-gateway-trace-id` may be any text) is hashed, the same text always
 * to the same id.
 */
export function otelTraceId(traceId: string): string {
  const hex = traceId.replaceAll('-', '').toLowerCase();
  if (HEX32.test(hex) && hex !== ZERO32) return hex;
  return createHash('sha256').update(traceId).digest('hex').slice(0, 32);
}

export function otelSpanId(spanId: string): string {
  const hex = spanId.toLowerCase();
  if (HEX16.test(hex) && hex !== ZERO16) return hex;
  return createHash('sha256').update(spanId).digest('hex').slice(0, 16);
}

/** `traceparent` (W3C Trace Context) → the trace id as a UUID and the parent span id; undefined when invalid. */
export function readTraceparent(
  value: string | undefined,
): { traceId: string; parentSpanId: string } | undefined {
  if (value === undefined) return undefined;
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value.trim());
  if (!match || match[1] === 'ff' || match[2] === ZERO32 || match[3] === ZERO16) return undefined;
  const t = match[2];
  return {
    traceId: `${t.slice(0, 8)}-${t.slice(8, 12)}-${t.slice(12, 16)}-${t.slice(16, 20)}-${t.slice(20)}`,
    parentSpanId: match[3],
  };
}

export function traceparentOf(traceId: string, spanId: string): string {
  return `00-${otelTraceId(traceId)}-${otelSpanId(spanId)}-01`;
}

/** Hands the SDK the ids of the span being written, instead of random ones. */
class ChosenIds implements IdGenerator {
  traceId = '';
  spanId = '';
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    return this.spanId;
  }
}

export async function createTraceExporter(options: TraceExportOptions): Promise<TraceExporter> {
  const [api, sdk, otlp, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const ids = new ChosenIds();
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': options.serviceName }),
    idGenerator: ids,
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        exporter: new otlp.OTLPTraceExporter({ url: options.url, headers: options.headers }),
        scheduledDelayMillis: options.delayMs,
        maxQueueSize: 8192,
        maxExportBatchSize: 512,
      }),
    ],
  });
  const tracer = provider.getTracer('ai-gateway');
  const kinds = {
    server: api.SpanKind.SERVER,
    client: api.SpanKind.CLIENT,
    internal: api.SpanKind.INTERNAL,
  } as const;

  return {
    export(spans) {
      for (const record of spans) {
        const parent =
          record.parentSpanId === undefined
            ? api.ROOT_CONTEXT
            : api.trace.setSpanContext(api.ROOT_CONTEXT, {
                traceId: record.traceId,
                spanId: record.parentSpanId,
                traceFlags: api.TraceFlags.SAMPLED,
                isRemote: true,
              });
        ids.traceId = record.traceId;
        ids.spanId = record.spanId;
        const span = tracer.startSpan(
          record.name,
          { kind: kinds[record.kind], startTime: record.startMs, attributes: record.attributes },
          parent,
        );
        if (record.error !== undefined) {
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: record.error });
        }
        span.end(record.endMs);
      }
    },
    shutdown: () => provider.shutdown(),
  };
}
