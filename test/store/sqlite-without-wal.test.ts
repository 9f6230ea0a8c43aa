/**
 * Where SQLite cannot put the file in WAL mode it answers the `journal_mode=WAL` pragma with the mode in
 * force: no log reader thread is started and GET /v1/logs runs its page query on the main connection
 * (under the readers' bound: sqlite-without-wal-bound.test.ts), while the log thread writes in
 * rollback-journal mode.
 *
 * A VFS without shared memory (a file system that cannot share the WAL index) is what refuses WAL; the
 * driver's class is given that answer (helpers/sqlite-without-wal.ts). Everything else is SQLite's own,
 * the file included.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { SQLITE_FILE } from '../../src/store/connect.js';
import { startSqliteLogReaders } from '../../src/store/sqlite-log-reader.js';
import { listLogs, providerHeaders, uniqueId, waitForLogs } from '../core/support.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

vi.mock('better-sqlite3', async (importOriginal) =>
  (await import('../helpers/sqlite-without-wal.js')).withoutWal(await importOriginal()),
);

// The reader module as it is, its start recorded.
vi.mock('../../src/store/sqlite-log-reader.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/store/sqlite-log-reader.js')>();
  return { ...actual, startSqliteLogReaders: vi.fn(actual.startSqliteLogReaders) };
});

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'no-wal' });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

async function chat(metadata: Record<string, string>): Promise<void> {
  const response = await fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: providerHeaders(gateway, fake, {
      'content-type': 'application/json',
      // A header is Latin-1: a character outside ASCII is sent as its JSON escape.
      'x-gateway-metadata': JSON.stringify(metadata).replace(
        /[^\x20-\x7e]/g,
        (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
      ),
    }),
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
  });
  expect(response.status).toBe(200);
  await response.text();
}

it('searches the log on the main connection when SQLite keeps the rollback journal', async () => {
  const run = uniqueId('no-wal');
  await chat({ run, team: 'ÉQUIPE-Rare' });
  await chat({ run, team: 'plain' });
  await chat({ run, other: 'x' });
  const records = await waitForLogs(gateway, { 'metadata.run': run }, 3);
  expect(records).toHaveLength(3);

  const file = join(gateway.dataDir, SQLITE_FILE);
  // The header's read and write versions: 1 is the rollback journal, 2 WAL.
  expect([...readFileSync(file).subarray(18, 20)]).toEqual([1, 1]);
  expect(existsSync(`${file}-wal`)).toBe(false);
  // No reader thread: the page queries below are the main connection's.
  expect(startSqliteLogReaders).not.toHaveBeenCalled();

  // In any case, outside ASCII too: the main connection's folding.
  const found = await listLogs(gateway, { search: 'équipe-rare', 'metadata.run': run });
  expect(found.data.map((record) => record.metadata.team)).toEqual(['ÉQUIPE-Rare']);
  const plain = await listLogs(gateway, { search: 'PLAIN', 'metadata.run': run });
  expect(plain.data.map((record) => record.metadata.team)).toEqual(['plain']);
  expect((await listLogs(gateway, { search: 'no-such-text', 'metadata.run': run })).data).toEqual([]);
  // Paged, newest first, with the cursor.
  const first = await listLogs(gateway, { search: run, limit: '2' });
  expect(first.has_more).toBe(true);
  const rest = await listLogs(gateway, { search: run, limit: '2', after: first.data[1]!.id });
  expect([...first.data, ...rest.data].map((record) => record.id)).toEqual(
    records.map((record) => record.id),
  );
  expect(rest.has_more).toBe(false);
}, 30_000);
