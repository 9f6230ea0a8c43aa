/**
 * The gateway's finished spans (`SpanRecord`s) written as OTLP/HTTP's protobuf encoding
 * (`ExportTraceServiceRequest`, opentelemetry-proto's trace.proto), OTLP's default protocol.
 *
 * A batch is one buffer: each call's spans are written straight into it when the call ends, as the
 * `spans` entries of the export's one `ScopeSpans`; when the batch is sent, the frame around them (the
 * request's `ResourceSpans`, its resource and scope, and their lengths, known only then) is written into
 * room kept before the first span, so the request is a view of the buffer and nothing is copied. Ids go as
 * bytes and times as fixed64, about a third of the JSON encoding's size, with no string made on the way.
 *
 * It writes the same bytes as the OpenTelemetry SDK's protobuf serializer for the spans the gateway makes
 * (same fields, same order, the same defaults written), which the tests check against the SDK's own output;
 * it knows nothing of span events, links or trace state, which the gateway never sets.
 */
import {
  hrTime,
  OTLP_FLAGS_LOCAL,
  OTLP_FLAGS_REMOTE_PARENT,
  OTLP_KINDS,
  OTLP_STATUS_ERROR,
  OTLP_STATUS_UNSET,
  type AttributeValue,
  type SpanRecord,
} from './span-record.js';
import type { SpanBatch } from './span-queue.js';

/** A field's tag byte: its number and wire type (every field written here has a number under 16). */
const tag = (field: number, wireType: number) => (field << 3) | wireType;
const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;
/** Span.flags is field 16: its tag, a varint, takes two bytes. */
const FLAGS_TAG = [(tag(16, FIXED32) & 0x7f) | 0x80, tag(16, FIXED32) >>> 7];

/** The bytes every export of one gateway shares: its resource and its scope, each as its field. */
export interface OtlpProtoFrame {
  /** `ResourceSpans.resource`, tag and length included. */
  resource: Buffer;
  /** `ScopeSpans.scope`, tag and length included. */
  scope: Buffer;
}

export function otlpProtoFrame(serviceName: string, scopeName: string): OtlpProtoFrame {
  const resource = new ProtoWriter(256);
  const resourceAt = resource.begin(tag(1, BYTES));
  resource.keyValue(tag(1, BYTES), 'service.name', serviceName);
  resource.byte(tag(2, VARINT));
  resource.byte(0);
  resource.end(resourceAt);
  const scope = new ProtoWriter(256);
  const scopeAt = scope.begin(tag(1, BYTES));
  scope.string(tag(1, BYTES), scopeName);
  scope.end(scopeAt);
  return { resource: resource.bytes(), scope: scope.bytes() };
}

/** Room for the frame before a batch's first span: the frame's bytes and three lengths of up to five. */
function frameRoom(frame: OtlpProtoFrame): number {
  return 3 + 15 + frame.resource.length + frame.scope.length;
}

/**
 * The buffers batches are written into, kept and reused: a batch takes one and gives it back once its
 * request has been sent (its transport may retry the same bytes until then). A buffer that a batch
 * outgrew comes back grown, so the few in use settle at the size a batch takes. Reusing them keeps the
 * memory held outside V8's heap from climbing by a batch's size with every batch (megabytes a second at a
 * busy gateway), which V8 weighs when it schedules full collections.
 */
export class BatchBuffers {
  private readonly free: Buffer[] = [];

  constructor(private readonly initialBytes: number) {}

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.initialBytes);
  }

  give(buffer: Buffer): void {
    if (this.free.length < 4) this.free.push(buffer);
  }
}

/**
 * One export request being written: the spans of the calls added, then the frame when `request()` is
 * asked for. Its buffer is its own from `take` until `release`.
 */
export class ProtoSpanBatch implements SpanBatch {
  calls = 0;
  private readonly writer: ProtoWriter;
  private readonly room: number;

  constructor(
    private readonly frame: OtlpProtoFrame,
    private readonly buffers: BatchBuffers,
  ) {
    this.room = frameRoom(frame);
    const buffer = buffers.take();
    // The frame is written into the room before the spans, so the buffer must hold it from the start.
    this.writer = new ProtoWriter(2 * this.room, buffer.length >= 2 * this.room ? buffer : undefined);
    this.writer.pos = this.room;
  }

  /** Gives the buffer back: the request is sent, or will not be. */
  release(): void {
    this.buffers.give(this.writer.buffer);
  }

  add(spans: readonly SpanRecord[]): void {
    for (const span of spans) writeSpan(this.writer, span);
    this.calls += 1;
  }

  /** The export request: `ExportTraceServiceRequest{resource_spans: [{resource, scope_spans: [{scope, spans}]}]}`. */
  request(): Uint8Array {
    const { resource, scope } = this.frame;
    const spans = this.writer.pos - this.room;
    const scopeSpans = scope.length + spans;
    const resourceSpans = resource.length + 1 + varintSize(scopeSpans) + scopeSpans;
    const before =
      1 + varintSize(resourceSpans) + resource.length + 1 + varintSize(scopeSpans) + scope.length;
    const start = this.room - before;
    const header = new ProtoWriter(0, this.writer.buffer);
    header.pos = start;
    header.byte(tag(1, BYTES));
    header.varint(resourceSpans);
    header.raw(resource);
    header.byte(tag(2, BYTES));
    header.varint(scopeSpans);
    header.raw(scope);
    return this.writer.buffer.subarray(start, this.writer.pos);
  }
}

/** One `ScopeSpans.spans` entry, fields in the order the SDK writes them. */
function writeSpan(w: ProtoWriter, span: SpanRecord): void {
  const spanAt = w.begin(tag(2, BYTES));
  w.hex(tag(1, BYTES), span.traceId);
  w.hex(tag(2, BYTES), span.spanId);
  if (span.parentSpanId !== undefined) w.hex(tag(4, BYTES), span.parentSpanId);
  w.string(tag(5, BYTES), span.name);
  w.byte(tag(6, VARINT));
  w.byte(OTLP_KINDS[span.kind]);
  w.byte(tag(7, FIXED64));
  w.time(span.startMs);
  w.byte(tag(8, FIXED64));
  w.time(span.endMs);
  const { attributes } = span;
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined) continue;
    const entry =
      typeof value === 'string' || typeof value === 'boolean' ? spanAttribute(key, value) : undefined;
    if (entry !== undefined) w.raw(entry);
    else w.keyValue(tag(9, BYTES), key, value);
  }
  // dropped attributes, dropped events, dropped links: always written, as 0.
  w.byte(tag(10, VARINT));
  w.byte(0);
  w.byte(tag(12, VARINT));
  w.byte(0);
  w.byte(tag(14, VARINT));
  w.byte(0);
  const statusAt = w.begin(tag(15, BYTES));
  if (span.error) w.string(tag(2, BYTES), span.error);
  w.byte(tag(3, VARINT));
  w.byte(span.error === undefined ? OTLP_STATUS_UNSET : OTLP_STATUS_ERROR);
  w.end(statusAt);
  w.byte(FLAGS_TAG[0]);
  w.byte(FLAGS_TAG[1]);
  w.fixed32(span.parentIsRemote ? OTLP_FLAGS_REMOTE_PARENT : OTLP_FLAGS_LOCAL);
  w.end(spanAt);
}

function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    size += 1;
  }
  return size;
}

/** `tag + length + key` of each attribute key, made once: the gateway's keys are a fixed set of its own. */
const keyFields = new Map<string, Buffer>();

function keyField(key: string): Buffer {
  let field = keyFields.get(key);
  if (field === undefined) {
    const w = new ProtoWriter(key.length * 3 + 8);
    w.string(tag(1, BYTES), key);
    field = w.bytes();
    keyFields.set(key, field);
  }
  return field;
}

/**
 * A span's attribute entry (`Span.attributes`, tag and length included) of each key and short text or
 * boolean value met, made once: most of a call's attributes repeat from call to call (the operation, the
 * provider, the model, the workspace), and copying an entry is several times cheaper than writing it. A
 * key stops gaining entries at `MAX_VALUES_PER_KEY` (a value unique to each call, an id, is not kept at
 * all: it is longer than an entry kept may be, or, once the key's entries are full, written each time).
 */
const spanAttributes = new Map<string, Map<string | boolean, Buffer>>();
const MAX_VALUES_PER_KEY = 256;
const MAX_KEPT_VALUE_LENGTH = 64;

function spanAttribute(key: string, value: string | boolean): Buffer | undefined {
  let byValue = spanAttributes.get(key);
  if (byValue === undefined) {
    byValue = new Map();
    spanAttributes.set(key, byValue);
  }
  let entry = byValue.get(value);
  if (entry !== undefined) return entry;
  if (byValue.size >= MAX_VALUES_PER_KEY) return undefined;
  if (typeof value === 'string' && value.length > MAX_KEPT_VALUE_LENGTH) return undefined;
  const w = new ProtoWriter(256);
  w.keyValue(tag(9, BYTES), key, value);
  entry = w.bytes();
  byValue.set(value, entry);
  return entry;
}

const NANOS_PER_SECOND = 1_000_000_000;
const TWO_POW_32 = 0x1_0000_0000;

/** A growing buffer and the writes the encoding needs. */
class ProtoWriter {
  pos = 0;
  buffer: Buffer;

  constructor(capacity: number, buffer?: Buffer) {
    this.buffer = buffer ?? Buffer.allocUnsafeSlow(capacity);
  }

  bytes(): Buffer {
    return Buffer.from(this.buffer.subarray(0, this.pos));
  }

  private ensure(more: number): void {
    if (this.pos + more > this.buffer.length) this.grow(more);
  }

  private grow(more: number): void {
    let size = this.buffer.length * 2;
    while (size < this.pos + more) size *= 2;
    const grown = Buffer.allocUnsafeSlow(size);
    this.buffer.copy(grown, 0, 0, this.pos);
    this.buffer = grown;
  }

  byte(value: number): void {
    this.ensure(1);
    this.buffer[this.pos++] = value;
  }

  raw(bytes: Buffer): void {
    this.ensure(bytes.length);
    this.buffer.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** A varint of a non-negative integer up to 2^53, or a negative one as protobuf's ten-byte int64. */
  varint(value: number): void {
    this.ensure(10);
    const buf = this.buffer;
    if (value >= 0 && value <= 0xffff_ffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        buf[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[this.pos++] = v;
      return;
    }
    // 64 bits as two halves, two's complement for a negative value.
    let low: number;
    let high: number;
    if (value >= 0) {
      low = value >>> 0;
      high = Math.floor(value / TWO_POW_32) >>> 0;
    } else {
      const abs = -value;
      low = ~(abs >>> 0) >>> 0;
      high = ~(Math.floor(abs / TWO_POW_32) >>> 0) >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      buf[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[this.pos++] = low;
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.buffer.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  /**
   * Milliseconds since the epoch, fractional, as fixed64 nanoseconds: `hrTime(ms)`'s seconds × 10^9 plus
   * its nanoseconds, computed in halves (the product passes a double's integers).
   */
  time(ms: number): void {
    const [seconds, nanos] = hrTime(ms);
    const fromLow = (seconds & 0xffff) * NANOS_PER_SECOND; // < 2^46
    const fromHigh = Math.floor(seconds / 0x10000) * NANOS_PER_SECOND; // × 2^16 below
    const lowSum = (fromLow >>> 0) + (((fromHigh & 0xffff) * 0x10000) >>> 0) + nanos;
    const low = lowSum >>> 0;
    const high =
      (Math.floor(fromLow / TWO_POW_32) +
        Math.floor(fromHigh / 0x10000) +
        Math.floor(lowSum / TWO_POW_32)) >>>
      0;
    this.ensure(8);
    this.buffer.writeUInt32LE(low, this.pos);
    this.buffer.writeUInt32LE(high, this.pos + 4);
    this.pos += 8;
  }

  double(value: number): void {
    this.ensure(8);
    this.buffer.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /**
   * A string field: ASCII copied a character at a time, checked as it goes (with one byte of length when
   * it is short); text with any other character encoded as UTF-8.
   */
  string(fieldTag: number, text: string): void {
    const length = text.length;
    if (length < 0x80) {
      this.ensure(2 + length);
      const buf = this.buffer;
      const start = this.pos;
      buf[start] = fieldTag;
      buf[start + 1] = length;
      let at = start + 2;
      let i = 0;
      for (; i < length; i++) {
        const code = text.charCodeAt(i);
        if (code > 0x7f) break;
        buf[at++] = code;
      }
      if (i === length) {
        this.pos = at;
        return;
      }
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    this.byte(fieldTag);
    this.varint(bytes);
    this.ensure(bytes);
    this.pos += this.buffer.write(text, this.pos, bytes, 'utf8');
  }

  /** A bytes field from an id in lower-case hex (16 or 32 digits). */
  hex(fieldTag: number, hex: string): void {
    const length = hex.length >>> 1;
    this.ensure(2 + length);
    const buf = this.buffer;
    let pos = this.pos;
    buf[pos++] = fieldTag;
    buf[pos++] = length;
    for (let i = 0; i < 2 * length; i += 2) {
      buf[pos++] = (nibble(hex.charCodeAt(i)) << 4) | nibble(hex.charCodeAt(i + 1));
    }
    this.pos = pos;
  }

  /**
   * Starts a length-delimited field, whose body is written next and closed by `end` with what this
   * returns. One byte is kept for the length, the common case; `end` moves a longer body on to make room
   * for its length's other bytes.
   */
  begin(fieldTag: number): number {
    this.byte(fieldTag);
    this.byte(0);
    return this.pos;
  }

  end(start: number): void {
    const length = this.pos - start;
    if (length < 0x80) {
      this.buffer[start - 1] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.ensure(extra);
    this.buffer.copyWithin(start + extra, start, this.pos);
    this.pos += extra;
    const end = this.pos;
    this.pos = start - 1;
    this.varint(length);
    this.pos = end;
  }

  /** A `KeyValue` attribute as a repeated field's entry. */
  keyValue(fieldTag: number, key: string, value: AttributeValue): void {
    const entryAt = this.begin(fieldTag);
    this.raw(keyField(key));
    const valueAt = this.begin(tag(2, BYTES));
    this.anyValue(value);
    this.end(valueAt);
    this.end(entryAt);
  }

  /** OTLP's `AnyValue`: an integer as `int_value`, any other number as `double_value`, as the SDK tells them. */
  anyValue(value: string | number | boolean | string[]): void {
    if (typeof value === 'string') {
      this.string(tag(1, BYTES), value);
    } else if (typeof value === 'boolean') {
      this.byte(tag(2, VARINT));
      this.byte(value ? 1 : 0);
    } else if (typeof value === 'number') {
      if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
        this.byte(tag(3, VARINT));
        this.varint(value);
      } else {
        this.byte(tag(4, FIXED64));
        this.double(value);
      }
    } else {
      const arrayAt = this.begin(tag(5, BYTES));
      for (const item of value) {
        const itemAt = this.begin(tag(1, BYTES));
        this.anyValue(item);
        this.end(itemAt);
      }
      this.end(arrayAt);
    }
  }
}

/** A hex digit's value (0–9, a–f; an upper-case one too). */
function nibble(code: number): number {
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x57;
}
