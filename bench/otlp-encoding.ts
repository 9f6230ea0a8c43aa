/**
 * What encoding a batch of spans for OTLP/HTTP costs, in-process: 512 spans shaped like a plain chat call's
 * (a request span and its provider call's, every second call failed), encoded in each of OTLP's encodings by
 * the SDK's serializers (what the SDK's OTLP exporters send; given the `ReadableSpan` views a batch
 * processor would hold) and by the gateway's own encoders (observability/otlp-json.ts, otlp-proto.ts, as
 * its span queue uses them: each call's spans written when it ends). Bounded: a warm-up, then N timed
 * batches of each, interleaved.
 * `npx tsx bench/otlp-encoding.ts [batches]`; prints µs per span (median and fastest batch) as JSON.
 */
import { performance } from 'node:perf_hooks';
import * as api from '@opentelemetry/api';
import * as resources from '@opentelemetry/resources';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { otlpJsonFrame, otlpJsonRequest, SCOPE_NAME, spansJson } from '../src/observability/otlp-json.js';
import { BatchBuffers, otlpProtoFrame, ProtoSpanBatch } from '../src/observability/otlp-proto.js';
import { FinishedSpan, spanCommons } from '../test/helpers/finished-span.js';
import type { SpanRecord } from '../src/observability/span-record.js';
import { round, summarise } from './stats.js';

const BATCHES = Number(process.argv[2] ?? 400);
const WARM_UP = 50;
const BATCH_SIZE = 512;

const hex = (length: number) =>
  Array.from({ length }, () => Math.floor(Math.random() * 16).toString(16)).join('');

function callSpans(i: number): SpanRecord[] {
  const traceId = hex(32);
  const requestSpanId = hex(16);
  const start = Date.now() + Math.random();
  const failed = i % 2 === 1;
  const request: SpanRecord = {
    name: 'chat gpt-4o-mini',
    kind: 'server',
    traceId,
    spanId: requestSpanId,
    parentSpanId: undefined,
    parentIsRemote: false,
    startMs: start,
    endMs: start + 23.4567,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'http.request.method': 'POST',
      'http.response.status_code': failed ? 502 : 200,
      'gateway.trace_id': `${traceId.slice(0, 8)}-${traceId.slice(8, 12)}-${traceId.slice(12, 16)}-${traceId.slice(16, 20)}-${traceId.slice(20)}`,
      'gateway.retry_count': 0,
      'gateway.stream': false,
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.request.max_tokens': 50,
      'gen_ai.request.temperature': 0.2,
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 9,
      'gateway.workspace_id': 'ws_default',
      'gateway.target': 'targets[0]',
      'gateway.cost_usd': 0.0000072,
      ...(failed ? { 'error.type': '502' } : { 'gen_ai.response.model': 'gpt-4o-mini-2024-07-18' }),
    },
    error: failed ? '502' : undefined,
  };
  const attempt: SpanRecord = {
    name: 'chat gpt-4o-mini',
    kind: 'client',
    traceId,
    spanId: hex(16),
    parentSpanId: requestSpanId,
    parentIsRemote: false,
    startMs: start + 0.8123,
    endMs: start + 22.901,
    attributes: {
      'gen_ai.provider.name': 'openai',
      'gateway.target': 'targets[0]',
      'gateway.retry': 0,
      'gateway.fallback': false,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 9,
      'http.response.status_code': failed ? 502 : 200,
      'gateway.cost_usd': 0.0000072,
    },
    error: failed ? '502' : undefined,
  };
  return [request, attempt];
}

const calls = Array.from({ length: BATCH_SIZE / 2 }, (_, i) => callSpans(i));
const records = calls.flat();
const commons = spanCommons(api, resources, 'ai-gateway');
const frame = otlpJsonFrame('ai-gateway', SCOPE_NAME);
const protoFrame = otlpProtoFrame('ai-gateway', SCOPE_NAME);
const buffers = new BatchBuffers(BATCH_SIZE * 1024);

/** Each path from the gateway's records to the bytes of one export, as the exporter would send them. */
const paths: Record<string, () => Uint8Array | undefined> = {
  sdk_json: () =>
    JsonTraceSerializer.serializeRequest(records.map((record) => new FinishedSpan(record, commons))),
  // As the exporter does: each call's spans written to bytes when the call ends, then joined.
  gateway_json: () =>
    otlpJsonRequest(
      frame,
      calls.map((spans) => Buffer.from(spansJson(spans))),
    ),
  sdk_protobuf: () =>
    ProtobufTraceSerializer.serializeRequest(records.map((record) => new FinishedSpan(record, commons))),
  // Each call's spans written into the batch's buffer when it ends; the frame when it is sent.
  gateway_protobuf: () => {
    const batch = new ProtoSpanBatch(protoFrame, buffers);
    for (const spans of calls) batch.add(spans);
    const bytes = batch.request();
    batch.release();
    return bytes;
  },
};

function timeBatch(path: () => Uint8Array | undefined): number {
  const started = performance.now();
  path();
  return ((performance.now() - started) * 1000) / BATCH_SIZE;
}

const samples: Record<string, number[]> = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
for (let i = 0; i < WARM_UP; i++) for (const path of Object.values(paths)) path();
for (let i = 0; i < BATCHES; i++) {
  for (const [name, path] of Object.entries(paths)) samples[name].push(timeBatch(path));
}
const p50 = (name: string) => round(summarise(samples[name]).p50, 2);
const min = (name: string) => round(Math.min(...samples[name]), 2);
const bytes = (name: string) => round((paths[name]()?.byteLength ?? 0) / BATCH_SIZE, 0);
console.log(
  JSON.stringify({
    spans_per_batch: BATCH_SIZE,
    batches: BATCHES,
    us_per_span_p50: Object.fromEntries(Object.keys(paths).map((name) => [name, p50(name)])),
    us_per_span_min: Object.fromEntries(Object.keys(paths).map((name) => [name, min(name)])),
    bytes_per_span: Object.fromEntries(Object.keys(paths).map((name) => [name, bytes(name)])),
    node: process.version,
  }),
);
