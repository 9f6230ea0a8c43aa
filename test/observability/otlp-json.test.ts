/**
 * The gateway's OTLP JSON encoder against the OpenTelemetry SDK's own serializer (what the SDK's OTLP/HTTP
 * exporter sent before): the same spans, as the batch processor holds them, give the same bytes; and the
 * request, decoded, carries each field a collector reads.
 */
import * as api from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import * as resources from '@opentelemetry/resources';
import { describe, expect, it } from 'vitest';
import { FinishedSpan, spanCommons } from '../helpers/finished-span.js';
import {
  encodeOtlpJson,
  otlpJsonFrame,
  otlpJsonRequest,
  SCOPE_NAME,
  spansJson,
  unixNanos,
} from '../../src/observability/otlp-json.js';
import type { SpanRecord } from '../../src/observability/span-record.js';
import { attempt, hook, request, TRACE } from '../helpers/sample-spans.js';

const spans = [request, attempt, hook];

const commons = spanCommons(api, resources, 'gateway-under-test');
const frame = otlpJsonFrame('gateway-under-test', SCOPE_NAME);

function sdkBytes(records: SpanRecord[]): string {
  const bytes = JsonTraceSerializer.serializeRequest(
    records.map((record) => new FinishedSpan(record, commons)),
  );
  return new TextDecoder().decode(bytes);
}

type Decoded = {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> };
    scopeSpans: Array<{ scope: { name: string }; spans: Array<Record<string, unknown>> }>;
  }>;
};

describe('OTLP JSON encoding', () => {
  it("writes the bytes the SDK's serializer writes for the same spans", () => {
    expect(encodeOtlpJson(frame, spans)).toBe(sdkBytes(spans));
    expect(encodeOtlpJson(frame, [attempt])).toBe(sdkBytes([attempt]));
  });

  it('leaves out an attribute without a value', () => {
    const sparse: SpanRecord = {
      ...attempt,
      attributes: { first: undefined, ...attempt.attributes, 'gen_ai.request.model': undefined },
    };
    expect(encodeOtlpJson(frame, [sparse])).toBe(sdkBytes([attempt]));
  });

  it('decodes, field by field, to what the SDK encoded', () => {
    const ours = JSON.parse(encodeOtlpJson(frame, spans)) as Decoded;
    const theirs = JSON.parse(sdkBytes(spans)) as Decoded;
    expect(ours).toEqual(theirs);

    const { resource, scopeSpans } = ours.resourceSpans[0];
    expect(resource.attributes).toEqual([
      { key: 'service.name', value: { stringValue: 'gateway-under-test' } },
    ]);
    expect(scopeSpans[0].scope).toEqual({ name: 'ai-gateway' });
    const [server, client, internal] = scopeSpans[0].spans;
    expect(server).toMatchObject({
      traceId: TRACE,
      spanId: '00f067aa0ba902b7',
      kind: 2,
      startTimeUnixNano: '1795338000123250000',
      endTimeUnixNano: '1795338000935500000',
      status: { code: 2, message: '502' },
      flags: 0x101,
    });
    expect(server).not.toHaveProperty('parentSpanId');
    expect(server.attributes).toEqual([
      { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
      { key: 'http.response.status_code', value: { intValue: 502 } },
      { key: 'gen_ai.request.temperature', value: { doubleValue: 0.2 } },
      { key: 'gen_ai.request.top_p', value: { doubleValue: null } },
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
    expect(internal).toMatchObject({ kind: 1, status: { code: 2, message: 'hooks_failed' }, flags: 0x301 });
    expect(internal.attributes).toContainEqual({
      key: 'gateway.hook.checks',
      value: {
        arrayValue: { values: [{ stringValue: 'regexMatch' }, { stringValue: 'default.wordCount' }] },
      },
    });
  });

  it('writes an empty batch as the SDK does', () => {
    expect(encodeOtlpJson(frame, [])).toBe(sdkBytes([]));
    expect(otlpJsonRequest(frame, []).toString()).toBe(sdkBytes([]));
  });

  it('joins calls encoded one by one into the request the SDK writes for all their spans', () => {
    const calls = [[request, attempt], [hook]].map((call) => Buffer.from(spansJson(call)));
    expect(otlpJsonRequest(frame, calls).toString()).toBe(sdkBytes(spans));
    expect(otlpJsonRequest(frame, calls.slice(1)).toString()).toBe(sdkBytes([hook]));
  });

  it('writes times as whole nanoseconds since the epoch', () => {
    expect(unixNanos(1795338000000)).toBe('1795338000000000000');
    expect(unixNanos(1795338000000.5)).toBe('1795338000000500000');
    expect(unixNanos(0.5)).toBe('500000');
    // Rounded to the nearest nanosecond, into the next second.
    expect(unixNanos(999.999_999_9)).toBe('1000000000');
  });
});
