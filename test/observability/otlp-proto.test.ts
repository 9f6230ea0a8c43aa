/**
 * The gateway's OTLP protobuf encoder against the OpenTelemetry SDK's own protobuf serializer: the same
 * spans give the same bytes, however the calls are batched, with fields long enough to need more than one
 * byte of length; and the request, decoded, carries each field a collector reads.
 */
import * as api from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import * as resources from '@opentelemetry/resources';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequest } from '../fakes/otlp/protobuf.js';
import { FinishedSpan, spanCommons } from '../helpers/finished-span.js';
import { attempt, hook, request, spans, START, TRACE } from '../helpers/sample-spans.js';
import { SCOPE_NAME } from '../../src/observability/otlp-json.js';
import { BatchBuffers, otlpProtoFrame, ProtoSpanBatch } from '../../src/observability/otlp-proto.js';
import type { SpanRecord } from '../../src/observability/span-record.js';

const commons = spanCommons(api, resources, 'gateway-under-test');
const frame = otlpProtoFrame('gateway-under-test', SCOPE_NAME);

function sdkBytes(records: SpanRecord[]): Buffer {
  return Buffer.from(
    ProtobufTraceSerializer.serializeRequest(records.map((record) => new FinishedSpan(record, commons)))!,
  );
}

/** Our request for these calls, written into a batch whose buffers start at this size. */
function ours(calls: SpanRecord[][], capacity = 1 << 16): Buffer {
  const batch = new ProtoSpanBatch(frame, new BatchBuffers(capacity));
  for (const call of calls) batch.add(call);
  expect(batch.calls).toBe(calls.length);
  return Buffer.from(batch.request());
}

describe('OTLP protobuf encoding', () => {
  it("writes the bytes the SDK's serializer writes for the same spans, however they are batched", () => {
    expect(ours([spans]).equals(sdkBytes(spans))).toBe(true);
    expect(ours([[request, attempt], [hook]]).equals(sdkBytes(spans))).toBe(true);
    expect(ours([[attempt]]).equals(sdkBytes([attempt]))).toBe(true);
    // A batch that outgrows its buffer.
    expect(ours([spans, spans, spans], 16).equals(sdkBytes([...spans, ...spans, ...spans]))).toBe(true);
  });

  it('leaves out an attribute without a value', () => {
    const sparse: SpanRecord = {
      ...attempt,
      attributes: { first: undefined, ...attempt.attributes, 'gen_ai.request.model': undefined },
    };
    expect(ours([[sparse]]).equals(sdkBytes([attempt]))).toBe(true);
  });

  it('writes lengths of more than one byte, large and negative integers, as the SDK does', () => {
    const long: SpanRecord = {
      ...attempt,
      name: 'n'.repeat(300),
      attributes: {
        'gateway.trace_id': 'x'.repeat(20_000),
        'gateway.hook.checks': Array.from({ length: 40 }, (_, i) => `check-${i}-é`),
        big: 2 ** 40 + 3,
        negative: -5,
        zero: 0,
        fraction: -0.5,
      },
      error: 'e'.repeat(200),
    };
    const calls = Array.from({ length: 50 }, () => [long, request]);
    expect(ours(calls, 64).equals(sdkBytes(calls.flat()))).toBe(true);
  });

  it("reuses a sent batch's buffer, grown, for a later batch, which writes its own request", () => {
    const buffers = new BatchBuffers(64);
    const first = new ProtoSpanBatch(frame, buffers);
    for (let i = 0; i < 20; i++) first.add(spans);
    const firstBytes = Buffer.from(first.request());
    first.release();
    const second = new ProtoSpanBatch(frame, buffers);
    second.add([attempt]);
    const view = second.request();
    // The grown buffer came back: the second batch did not start a new one.
    expect(view.buffer.byteLength).toBeGreaterThan(64 * 8);
    expect(Buffer.from(view).equals(sdkBytes([attempt]))).toBe(true);
    expect(firstBytes.equals(sdkBytes(Array.from({ length: 20 }, () => spans).flat()))).toBe(true);
  });

  it('decodes, field by field, to the spans it was given', () => {
    const decoded = decodeTraceRequest(ours([spans]));
    const { resource, scopeSpans } = decoded.resourceSpans[0];
    expect(resource.attributes).toEqual([
      { key: 'service.name', value: { stringValue: 'gateway-under-test' } },
    ]);
    expect(scopeSpans[0].scope).toEqual({ name: 'ai-gateway' });
    const [server, client, internal] = scopeSpans[0].spans;
    expect(server).toMatchObject({
      traceId: TRACE,
      spanId: '00f067aa0ba902b7',
      parentSpanId: undefined,
      kind: 2,
      startTimeUnixNano: '1795338000123250000',
      endTimeUnixNano: '1795338000935500000',
      status: { code: 2, message: '502' },
      flags: 0x101,
    });
    expect(server.attributes).toEqual([
      { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
      { key: 'http.response.status_code', value: { intValue: '502' } },
      { key: 'gen_ai.request.temperature', value: { doubleValue: 0.2 } },
      { key: 'gen_ai.request.top_p', value: { doubleValue: Number.NaN } },
      { key: 'gateway.cost_usd', value: { doubleValue: 0.000_007_2 } },
      { key: 'gateway.stream', value: { boolValue: false } },
      { key: 'gateway.trace_id', value: { stringValue: 'order "1234"\n\u00e9\u{1F600}' } },
      { key: 'error.type', value: { stringValue: '502' } },
    ]);
    expect(client).toMatchObject({
      parentSpanId: '00f067aa0ba902b7',
      kind: 3,
      startTimeUnixNano: '1795338001000000000',
      endTimeUnixNano: '1795338001999750000',
      status: { code: 0 },
      flags: 0x101,
    });
    expect(internal).toMatchObject({
      kind: 1,
      startTimeUnixNano: String(BigInt(Math.round((START - 3.25) * 1e6))),
      status: { code: 2, message: 'hooks_failed' },
      // The client's span is the parent: "has is-remote" and "is remote".
      flags: 0x301,
    });
    expect(internal.attributes[0]).toEqual({
      key: 'gateway.hook.checks',
      value: {
        arrayValue: { values: [{ stringValue: 'regexMatch' }, { stringValue: 'default.wordCount' }] },
      },
    });
  });
});
