/**
 * The OpenTelemetry ids of the gateway's trace and span ids: a UUID (the gateway's own trace ids, or a
 * client's in any case) is its hex; any other text, or an all-zero id, is hashed, the same text to the
 * same id.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newSpanId, newTraceId } from '../../src/gateway/context.js';
import { otelSpanId, otelTraceId, traceparentOf } from '../../src/observability/tracing.js';

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
