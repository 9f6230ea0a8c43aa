/**
 * The trace exporter against a real collector and an unreachable one: what it counts of each call's spans
 * (exported, failed, dropped), and a bounded stop. With the collector unreachable each queued batch would
 * spend the transport's retries in turn (about 8 s each against a refused port), and a gateway with a
 * backlog of spans took minutes to stop; it now stops within OTEL_BSP_EXPORT_TIMEOUT.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { createTraceExporter } from '../../src/observability/tracing.js';
import { startOtlpReceiver } from '../fakes/otlp/receiver.js';
import { freePort } from '../helpers/free-port.js';
import { attempt, request } from '../helpers/sample-spans.js';

/** `shutdownTimeoutMs` only bounds a stop: a reachable collector's exports end well before it. */
const exporterTo = (url: string, shutdownTimeoutMs: number) =>
  createTraceExporter({
    url,
    serviceName: 'ai-gateway-test',
    headers: {},
    protocol: 'http/protobuf',
    delayMs: 60_000,
    sampleRatio: 1,
    shutdownTimeoutMs,
  });

describe('trace exporter', () => {
  it('counts the calls it exported', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const exporter = await exporterTo(`${receiver.url}/v1/traces`, 10_000);
      // A full batch, sent at once, and a partial one sent by the stop.
      for (let n = 0; n < 300; n++) exporter.export([request, attempt]);
      await exporter.shutdown();
      expect(exporter.counts()).toEqual({ exported: 300, failed: 0, dropped: 0 });
      expect(receiver.spans).toHaveLength(600);
    } finally {
      await receiver.close();
    }
  });

  it('gives up on an unreachable collector at its deadline instead of retrying every batch', async () => {
    const exporter = await exporterTo(`http://127.0.0.1:${await freePort()}/v1/traces`, 500);
    // Three full batches of calls waiting.
    for (let n = 0; n < 3 * 256; n++) exporter.export([request, attempt]);
    const started = performance.now();
    await exporter.shutdown();
    // The first batch alone retries for several seconds against a refused port.
    expect(performance.now() - started).toBeLessThan(2_500);
    // The first batch was still being tried; the two behind it were dropped.
    expect(exporter.counts()).toEqual({ exported: 0, failed: 0, dropped: 512 });
  });
});
