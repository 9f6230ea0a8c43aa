/**
 * Traces over OTLP/HTTP (OpenTelemetry's SDK and exporter, loaded only when an endpoint is set). The gateway
 * knows a call's whole shape only when it has ended — its attempts, retries, fallbacks, cache answers and
 * hooks, each with its times — so spans are written then, with their real start and end times and the ids
 * the gateway already gave them (the same as in the call's log records and the `traceparent` it returned).
 */
import { createHash } from 'node:crypto';
import type { Attributes, HrTime, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';

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
  /** Only the attributes that have a value (OTLP has no "unset"). */
  attributes: Record<string, string | number | boolean | string[]>;
  /** Set when the span's operation failed: the error's type. */
  error: string | undefined;
}

export interface TraceExporter {
  /** Whether the calls of this trace (an OpenTelemetry trace id) are exported: the sampler's decision. */
  sampled(traceId: string): boolean;
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
  /** The share of traces exported, 0 to 1, decided by the trace id (OpenTelemetry's `traceidratio`). */
  sampleRatio: number;
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

/** Milliseconds since the epoch, fractional, as OpenTelemetry's `[seconds, nanoseconds]`. */
function hrTime(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos];
}

const NO_LINKS: ReadableSpan['links'] = [];
const NO_EVENTS: ReadableSpan['events'] = [];
/** What every span of one exporter shares: the resource, the scope, and the API's numbers for kinds and flags. */
interface SpanCommons {
  resource: ReadableSpan['resource'];
  instrumentationScope: ReadableSpan['instrumentationScope'];
  kinds: Record<SpanKindName, SpanKind>;
  unset: SpanStatus;
  error: SpanStatus['code'];
  sampled: number;
}

/**
 * A span the gateway has finished, as the batch processor and the OTLP exporter read it: one object of one
 * shape per span, its context, parent and `duration` made only when asked for (the exporter reads the
 * context once, the duration never).
 */
class FinishedSpan implements ReadableSpan {
  readonly name: string;
  readonly kind: SpanKind;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly status: SpanStatus;
  readonly attributes: Attributes;
  readonly links = NO_LINKS;
  readonly events = NO_EVENTS;
  readonly ended = true;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;

  readonly resource: ReadableSpan['resource'];
  readonly instrumentationScope: ReadableSpan['instrumentationScope'];

  constructor(
    private readonly record: SpanRecord,
    private readonly commons: SpanCommons,
  ) {
    this.name = record.name;
    this.kind = commons.kinds[record.kind];
    this.startTime = hrTime(record.startMs);
    this.endTime = hrTime(record.endMs);
    this.status = record.error === undefined ? commons.unset : { code: commons.error, message: record.error };
    this.attributes = record.attributes;
    this.resource = commons.resource;
    this.instrumentationScope = commons.instrumentationScope;
  }

  spanContext(): SpanContext {
    const { traceId, spanId } = this.record;
    return { traceId, spanId, traceFlags: this.commons.sampled };
  }

  get parentSpanContext(): SpanContext | undefined {
    const { traceId, parentSpanId } = this.record;
    if (parentSpanId === undefined) return undefined;
    return { traceId, spanId: parentSpanId, traceFlags: this.commons.sampled, isRemote: true };
  }

  get duration(): HrTime {
    return hrTime(this.record.endMs - this.record.startMs);
  }
}

export async function createTraceExporter(options: TraceExportOptions): Promise<TraceExporter> {
  const [api, sdk, otlp, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  // The spans are finished when the gateway hands them over, with ids and times of its own: they go
  // straight to the batch processor as the finished spans it exports, without the SDK's tracer, which
  // would build each one as a live span (validating its attributes, keeping a context) only to end it.
  const processor = new sdk.BatchSpanProcessor({
    exporter: new otlp.OTLPTraceExporter({ url: options.url, headers: options.headers }),
    scheduledDelayMillis: options.delayMs,
    maxQueueSize: 8192,
    maxExportBatchSize: 512,
  });
  const commons: SpanCommons = {
    resource: resources.resourceFromAttributes({ 'service.name': options.serviceName }),
    instrumentationScope: { name: 'ai-gateway' },
    kinds: { server: api.SpanKind.SERVER, client: api.SpanKind.CLIENT, internal: api.SpanKind.INTERNAL },
    unset: { code: api.SpanStatusCode.UNSET },
    error: api.SpanStatusCode.ERROR,
    sampled: api.TraceFlags.SAMPLED,
  };

  // The SDK's own ratio sampler, so that the gateway keeps the same traces as other services sampling the
  // same ratio; every trace when the ratio is 1, without asking it.
  const sampler = options.sampleRatio < 1 ? new sdk.TraceIdRatioBasedSampler(options.sampleRatio) : undefined;
  const recordAndSample = sdk.SamplingDecision.RECORD_AND_SAMPLED;

  return {
    sampled(traceId) {
      if (sampler === undefined) return true;
      const { decision } = sampler.shouldSample(api.ROOT_CONTEXT, traceId);
      return decision === recordAndSample;
    },
    export(spans) {
      for (const record of spans) processor.onEnd(new FinishedSpan(record, commons));
    },
    shutdown: () => processor.shutdown(),
  };
}
