/**
 * Traces over OTLP/HTTP (OpenTelemetry's SDK and exporter, loaded only when an endpoint is set). The gateway
 * knows a call's whole shape only when it has ended — its attempts, retries, fallbacks, cache answers and
 * hooks, each with its times — so spans are written then, with their real start and end times and the ids
 * the gateway already gave them (the same as in the call's log records and the `traceparent` it returned).
 * Each call's are written at once into the export request of its batch — OTLP's protobuf encoding
 * (otlp-proto.ts) unless JSON is asked for (otlp-json.ts) — and the batches wait in a queue
 * (span-queue.ts), which the SDK's OTLP/HTTP transport sends.
 */
import { createHash } from 'node:crypto';
import type { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import type { IExportTraceServiceResponse, ISerializer } from '@opentelemetry/otlp-transformer';
import { JsonSpanBatch, otlpJsonFrame, SCOPE_NAME } from './otlp-json.js';
import { BatchBuffers, otlpProtoFrame, ProtoSpanBatch } from './otlp-proto.js';
import { settlesBy } from '../core/settles-by.js';
import { SpanQueue, type SpanBatch } from './span-queue.js';
import type { SpanRecord } from './span-record.js';

export interface TraceExporter {
  /** Whether the calls of this trace (an OpenTelemetry trace id) are exported: the sampler's decision. */
  sampled(traceId: string): boolean;
  export(spans: readonly SpanRecord[]): void;
  /** Sends what is queued, for `shutdownTimeoutMs` (or `timeoutMs`, when shorter: what a stop has left of
   * its grace period) at most, and stops. */
  shutdown(timeoutMs?: number): Promise<void>;
  /**
   * Calls since start whose spans were `exported`, whose export `failed` (refused by the collector, or it
   * could not be reached through the transport's retries), and `dropped` unsent (the queue was full, or a
   * stop ran out of time).
   */
  counts(): Record<'exported' | 'failed' | 'dropped', number>;
}

export interface TraceExportOptions {
  /** The OTLP/HTTP traces URL, e.g. `http://collector:4318/v1/traces`. */
  url: string;
  serviceName: string;
  headers: Record<string, string>;
  /** OTLP/HTTP's encoding: `http/protobuf` (OTLP's default) or `http/json`. */
  protocol: OtlpProtocol;
  /** How long spans wait to be sent in a batch, ms. */
  delayMs: number;
  /** The share of traces exported, 0 to 1, decided by the trace id (OpenTelemetry's `traceidratio`). */
  sampleRatio: number;
  /** How long stopping may spend sending the spans still queued, ms; what is left then is dropped. */
  shutdownTimeoutMs: number;
}

export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** `ExportResultCode.SUCCESS` of @opentelemetry/core, which is not loaded unless traces are on. */
const EXPORT_SUCCESS = 0;

/** Calls per export request. */
const MAX_BATCH = 256;

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
  const uuid = uuidHex(traceId);
  if (uuid !== undefined) return uuid;
  const hex = traceId.replaceAll('-', '').toLowerCase();
  if (HEX32.test(hex) && hex !== ZERO32) return hex;
  return createHash('sha256').update(traceId).digest('hex').slice(0, 32);
}

/**
 * A UUID in lower-case hex (the gateway's own trace ids, the common case) as its 32 digits, read without a
 * regular expression; undefined for anything else, and for the all-zero id.
 */
function uuidHex(id: string): string | undefined {
  if (id.length !== 36) return undefined;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return undefined;
    } else if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return undefined;
  }
  const hex = id.slice(0, 8) + id.slice(9, 13) + id.slice(14, 18) + id.slice(19, 23) + id.slice(24);
  return hex === ZERO32 ? undefined : hex;
}

export function otelSpanId(spanId: string): string {
  const hex = spanId.toLowerCase();
  if (HEX16.test(hex) && hex !== ZERO16) return hex;
  return createHash('sha256').update(spanId).digest('hex').slice(0, 16);
}

/**
 * `traceparent` (W3C Trace Context) → the trace id as a UUID and the parent span id; undefined when invalid.
 * A version after 00 may add fields: its first four are read as 00's, and what follows the flags must
 * begin with a dash, as Trace Context asks of a reader of version 00 meeting a later version.
 */
export function readTraceparent(
  value: string | undefined,
): { traceId: string; parentSpanId: string } | undefined {
  if (value === undefined) return undefined;
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/.exec(value.trim());
  if (!match || match[1] === 'ff' || match[2] === ZERO32 || match[3] === ZERO16) return undefined;
  if (match[1] === '00' && match[5] !== undefined) return undefined;
  const t = match[2];
  return {
    traceId: `${t.slice(0, 8)}-${t.slice(8, 12)}-${t.slice(12, 16)}-${t.slice(16, 20)}-${t.slice(20)}`,
    parentSpanId: match[3],
  };
}

export function traceparentOf(traceId: string, spanId: string): string {
  return ownTraceparent(traceId, spanId) ?? `00-${otelTraceId(traceId)}-${otelSpanId(spanId)}-01`;
}

/** A traceparent's text is written here, then read as one string. */
const traceparentText = Buffer.from(`00-${ZERO32}-${ZERO16}-01`, 'latin1');

const isLowerHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66);

/**
 * The traceparent of the ids the gateway makes itself (a UUID in lower-case hex, 16 lower-case hex
 * digits), copied character by character into one string, the common case on every request's path;
 * undefined for any other ids.
 */
function ownTraceparent(traceId: string, spanId: string): string | undefined {
  if (traceId.length !== 36 || spanId.length !== 16) return undefined;
  const out = traceparentText;
  let at = 3;
  let zero = true;
  for (let i = 0; i < 36; i++) {
    const c = traceId.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return undefined;
      continue;
    }
    if (!isLowerHex(c)) return undefined;
    if (c !== 0x30) zero = false;
    out[at++] = c;
  }
  if (zero) return undefined;
  at = 36;
  zero = true;
  for (let i = 0; i < 16; i++) {
    const c = spanId.charCodeAt(i);
    if (!isLowerHex(c)) return undefined;
    if (c !== 0x30) zero = false;
    out[at++] = c;
  }
  return zero ? undefined : out.toString('latin1');
}

export async function createTraceExporter(options: TraceExportOptions): Promise<TraceExporter> {
  const [api, sdk] = await Promise.all([import('@opentelemetry/api'), import('@opentelemetry/sdk-trace')]);
  const exporter = await createOtlpExporter(options);
  let exported = 0;
  let failed = 0;
  const queue = new SpanQueue(
    batchMaker(options),
    (batch) =>
      new Promise((resolve) =>
        exporter.export(batch, (result) => {
          if (result.code === EXPORT_SUCCESS) exported += batch.calls;
          else failed += batch.calls;
          batch.release?.();
          resolve();
        }),
      ),
    { delayMs: options.delayMs, maxBatch: MAX_BATCH, maxQueued: 16 * MAX_BATCH },
  );

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
      // Written now, into a buffer outside V8's heap: the spans' records are garbage at once (span-queue.ts).
      if (spans.length > 0) queue.add(spans);
    },
    async shutdown(timeoutMs = Infinity) {
      // Bounded: with the collector unreachable, each batch would otherwise spend its retries in turn.
      const deadline = performance.now() + Math.min(options.shutdownTimeoutMs, timeoutMs);
      await queue.flush(deadline);
      await settlesBy(exporter.shutdown(), deadline);
    },
    counts: () => ({ exported, failed, dropped: queue.dropped }),
  };
}

/** A batch's export request, in the encoding its exporter sends. */
interface EncodedBatch extends SpanBatch {
  request(): Uint8Array;
  /** The request has been sent, or will not be: what it was written into may be reused. */
  release?(): void;
}

/** New batches for the protocol. A protobuf batch is one buffer, taken from those the sent batches gave back. */
function batchMaker(options: TraceExportOptions): () => EncodedBatch {
  if (options.protocol === 'http/json') {
    const frame = otlpJsonFrame(options.serviceName, SCOPE_NAME);
    return () => new JsonSpanBatch(frame);
  }
  const frame = otlpProtoFrame(options.serviceName, SCOPE_NAME);
  // About what a full batch of calls with a few spans each takes; a larger one grows its buffer once.
  const buffers = new BatchBuffers(MAX_BATCH * 1024);
  return () => new ProtoSpanBatch(frame, buffers);
}

/**
 * The SDK's OTLP/HTTP exporter — its transport, retries, timeouts, headers and `OTEL_EXPORTER_OTLP_*`
 * settings, assembled as its OTLP trace exporters assemble them — sending the gateway's batches, each
 * already written in the protocol's encoding.
 */
async function createOtlpExporter(options: TraceExportOptions): Promise<OTLPExporterBase<EncodedBatch>> {
  const [base, nodeHttp, transformer] = await Promise.all([
    import('@opentelemetry/otlp-exporter-base'),
    import('@opentelemetry/otlp-exporter-base/node-http'),
    import('@opentelemetry/otlp-transformer'),
  ]);
  const json = options.protocol === 'http/json';
  const responses = json ? transformer.JsonTraceSerializer : transformer.ProtobufTraceSerializer;
  const serializer: ISerializer<EncodedBatch, IExportTraceServiceResponse> = {
    serializeRequest: (batch) => batch.request(),
    deserializeResponse: (data) => responses.deserializeResponse(data),
  };
  const http = nodeHttp.convertLegacyHttpOptions(
    { url: options.url, headers: options.headers },
    'TRACES',
    'v1/traces',
    { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' },
  );
  return new base.OTLPExporterBase(
    nodeHttp.createOtlpHttpExportDelegate(
      http,
      serializer,
      // What the SDK's own trace exporter calls itself in its self-observability metrics (off unless a
      // meter provider is given); its items here are calls, each with its spans.
      'otlp_http_span_exporter',
      { name: 'span', countItems: (batch: EncodedBatch) => batch.calls },
      undefined,
    ),
  );
}
