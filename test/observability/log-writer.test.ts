import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogWriter, type LogWriter } from '../../src/observability/log-writer.js';
import type { LogRecord, Store } from '../../src/store/types.js';

/** A store that records each insert and answers it when the test says so. */
function fakeStore() {
  const batches: string[][] = [];
  const waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const store = {
    insertLogs(records: LogRecord[]) {
      batches.push(records.map((record) => record.id));
      return new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
    },
  } as unknown as Store;
  const settle = async (how: 'ok' | 'fail' = 'ok') => {
    const next = waiting.shift();
    if (how === 'ok') next?.resolve();
    else next?.reject(new Error('database unavailable'));
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { store, batches, settle, pending: () => waiting.length };
}

const record = (id: string) => ({ id }) as LogRecord;
const quiet = pino({ level: 'silent' });

describe('the log writer', () => {
  let writer: LogWriter | undefined;
  afterEach(() => {
    writer = undefined;
  });

  it('writes what was buffered when a flush starts; records arriving meanwhile wait for the next one', async () => {
    const fake = fakeStore();
    writer = createLogWriter(fake.store, quiet, { batchSize: 500, flushIntervalMs: 60_000 });
    writer.enqueue(record('a'));
    writer.enqueue(record('b'));
    const first = writer.flush();
    writer.enqueue(record('c')); // arrives while the first batch is being written
    await fake.settle();
    await first;
    expect(fake.batches).toEqual([['a', 'b']]);
    expect(writer.pending).toBe(1);
    const second = writer.flush();
    await fake.settle();
    await second;
    expect(fake.batches).toEqual([['a', 'b'], ['c']]);
    expect(writer.pending).toBe(0);
  });

  it('closes within the time it is given when the store does not answer', async () => {
    const fake = fakeStore();
    writer = createLogWriter(fake.store, quiet, { batchSize: 500, flushIntervalMs: 60_000 });
    writer.enqueue(record('a'));
    const started = Date.now();
    await writer.close(100);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(fake.batches).toEqual([['a']]);
    expect(writer.pending).toBe(1);
  });

  it('keeps a batch the store refused and writes it with the next flush', async () => {
    const fake = fakeStore();
    writer = createLogWriter(fake.store, quiet, { batchSize: 500, flushIntervalMs: 60_000 });
    writer.enqueue(record('a'));
    const failed = writer.flush();
    await fake.settle('fail');
    await failed;
    expect(writer.pending).toBe(1);
    const retried = writer.flush();
    await fake.settle();
    await retried;
    expect(fake.batches).toEqual([['a'], ['a']]);
    expect(writer.pending).toBe(0);
  });

  it('drops only a record whose values the store refuses; one unreachable store keeps the rest', async () => {
    const written: string[] = [];
    let reachable = true;
    const store = {
      async insertLogs(records: LogRecord[]) {
        if (!reachable) throw new Error('Connection terminated unexpectedly');
        if (records.some((one) => one.id.startsWith('bad'))) {
          throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
            code: '22021',
          });
        }
        written.push(...records.map((one) => one.id));
      },
    } as unknown as Store;
    writer = createLogWriter(store, quiet, { batchSize: 500, flushIntervalMs: 60_000 });
    for (const id of ['a', 'bad-1', 'b']) writer.enqueue(record(id));
    await writer.flush();
    expect(written).toEqual(['a', 'b']);
    expect(writer.pending).toBe(0);
    expect(writer.refused).toBe(1);

    reachable = false;
    for (const id of ['c', 'bad-2']) writer.enqueue(record(id));
    await writer.flush();
    expect(writer.pending).toBe(2);
    reachable = true;
    await writer.flush();
    expect(written).toEqual(['a', 'b', 'c']);
    expect(writer.pending).toBe(0);
    expect(writer.refused).toBe(2);
  });

  it.each([
    ['54000', 'index row size 3024 exceeds btree version 4 maximum 2704'],
    ['54001', 'statement is too complex'],
  ])('drops a record the store refuses as past its limits (SQLSTATE %s)', async (code, message) => {
    const written: string[] = [];
    const store = {
      async insertLogs(records: LogRecord[]) {
        if (records.some((one) => one.id.startsWith('bad')))
          throw Object.assign(new Error(message), { code });
        written.push(...records.map((one) => one.id));
      },
    } as unknown as Store;
    writer = createLogWriter(store, quiet, { batchSize: 500, flushIntervalMs: 60_000 });
    for (const id of ['a', 'bad', 'b']) writer.enqueue(record(id));
    await writer.flush();
    expect(written).toEqual(['a', 'b']);
    expect(writer.pending).toBe(0);
    expect(writer.refused).toBe(1);
  });

  it('close writes everything, in batches of batchSize', async () => {
    const fake = fakeStore();
    writer = createLogWriter(fake.store, quiet, { batchSize: 2, flushIntervalMs: 60_000 });
    // A full batch starts a flush at once; the rest waits for close.
    for (const id of ['a', 'b', 'c', 'd', 'e']) writer.enqueue(record(id));
    const closing = writer.close();
    while (writer.pending > 0 || fake.pending() > 0) await fake.settle();
    await closing;
    expect(fake.batches.flat()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(fake.batches.every((batch) => batch.length <= 2)).toBe(true);
  });

  it('close writes the records that arrive while it writes, and says so of one that comes after it', async () => {
    const fake = fakeStore();
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    writer = createLogWriter(fake.store, logger, { batchSize: 500, flushIntervalMs: 60_000 });
    writer.enqueue(record('a'));
    const closing = writer.close(60_000);
    // A call the stop ended (its connection destroyed at the cut) is recorded while the final writes run.
    writer.enqueue(record('b'));
    while (fake.pending() > 0) await fake.settle();
    await closing;
    expect(fake.batches.flat()).toEqual(['a', 'b']);
    expect(lines.join('')).not.toContain('not written');

    writer.enqueue(record('c'));
    expect(fake.batches.flat()).toEqual(['a', 'b']);
    expect(lines.join('')).toContain('log record came after the final writes: dropped');
  });

  it('close waits for the record of a call still running, made after it starts with nothing buffered', async () => {
    const fake = fakeStore();
    writer = createLogWriter(fake.store, pino({ level: 'silent' }), {
      batchSize: 500,
      flushIntervalMs: 60_000,
    });
    // A call the stop cut: its record is made a few turns of the loop after its connection was destroyed,
    // or later on a busy process.
    writer.callBegan();
    const closing = writer.close(60_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    writer.enqueue(record('cut'));
    writer.callDone();
    for (let i = 0; i < 50 && fake.batches.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    while (fake.pending() > 0) await fake.settle();
    await closing;
    expect(fake.batches.flat()).toEqual(['cut']);
  });

  it('close ends at once with nothing buffered and no call running', async () => {
    const fake = fakeStore();
    writer = createLogWriter(fake.store, quiet, { batchSize: 500, flushIntervalMs: 60_000 });
    // A call that ended before the stop leaves nothing to wait for.
    writer.callBegan();
    writer.callDone();
    let ended = false;
    void writer.close(60_000).then(() => (ended = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toBe(true);
    expect(fake.batches).toEqual([]);
  });

  it('close says how many calls were still running when it ran out of time', async () => {
    const fake = fakeStore();
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    writer = createLogWriter(fake.store, logger, { batchSize: 500, flushIntervalMs: 60_000 });
    writer.callBegan();
    await writer.close(50);
    expect(lines.join('')).toMatch(/"calls":1[^\n]*calls still running at the end of the final writes/);
  });
});
