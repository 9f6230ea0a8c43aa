/**
 * Trace sampling end to end: with `OTEL_TRACES_SAMPLER=traceidratio`, a real gateway exports the spans of
 * the traces OpenTelemetry's own ratio sampler keeps, and none of the others.
 */
import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startOtlpReceiver, type OtlpReceiver } from '../fakes/otlp/receiver.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { loadSettings } from '../../src/settings.js';
import { client, target, userMessage } from '../routing/support.js';

const RATIO = 0.5;

let gateway: TestGateway;
let fake: FakeUpstream;
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  fake = await startFakeOpenAI({ name: 'sampled' });
  gateway = await startGateway({
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '20',
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: String(RATIO),
      // The other encoding, end to end.
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  await receiver?.close();
});

describe('trace sampling', () => {
  it('exports the traces the ratio sampler keeps, and only those', async () => {
    const sampler = new TraceIdRatioBasedSampler(RATIO);
    const kept = (traceId: string) =>
      sampler.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;
    const traceIds = Array.from({ length: 16 }, () => randomBytes(16).toString('hex'));
    for (const traceId of traceIds) {
      await client(gateway, target(fake), {
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      }).chat.completions.create({ model: 'gpt-4o-mini', messages: userMessage('sample me') });
    }
    const expected = traceIds.filter(kept);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(traceIds.length);

    const spans = await receiver.waitFor((received) =>
      expected.every((traceId) => received.filter((span) => span.traceId === traceId).length >= 2),
    );
    // The last kept call's spans have arrived; a dropped call's would have been sent with them or before.
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set(expected));
    expect(new Set(receiver.exports.map((headers) => headers['content-type']))).toEqual(
      new Set(['application/json']),
    );
  });
});

describe('trace settings', () => {
  it("reads OpenTelemetry's sampler variables, every trace when unset", () => {
    const ratio = (env: Record<string, string>) => loadSettings(env).tracesSampleRatio;
    expect(ratio({})).toBe(1);
    expect(ratio({ OTEL_TRACES_SAMPLER: 'always_off' })).toBe(0);
    expect(ratio({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toBe(0.25);
    expect(() => ratio({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(
      /OTEL_TRACES_SAMPLER_ARG/,
    );
    expect(() => ratio({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' })).toThrow(/OTEL_TRACES_SAMPLER/);
  });

  it("reads OpenTelemetry's protocol variables, the traces' own first, protobuf when unset", () => {
    const protocol = (env: Record<string, string>) => loadSettings(env).tracesProtocol;
    expect(protocol({})).toBe('http/protobuf');
    expect(protocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('http/json');
    expect(
      protocol({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }),
    ).toBe('http/protobuf');
    expect(() => protocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
  });
});
