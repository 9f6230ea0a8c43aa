/**
 * The gateway's span records (observability/span-record.ts) as the OpenTelemetry SDK's `ReadableSpan`, so
 * that the SDK's own serializer can encode the same spans as the gateway's encoder (otlp-json.ts): the
 * tests and the encoding bench compare the two byte for byte.
 */
import type { Attributes, HrTime, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { hrTime, type SpanKindName, type SpanRecord } from '../../src/observability/span-record.js';
import { SCOPE_NAME } from '../../src/observability/otlp-json.js';

const NO_LINKS: ReadableSpan['links'] = [];
const NO_EVENTS: ReadableSpan['events'] = [];
/** What every span of one exporter shares: the resource, the scope, and the API's numbers for kinds and flags. */
export interface SpanCommons {
  resource: ReadableSpan['resource'];
  instrumentationScope: ReadableSpan['instrumentationScope'];
  kinds: Record<SpanKindName, SpanKind>;
  unset: SpanStatus;
  error: SpanStatus['code'];
  sampled: number;
}

export function spanCommons(
  api: typeof import('@opentelemetry/api'),
  resources: typeof import('@opentelemetry/resources'),
  serviceName: string,
): SpanCommons {
  return {
    resource: resources.resourceFromAttributes({ 'service.name': serviceName }),
    instrumentationScope: { name: SCOPE_NAME },
    kinds: { server: api.SpanKind.SERVER, client: api.SpanKind.CLIENT, internal: api.SpanKind.INTERNAL },
    unset: { code: api.SpanStatusCode.UNSET },
    error: api.SpanStatusCode.ERROR,
    sampled: api.TraceFlags.SAMPLED,
  };
}

/**
 * A span the gateway has finished, as the SDK's batch processor holds it: the record itself, read by the
 * exporter's encoder (otlp-json.ts), behind the SDK's `ReadableSpan` view of it, whose parts are made only
 * when asked for (the batch processor reads the context once, the resource once a batch, nothing else).
 */
export class FinishedSpan implements ReadableSpan {
  readonly links = NO_LINKS;
  readonly events = NO_EVENTS;
  readonly ended = true;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;

  constructor(
    readonly record: SpanRecord,
    private readonly commons: SpanCommons,
  ) {}

  get name(): string {
    return this.record.name;
  }

  get kind(): SpanKind {
    return this.commons.kinds[this.record.kind];
  }

  get startTime(): HrTime {
    return hrTime(this.record.startMs);
  }

  get endTime(): HrTime {
    return hrTime(this.record.endMs);
  }

  get status(): SpanStatus {
    const { error } = this.record;
    return error === undefined ? this.commons.unset : { code: this.commons.error, message: error };
  }

  get attributes(): Attributes {
    return this.record.attributes;
  }

  get resource(): ReadableSpan['resource'] {
    return this.commons.resource;
  }

  get instrumentationScope(): ReadableSpan['instrumentationScope'] {
    return this.commons.instrumentationScope;
  }

  spanContext(): SpanContext {
    const { traceId, spanId } = this.record;
    return { traceId, spanId, traceFlags: this.commons.sampled };
  }

  get parentSpanContext(): SpanContext | undefined {
    const { traceId, parentSpanId } = this.record;
    if (parentSpanId === undefined) return undefined;
    return {
      traceId,
      spanId: parentSpanId,
      traceFlags: this.commons.sampled,
      isRemote: this.record.parentIsRemote,
    };
  }

  get duration(): HrTime {
    return hrTime(this.record.endMs - this.record.startMs);
  }
}
