/**
 * On SQLite, log searches and analytics queries read on threads of their own, each with its own queue: a
 * full queue of one kind refuses that kind only, and the other is answered as before.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { MAX_QUEUED_READS } from '../../src/store/sqlite-log-reader.js';
import type { AnalyticsQuery } from '../../src/store/types.js';
import { outcome } from '../helpers/log-reads.js';

let store: Store;

beforeAll(async () => {
  store = await openStore({
    dataDir: mkdtempSync(join(tmpdir(), 'log-reader-lanes-')),
    masterKey: randomBytes(32),
  });
});

afterAll(async () => {
  await store?.close();
});

const summary: AnalyticsQuery = {
  workspace_ids: ['ws'],
  period: 'hour',
  from_ms: 0,
  to_ms: 3_600_000,
  filters: {},
};

it('answers an analytics query while log searches fill their queue', async () => {
  // One running and MAX_QUEUED_READS waiting, all queued before any can be answered.
  const searches = Array.from({ length: MAX_QUEUED_READS + 1 }, (_, index) =>
    outcome(store.listLogs({ workspace_id: 'ws', limit: 10, search: `text-${index}` })),
  );
  const refused = outcome(store.listLogs({ workspace_id: 'ws', limit: 10, search: 'one-more' }));
  const analytics = outcome(store.analytics(summary));
  expect(await refused).toBe('rate_limited');
  expect(await analytics).toBe('answered');
  expect(await Promise.all(searches)).toEqual(Array(MAX_QUEUED_READS + 1).fill('answered'));
});

it('answers a log search while analytics queries fill their queue', async () => {
  const queries = Array.from({ length: MAX_QUEUED_READS + 1 }, () => outcome(store.analytics(summary)));
  const refused = store.analytics(summary);
  const search = outcome(store.listLogs({ workspace_id: 'ws', limit: 10, search: 'text' }));
  await expect(refused).rejects.toMatchObject({
    code: 'rate_limited',
    status: 429,
    message: expect.stringContaining('analytics'),
  });
  expect(await search).toBe('answered');
  expect(await Promise.all(queries)).toEqual(Array(MAX_QUEUED_READS + 1).fill('answered'));
});
