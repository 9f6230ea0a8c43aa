/**
 * A job worker's round that fails once the node is stopping (its store closed under the round) is not
 * followed by another, and its log line says so rather than that the worker tries again: the claim loop
 * of the background and provider-job workers (gateway/job-poller.ts) and the batch worker's. A round that
 * fails while the node runs is logged as tried again, and is. Over a store whose claim is held, then fails.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startBatchWorker } from '../../src/gateway/batches/batch-worker.js';
import type { GatewayDeps } from '../../src/gateway/deps.js';
import { jobOwner, startJobPoller } from '../../src/gateway/job-poller.js';
import type { Store } from '../../src/store/types.js';

/** A logger keeping each line's message. */
function recordingLogger() {
  const messages: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        messages.push((JSON.parse(line) as { msg: string }).msg);
      }
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), messages };
}

/** A store whose every claim waits until failed by the test; `claims` counts them. */
function heldStore() {
  const failures: Array<(err: Error) => void> = [];
  const store = {
    jobs: {
      claim: () => new Promise<never>((_resolve, reject) => failures.push(reject)),
    },
    batches: {},
  };
  return { store: store as unknown as Store, failures };
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('a job worker round failing', () => {
  const pollerOf = (store: Store, logger: ReturnType<typeof recordingLogger>['logger']) =>
    startJobPoller(store, logger, {
      kinds: ['test.kind'],
      owner: jobOwner('test'),
      name: 'test worker',
      leaseMs: 30_000,
      pollMs: 10,
      concurrency: 1,
      run: async () => undefined,
    });

  it('while the node runs is logged as tried again, and is', async () => {
    const { store, failures } = heldStore();
    const { logger, messages } = recordingLogger();
    const poller = pollerOf(store, logger);
    await until(() => failures.length === 1);
    failures[0](new Error('store away for a moment'));
    await until(() => failures.length === 2);
    poller.stop();
    expect(messages).toEqual(['test worker: a round failed; trying again']);
  });

  it('once the node is stopping says it is not tried again (the claim loop)', async () => {
    const { store, failures } = heldStore();
    const { logger, messages } = recordingLogger();
    const poller = pollerOf(store, logger);
    await until(() => failures.length === 1);
    poller.stop();
    failures[0](new Error('the store is closed'));
    await settle();
    expect(failures.length).toBe(1);
    expect(messages).toEqual(['test worker: a round failed; not trying again: the node is stopping']);
  });

  it('once the node is stopping says it is not tried again (the batch worker)', async () => {
    const { store, failures } = heldStore();
    const { logger, messages } = recordingLogger();
    const deps = { store, logger, settings: {}, blobs: {} } as unknown as GatewayDeps;
    const worker = startBatchWorker(deps, {
      nodeConcurrency: 1,
      batchConcurrency: 1,
      leaseMs: 30_000,
      pollMs: 10,
    });
    await until(() => failures.length === 1);
    await worker.close(0);
    failures[0](new Error('the store is closed'));
    await settle();
    expect(failures.length).toBe(1);
    expect(messages).toEqual(['batch worker: a round failed; not trying again: the node is stopping']);
  });
});
