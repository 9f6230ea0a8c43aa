/**
 * The OpenTelemetry ids of the gateway's trace and span ids: a UUID (the gateway's own trace ids, or a
 * client's in any case) is its hex; any other text, or an all-zero id, is hashed, the same text to the
 * same id. A W3C `traceparent` is read as Trace Context says, a later version's too.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newSpanId, newTraceId } from '../../src/gateway/context.js';
import { otelSpanId, otelTraceId, readTraceparent, traceparentOf } from '../../src/observability/tracing.js';

const sha = (text: string, length: number) =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

describe('OpenTelemetry ids', () => {
  it('takes a UUID as its hex, whatever its case', () => {
    expect(otelTraceId('0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b')).toBe('0190a5b23c4d7e8f9a0b1c2d3e4f5a6b');
    expect(otelTraceId('0190A5B2-3C4D-7E8F-9A0B-1C2D3E4F5A6B')).toBe('0190a5b23c4d7e8f9a0b1c2d3e4f5a6b');
    expect(otelTraceId('0190a5b23c4d7e8f9a0b1c2d3e4f5a6b')).toBe('0190a5b23c4d7e8f9a0b1c2d3e4f5a6b');
  });

  it('hashes any other text, and an all-zero id', () => {
    expect(otelTraceId('order-1234')).toBe(sha('order-1234', 32));
    // UUID-shaped, not hex.
    const notHex = 'zzzzzzzz-3c4d-7e8f-9a0b-1c2d3e4f5a6b';
    expect(otelTraceId(notHex)).toBe(sha(notHex, 32));
    const zero = '00000000-0000-0000-0000-000000000000';
    expect(otelTraceId(zero)).toBe(sha(zero, 32));
    expect(otelSpanId('b7ad6b7169203331')).toBe('b7ad6b7169203331');
    expect(otelSpanId('step-1')).toBe(sha('step-1', 16));
  });

  it('writes a sampled traceparent of the two', () => {
    expect(traceparentOf('0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b', 'B7AD6B7169203331')).toBe(
      '00-0190a5b23c4d7e8f9a0b1c2d3e4f5a6b-b7ad6b7169203331-01',
    );
  });

  it("writes the same traceparent for any ids, the gateway's own or not", () => {
    const zero = '00000000-0000-0000-0000-000000000000';
    const cases: Array<[string, string]> = [
      [zero, newSpanId()],
      [newTraceId(), '0000000000000000'],
      ['0190A5B2-3C4D-7E8F-9A0B-1C2D3E4F5A6B', 'b7ad6b7169203331'],
      ['0190a5b2-3c4d-7e8f-9a0b-1c2d3e4f5a6g', 'b7ad6b7169203331'],
      ['order-1234', 'step-1'],
    ];
    for (let i = 0; i < 200; i++) cases.push([newTraceId(), newSpanId()]);
    for (const [traceId, spanId] of cases) {
      expect(traceparentOf(traceId, spanId)).toBe(`00-${otelTraceId(traceId)}-${otelSpanId(spanId)}-01`);
    }
  });
});

describe('traceparent', () => {
  const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  const PARENT = '00f067aa0ba902b7';
  const read = { traceId: '4bf92f35-77b3-4da6-a3ce-929d0e0e4736', parentSpanId: PARENT };

  it('joins the trace and the parent it names, sampled or not', () => {
    expect(readTraceparent(`00-${TRACE}-${PARENT}-01`)).toEqual(read);
    expect(readTraceparent(`00-${TRACE}-${PARENT}-00`)).toEqual(read);
  });

  it('reads a later version by its first four fields, whatever follows them after a dash', () => {
    expect(readTraceparent(`01-${TRACE}-${PARENT}-01`)).toEqual(read);
    expect(readTraceparent(`cc-${TRACE}-${PARENT}-09-what-comes-later`)).toEqual(read);
    // What follows the flags is no field of theirs.
    expect(readTraceparent(`cc-${TRACE}-${PARENT}-01x`)).toBeUndefined();
    expect(readTraceparent(`cc-${TRACE}-${PARENT}-0`)).toBeUndefined();
  });

  it('ignores an invalid one', () => {
    for (const invalid of [
      // Version 00 has exactly four fields; version ff is invalid.
      `00-${TRACE}-${PARENT}-01-more`,
      `ff-${TRACE}-${PARENT}-01`,
      `00-${'0'.repeat(32)}-${PARENT}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-${PARENT}-01`,
      `00-${TRACE}-${PARENT}`,
      `0-${TRACE}-${PARENT}-01`,
      `00-${TRACE}-${PARENT}-01, 00-${TRACE}-${PARENT}-01`,
      '',
    ]) {
      expect(readTraceparent(invalid), invalid).toBeUndefined();
    }
  });
});
