/**
 * A batch line whose call the gateway failed itself before any provider was called (the store failed the
 * read of its virtual key as it was routed) is given back and runs again. The run that failed leaves no
 * log record, but it is in the trace as what it is: a failed run, its status ERROR and its `error.type`
 * the gateway's, marked as one its line runs again for (`gateway.runs_again`); it is no rate-limit wait
 * and carries none of a held-back run's marks.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../fakes/otlp/receiver.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../management/http.js';
import {
  chatLine,
  createBatch,
  finished,
  jsonl,
  sdk,
  upload,
  waitFor,
  SLOW_TEST_MS,
} from '../batches/support.js';

const SERVER = 2;
const ERROR = 2;

let gateway: TestGateway;
let fake: FakeUpstream;
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  [gateway, fake] = await Promise.all([
    startGateway({
      env: {
        GATEWAY_BATCH_POLL_MS: '50',
        GATEWAY_BATCH_LEASE_MS: '120000',
        GATEWAY_LOOKUP_CACHE_TTL_MS: '0',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '20',
      },
    }),
    startFakeOpenAI({ name: 'runs-again-spans' }),
  ]);
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  await receiver?.close();
});

it(
  'writes each run given back after a failure of the store as failed, marked as run again',
  async () => {
    const slug = 'runs-again-spans-vk';
    const created = await call(gateway.url, gateway.adminKey, 'POST', '/virtual-keys', {
      slug,
      provider: 'openai',
      api_key: 'sk-test',
      custom_host: fake.url,
    });
    expect(created.status, created.text).toBe(200);
    const traceId = randomBytes(16).toString('hex');
    const client = sdk(gateway.url, gateway.adminKey);
    const file = await upload(client, jsonl([chatLine('runs-again-0')]));
    const { store } = gateway.server.deps;
    const getCredential = store.getCredential.bind(store);
    let failing = false;
    let failed = 0;
    const reads = vi.spyOn(store, 'getCredential').mockImplementation(async (workspaceId, kind, name) => {
      if (failing && name === slug && failed < 2) {
        failed++;
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
      }
      return getCredential(workspaceId, kind, name);
    });
    try {
      const batch = await createBatch(
        client,
        file.id,
        {},
        {
          'x-gateway-virtual-key': slug,
          traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
        },
      );
      failing = true;
      const done = await waitFor(client, batch.id, finished, 30_000);
      expect(done.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
      expect(failed).toBe(2);
      const ofTrace = (spans: ReceivedSpan[]) =>
        spans.filter(
          (span) => span.traceId === traceId && span.kind === SERVER && span.name === 'chat gpt-4o-mini',
        );
      const spans = ofTrace(await receiver.waitFor((all) => ofTrace(all).length >= 3));
      const again = spans.filter((span) => span.attributes['http.response.status_code'] === 500);
      expect(again).toHaveLength(2);
      for (const span of again) {
        expect(span.statusCode).toBe(ERROR);
        expect(span.attributes).toMatchObject({ 'error.type': 'internal_error', 'gateway.runs_again': true });
        expect(span.attributes['gateway.held_back.reason']).toBeUndefined();
        expect(span.attributes['gateway.held_back.wait_ms']).toBeUndefined();
      }
      const answered = spans.filter((span) => span.attributes['http.response.status_code'] === 200);
      expect(answered).toHaveLength(1);
      expect(answered[0].attributes['gateway.runs_again']).toBeUndefined();
    } finally {
      reads.mockRestore();
    }
  },
  SLOW_TEST_MS,
);
