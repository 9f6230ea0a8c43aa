/**
 * A span as the gateway writes it: finished, with its times, ids and attributes. The trace observer makes
 * them from a call's summary (gateway/trace-observer.ts); otlp-proto.ts or otlp-json.ts encodes them for the
 * collector.
 */
export type SpanKindName = 'server' | 'client' | 'internal';

export type AttributeValue = string | number | boolean | string[];

/** One finished span, ids as OpenTelemetry writes them (lower-case hex: 32 for a trace, 16 for a span). */
export interface SpanRecord {
  name: string;
  kind: SpanKindName;
  traceId: string;
  spanId: string;
  /** Absent for a trace's root span. */
  parentSpanId: string | undefined;
  /** The span has a parent, and it is another service's span (the client's, from `traceparent`), not one
   * of the gateway's. */
  parentIsRemote: boolean;
  /** Milliseconds since the Unix epoch, fractional. */
  startMs: number;
  endMs: number;
  /** An undefined one has no value and is left out (OTLP has no "unset"). */
  attributes: Record<string, AttributeValue | undefined>;
  /** Set when the span's operation failed: the error's type. */
  error: string | undefined;
}

/** OTLP's numbers for span kinds (the API's plus one: OTLP keeps 0 for "unspecified"), for both encoders. */
export const OTLP_KINDS: Readonly<Record<SpanKindName, number>> = { internal: 1, server: 2, client: 3 };
export const OTLP_STATUS_UNSET = 0;
export const OTLP_STATUS_ERROR = 2;
/**
 * OTLP span flags: W3C's sampled flag (the gateway exports only sampled spans), "has is-remote", and
 * "is remote" for a span whose parent is another service's (the client's span, from `traceparent`).
 */
export const OTLP_FLAGS_LOCAL = 0x001 | 0x100;
export const OTLP_FLAGS_REMOTE_PARENT = OTLP_FLAGS_LOCAL | 0x200;

/**
 * Milliseconds since the epoch, fractional, as OpenTelemetry's `[seconds, nanoseconds]` (the nanoseconds
 * rounded to the nearest).
 */
export function hrTime(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos];
}
