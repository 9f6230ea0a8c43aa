/**
 * A managed batch runs its lines as the API key that created it: once that key is revoked, deleted or past
 * its expiry, the batch runs no more lines. It ends `cancelled` with the error `api_key_revoked`, the lines
 * already answered in its output file, the others in its error file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
let slow: FakeUpstream;

beforeAll(async () => {
  slow = await startFakeOpenAI({ name: 'revoked-key', latencyMs: 300 });
  gateway = await startGateway({ env: { GATEWAY_BATCH_POLL_MS: '50' } });
});

afterAll(async () => {
  await gateway?.close();
  await slow?.close();
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
        const lines = Array.from({ length: 6 }, (_, i) => chatLine(`${how}-${i}`));
        const file = await upload(client, jsonl(lines));
        const before = slow.requests.length;
        const created = await createBatch(client, file.id, { concurrency: 1 });
        // The first line is with the provider when the key goes.
        await until(() => slow.requests.length > before, 30_000);
        const taken = await takeAway(key.id);
        expect(taken.status, taken.text).toBe(200);

        const admin = sdk(gateway.url, gateway.adminKey);
        const batch = await waitFor(admin, created.id, finished);
        expect(batch.status).toBe('cancelled');
        expect(batch.errors?.data?.map((error) => error.code)).toEqual(['api_key_revoked']);
        expect(batch.request_counts?.total).toBe(lines.length);
        // The line in flight may end, and one more may have started before the worker looked again: not all.
        expect(batch.request_counts?.completed).toBeLessThan(lines.length - 2);
        expect(slow.requests.length - before).toBeLessThan(lines.length - 2);
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
