/**
 * The gateway's finished spans (`SpanRecord`s) written as the body of an OTLP/HTTP JSON export
 * (`ExportTraceServiceRequest`), as text, directly.
 *
 * The OpenTelemetry SDK's JSON serializer first turns each span into an object graph (its times through
 * BigInt, every attribute into a `{key, value}` pair of objects) and then stringifies that graph, on the
 * event loop, for every batch; writing the text at once takes about a third less CPU per span
 * (`bench/otlp-encoding.ts`). It writes the same bytes as the SDK's serializer for the spans the gateway
 * makes — same fields, same order, same number and time formats — which the tests check against the SDK's
 * own output; it knows nothing of span events, links or trace state, which the gateway never sets.
 */
import type { SpanBatch } from './span-queue.js';
import {
  hrTime,
  OTLP_FLAGS_LOCAL,
  OTLP_FLAGS_REMOTE_PARENT,
  OTLP_KINDS,
  OTLP_STATUS_ERROR,
  OTLP_STATUS_UNSET,
  type SpanRecord,
} from './span-record.js';

const STATUS_UNSET = `{"code":${OTLP_STATUS_UNSET}}`;
const FLAGS_LOCAL_TAIL = `,"links":[],"droppedLinksCount":0,"flags":${OTLP_FLAGS_LOCAL}}`;
const FLAGS_REMOTE_PARENT_TAIL = `,"links":[],"droppedLinksCount":0,"flags":${OTLP_FLAGS_REMOTE_PARENT}}`;

/** No spans, no resource: as the SDK writes it. */
const EMPTY_REQUEST = '{"resourceSpans":[]}';

/** What every export of one gateway shares, written once: the text before and after the spans. */
export interface OtlpJsonFrame {
  head: string;
  tail: string;
}

export function otlpJsonFrame(serviceName: string, scopeName: string): OtlpJsonFrame {
  const resource = `{"attributes":[${keyPrefix('service.name')}${anyValue(serviceName)}}],"droppedAttributesCount":0}`;
  const scope = `{"name":${JSON.stringify(scopeName)}}`;
  return {
    head: `{"resourceSpans":[{"resource":${resource},"scopeSpans":[{"scope":${scope},"spans":[`,
    tail: ']}]}]}',
  };
}

/** The instrumentation scope of the gateway's spans. */
export const SCOPE_NAME = 'ai-gateway';

/** The JSON text of one export request holding these spans. */
export function encodeOtlpJson(frame: OtlpJsonFrame, spans: readonly SpanRecord[]): string {
  if (spans.length === 0) return EMPTY_REQUEST;
  return frame.head + spansJson(spans) + frame.tail;
}

/**
 * Spans' JSON objects, comma-separated: the part of an export request they take. Written by appending to
 * one string, whose pieces V8 joins once when the text is encoded; each attribute's key is written once per
 * process (keyPrefix).
 */
export function spansJson(spans: readonly SpanRecord[]): string {
  let text = '';
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i];
    const root = span.parentSpanId === undefined;
    text += (i === 0 ? '{"traceId":"' : ',{"traceId":"') + span.traceId + '","spanId":"' + span.spanId;
    if (!root) text += '","parentSpanId":"' + span.parentSpanId;
    text +=
      '","name":' +
      JSON.stringify(span.name) +
      ',"kind":' +
      OTLP_KINDS[span.kind] +
      ',"startTimeUnixNano":"' +
      unixNanos(span.startMs) +
      '","endTimeUnixNano":"' +
      unixNanos(span.endMs) +
      '","attributes":[';
    let first = true;
    for (const key in span.attributes) {
      const value = span.attributes[key];
      if (value === undefined) continue;
      text += (first ? '' : ',') + keyPrefix(key) + anyValue(value) + '}';
      first = false;
    }
    text +=
      '],"droppedAttributesCount":0,"events":[],"droppedEventsCount":0,"status":' +
      (span.error === undefined
        ? STATUS_UNSET
        : `{"code":${OTLP_STATUS_ERROR},"message":${JSON.stringify(span.error)}}`) +
      (span.parentIsRemote ? FLAGS_REMOTE_PARENT_TAIL : FLAGS_LOCAL_TAIL);
  }
  return text;
}

const COMMA = Buffer.from(',');

/**
 * One export request being written: each call's spans as their JSON text, turned into bytes at once (a
 * buffer outside V8's heap), joined with the frame when `request()` is asked for.
 */
export class JsonSpanBatch implements SpanBatch {
  private readonly parts: Uint8Array[] = [];

  constructor(private readonly frame: OtlpJsonFrame) {}

  get calls(): number {
    return this.parts.length;
  }

  add(spans: readonly SpanRecord[]): void {
    this.parts.push(Buffer.from(spansJson(spans)));
  }

  request(): Buffer {
    return otlpJsonRequest(this.frame, this.parts);
  }
}

/** One export request from parts already encoded (`spansJson` of each call's spans, as bytes). */
export function otlpJsonRequest(frame: OtlpJsonFrame, parts: readonly Uint8Array[]): Buffer {
  if (parts.length === 0) return Buffer.from(EMPTY_REQUEST);
  const pieces: Uint8Array[] = [Buffer.from(frame.head)];
  for (const part of parts) {
    if (pieces.length > 1) pieces.push(COMMA);
    pieces.push(part);
  }
  pieces.push(Buffer.from(frame.tail));
  return Buffer.concat(pieces);
}

/** `{"key":"…","value":` of each attribute key, made once: the gateway's keys are a fixed set of its own. */
const keyPrefixes = new Map<string, string>();

function keyPrefix(key: string): string {
  let prefix = keyPrefixes.get(key);
  if (prefix === undefined) {
    prefix = `{"key":${JSON.stringify(key)},"value":`;
    keyPrefixes.set(key, prefix);
  }
  return prefix;
}

/** OTLP's `AnyValue`: an integer as `intValue`, any other number as `doubleValue`, as the SDK tells them. */
function anyValue(value: string | number | boolean | string[]): string {
  if (typeof value === 'string') return `{"stringValue":${JSON.stringify(value)}}`;
  if (typeof value === 'number') {
    // JSON.stringify writes what JSON cannot hold (NaN, ±Infinity) as null, and so does the SDK.
    return Number.isInteger(value) ? `{"intValue":${value}}` : `{"doubleValue":${JSON.stringify(value)}}`;
  }
  if (typeof value === 'boolean') return `{"boolValue":${value}}`;
  return `{"arrayValue":{"values":[${value.map(anyValue).join(',')}]}}`;
}

/**
 * Milliseconds since the epoch, fractional, as a decimal count of nanoseconds: the time the SDK sends for a
 * span whose time is `hrTime(ms)`. Too large for a double's integers, so written as the seconds, then nine
 * digits of nanoseconds.
 */
export function unixNanos(ms: number): string {
  const [seconds, nanos] = hrTime(ms);
  return seconds === 0 ? String(nanos) : `${seconds}${String(nanos).padStart(9, '0')}`;
}
