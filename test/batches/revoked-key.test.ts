/**
 * A managed batch runs its lines as the API key that created it: once that key is revoked, deleted or past
 * its expiry, the batch runs no more lines (within about a second: the key is read again at most once a
 * second a batch, not once a line). It ends `cancelled` with the error `api_key_revoked`, the lines already
 * answered in its output file, the others in its error file. Its first line is held at the provider until
 * the key is gone, so that how many lines run after does not hang on how fast the machine is.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BATCH_KEY_CHECK_MS } from '../../src/gateway/batches/batch-worker.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../management/http.js';
import {
  chatLine,
  contentLines,
  createBatch,
  finished,
  jsonl,
  sdk,
  target,
  until,
  upload,
  waitFor,
  SLOW_TEST_MS,
} from './support.js';

let gateway: TestGateway;
/** How long the slow provider takes to answer a call. */
const LATENCY_MS = 300;
let slow: FakeUpstream;
let fast: FakeUpstream;

beforeAll(async () => {
  slow = await startFakeOpenAI({ name: 'revoked-key', latencyMs: LATENCY_MS });
  fast = await startFakeOpenAI({ name: 'revoked-key-fast' });
  gateway = await startGateway({ env: { GATEWAY_BATCH_POLL_MS: '50' } });
});

afterAll(async () => {
  await gateway?.close();
  await slow?.close();
  await fast?.close();
});

async function memberKey(name: string): Promise<{ id: string; key: string }> {
  const created = await call(gateway.url, gateway.adminKey, 'POST', '/api-keys', { name, role: 'member' });
  expect(created.status, created.text).toBe(200);
  return created.body as { id: string; key: string };
}

describe('a batch whose API key is taken away', () => {
  for (const [how, takeAway] of [
    ['revoked', (id: string) => call(gateway.url, gateway.adminKey, 'POST', `/api-keys/${id}/revoke`)],
    ['deleted', (id: string) => call(gateway.url, gateway.adminKey, 'DELETE', `/api-keys/${id}`)],
    [
      'expired',
      (id: string) =>
        call(gateway.url, gateway.adminKey, 'PATCH', `/api-keys/${id}`, {
          expires_at: Math.floor(Date.now() / 1000) - 1,
        }),
    ],
  ] as const) {
    it(
      `runs no more lines once the key is ${how}, and ends cancelled with api_key_revoked`,
      async () => {
        const key = await memberKey(`batch-${how}`);
        const client = sdk(gateway.url, key.key, target(slow));
        const lines = Array.from({ length: 12 }, (_, i) => chatLine(`${how}-${i}`));
        const file = await upload(client, jsonl(lines));
        const before = slow.requests.length;
        // The first line is held with the provider until the key has gone.
        let keyGone!: () => void;
        slow.enqueue({ until: new Promise<void>((resolve) => (keyGone = resolve)) });
        const created = await createBatch(client, file.id, { concurrency: 1 });
        await until(() => slow.requests.length > before, 30_000);
        const taken = await takeAway(key.id);
        expect(taken.status, taken.text).toBe(200);
        keyGone();

        const admin = sdk(gateway.url, gateway.adminKey);
        const batch = await waitFor(admin, created.id, finished);
        expect(batch.status).toBe('cancelled');
        expect(batch.errors?.data?.map((error) => error.code)).toEqual(['api_key_revoked']);
        expect(batch.request_counts?.total).toBe(lines.length);
        // The most lines that run, whenever the key goes. With concurrency 1 a line starts only once the
        // call before it has ended, so lines start at least LATENCY_MS apart. The first line read the key
        // when it started, before it reached the provider, and is held there until the key is gone (so no
        // other line started meanwhile); it ends (1). The lines that start after it go on that read while
        // it is under BATCH_KEY_CHECK_MS old: at most ceil(1000 / 300) = 4 of them, all after the key went
        // (none before: the first was held). The next one reads the key again, after it went, finds it
        // gone, makes no call and cancels the batch; a line started before that cancel is seen reads the
        // kept "gone" and makes no call either.
        const most = 1 + Math.ceil(BATCH_KEY_CHECK_MS / LATENCY_MS);
        expect(batch.request_counts?.completed).toBeGreaterThanOrEqual(1);
        expect(batch.request_counts?.completed).toBeLessThanOrEqual(most);
        expect(slow.requests.length - before).toBeLessThanOrEqual(most);
        // The line that found the key gone is refused for it; those never run are cancelled.
        const errors = await contentLines(admin, batch.error_file_id);
        const codes = errors.map(
          (line) => (line.response?.body.error as { code?: string } | undefined)?.code ?? line.error?.code,
        );
        expect(codes).toContain('api_key_revoked');
        expect(codes.every((code) => code === 'api_key_revoked' || code === 'batch_cancelled')).toBe(true);
      },
      SLOW_TEST_MS,
    );
  }
});

describe('a batch whose API key stays', () => {
  it(
    'reads the key about once a second, not once a line',
    async () => {
      const key = await memberKey('batch-many-lines');
      const client = sdk(gateway.url, key.key, target(fast));
      const lines = Array.from({ length: 300 }, (_, i) => chatLine(`many-${i}`));
      const file = await upload(client, jsonl(lines));
      const { store } = gateway.server.deps;
      const reads = vi.spyOn(store, 'getApiKey');
      try {
        const started = Date.now();
        const created = await createBatch(client, file.id, { concurrency: 8 });
        const batch = await waitFor(sdk(gateway.url, gateway.adminKey), created.id, finished);
        const seconds = (Date.now() - started) / 1000;
        expect(batch.status).toBe('completed');
        expect(batch.request_counts?.completed).toBe(lines.length);
        const ofTheKey = reads.mock.calls.filter(([, id]) => id === key.id).length;
        expect(ofTheKey).toBeGreaterThan(0);
        expect(ofTheKey).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
      } finally {
        reads.mockRestore();
      }
    },
    SLOW_TEST_MS,
  );
});
