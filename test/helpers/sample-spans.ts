/**
 * Spans as the gateway writes them, with what an encoder must get right: a root and two children, a
 * remote parent, an error, integers and doubles, NaN, booleans, an array, and text that needs escaping and
 * is not ASCII. The OTLP encoders' tests compare their bytes with the SDK's for these.
 */
import type { SpanRecord } from '../../src/observability/span-record.js';

export const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
export const START = 1795338000123.25;

export const request: SpanRecord = {
  name: 'chat gpt-4o-mini',
  kind: 'server',
  traceId: TRACE,
  spanId: '00f067aa0ba902b7',
  parentSpanId: undefined,
  parentIsRemote: false,
  startMs: START,
  endMs: 1795338000935.5,
  attributes: {
    'gen_ai.operation.name': 'chat',
    'http.response.status_code': 502,
    'gen_ai.request.temperature': 0.2,
    // What JSON cannot hold: written as null by both.
    'gen_ai.request.top_p': Number.NaN,
    'gateway.cost_usd': 0.000_007_2,
    'gateway.stream': false,
    'gateway.trace_id': 'order "1234"\n\u00e9\u{1F600}',
    'error.type': '502',
  },
  error: '502',
};
export const attempt: SpanRecord = {
  name: 'chat gpt-4o-mini',
  kind: 'client',
  traceId: TRACE,
  spanId: 'b7ad6b7169203331',
  parentSpanId: '00f067aa0ba902b7',
  parentIsRemote: false,
  startMs: 1795338001000,
  endMs: 1795338001999.75,
  attributes: { 'gateway.retry': 1, 'gateway.fallback': true, 'gen_ai.usage.input_tokens': 12 },
  error: undefined,
};
export const hook: SpanRecord = {
  name: 'hook pii-guard',
  kind: 'internal',
  traceId: TRACE,
  spanId: 'c7ad6b7169203331',
  // As the gateway's request span under a client's span: the parent is another service's.
  parentSpanId: '00f067aa0ba902b7',
  parentIsRemote: true,
  startMs: START - 3.25,
  endMs: START,
  attributes: { 'gateway.hook.checks': ['regexMatch', 'default.wordCount'], 'gateway.hook.async': false },
  error: 'hooks_failed',
};
export const spans = [request, attempt, hook];
