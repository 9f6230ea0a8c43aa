/**
 * The job queue against every Store implementation (store.test.ts runs it on SQLite and PostgreSQL).
 * "Nodes" are two Store instances opened on the same database: the same SQLite file, the same
 * PostgreSQL schema. Every test uses job kinds of its own, so tests share one database.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exhaustedJob, type Job, type Store } from '../../src/store/types.js';
import type { StoreHarness } from './store-contract.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function jobsContract(makeHarness: () => Promise<StoreHarness>): void {
  const masterKey = randomBytes(32);
  let harness: StoreHarness;
  let nodeA: Store;
  let nodeB: Store;

  beforeAll(async () => {
    harness = await makeHarness();
    nodeA = await harness.open(masterKey);
    nodeB = await harness.open(masterKey);
  });
  afterAll(async () => {
    await nodeA?.close();
    await nodeB?.close();
    await harness?.cleanup();
  });

  const freshKind = (name: string) => `${name}-${randomBytes(4).toString('hex')}`;

  describe('jobs', () => {
    it('enqueues with defaults and reads the job back', async () => {
      const kind = freshKind('export');
      const before = Date.now();
      const job = await nodeA.jobs.enqueue({
        kind,
        payload: { file: 'a.jsonl', rows: [1, 2] },
        workspace_id: 'ws_1',
      });
      expect(job).toMatchObject({
        kind,
        status: 'queued',
        workspace_id: 'ws_1',
        payload: { file: 'a.jsonl', rows: [1, 2] },
        result: null,
        error: null,
        attempts: 0,
        max_attempts: 3,
        lease_owner: null,
        lease_expires_at_ms: null,
        finished_at_ms: null,
      });
      expect(job.id).toMatch(/^job_[0-9A-Z]{26}$/);
      expect(job.run_at_ms).toBeGreaterThanOrEqual(before);
      expect(await nodeB.jobs.get(job.id)).toEqual(job);
      expect(await nodeB.jobs.get('job_missing')).toBeUndefined();
    });

    it('claims due jobs of the given kinds only, earliest first, up to the limit, once', async () => {
      const kind = freshKind('batch');
      const other = freshKind('other');
      const now = Date.now();
      const late = await nodeA.jobs.enqueue({ kind, payload: 'late', run_at_ms: now - 1_000 });
      const early = await nodeA.jobs.enqueue({ kind, payload: 'early', run_at_ms: now - 5_000 });
      const future = await nodeA.jobs.enqueue({ kind, payload: 'future', run_at_ms: now + 60_000 });
      await nodeA.jobs.enqueue({ kind: other, payload: 'not mine' });

      const claimed = await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 30_000, limit: 5 });
      expect(claimed.map((job) => job.id)).toEqual([early.id, late.id]);
      for (const job of claimed) {
        expect(job).toMatchObject({ status: 'running', lease_owner: 'node-a', attempts: 1 });
        expect(job.lease_expires_at_ms).toBeGreaterThanOrEqual(now + 30_000);
      }
      expect(await nodeB.jobs.claim({ kinds: [kind], owner: 'node-b', leaseMs: 30_000, limit: 5 })).toEqual(
        [],
      );
      expect((await nodeB.jobs.get(future.id))?.status).toBe('queued');
      expect(await nodeA.jobs.claim({ kinds: [], owner: 'node-a', leaseMs: 1_000 })).toEqual([]);
    });

    it('heartbeats and completes only for the owner', async () => {
      const kind = freshKind('complete');
      const job = await nodeA.jobs.enqueue({ kind, payload: null });
      const [claimed] = await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 1_000 });
      expect(claimed.id).toBe(job.id);

      expect(await nodeB.jobs.heartbeat(job.id, 'node-b', 60_000)).toBeUndefined();
      const beat = await nodeA.jobs.heartbeat(job.id, 'node-a', 60_000);
      expect(beat?.lease_expires_at_ms).toBeGreaterThan(claimed.lease_expires_at_ms ?? Infinity);

      expect(await nodeB.jobs.complete(job.id, 'node-b', { stolen: true })).toBeUndefined();
      const done = await nodeA.jobs.complete(job.id, 'node-a', { rows: 42 });
      expect(done).toMatchObject({
        status: 'completed',
        result: { rows: 42 },
        lease_expires_at_ms: null,
        attempts: 1,
      });
      expect(done?.finished_at_ms).toEqual(expect.any(Number));
      // Ended: nothing more is accepted, not even from its owner.
      expect(await nodeA.jobs.complete(job.id, 'node-a')).toBeUndefined();
      expect(await nodeA.jobs.heartbeat(job.id, 'node-a', 1_000)).toBeUndefined();
      expect(await nodeA.jobs.fail(job.id, 'node-a', 'late')).toBeUndefined();
      expect(await nodeB.jobs.claim({ kinds: [kind], owner: 'node-b', leaseMs: 1_000 })).toEqual([]);
    });

    it('a failed attempt goes back to the queue until max_attempts, then the job fails', async () => {
      const kind = freshKind('retry');
      const job = await nodeA.jobs.enqueue({ kind, payload: {}, max_attempts: 2 });
      await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 10_000 });
      const retryAt = Date.now() + 150;
      const retried = await nodeA.jobs.fail(job.id, 'node-a', 'upstream 503', retryAt);
      expect(retried).toMatchObject({
        status: 'queued',
        error: 'upstream 503',
        attempts: 1,
        run_at_ms: retryAt,
      });
      // Not due before retryAt.
      expect(await nodeB.jobs.claim({ kinds: [kind], owner: 'node-b', leaseMs: 10_000 })).toEqual([]);
      await sleep(200);
      const [again] = await nodeB.jobs.claim({ kinds: [kind], owner: 'node-b', leaseMs: 10_000 });
      expect(again).toMatchObject({ id: job.id, attempts: 2, lease_owner: 'node-b' });
      const failed = await nodeB.jobs.fail(job.id, 'node-b', 'upstream 503 again');
      expect(failed).toMatchObject({ status: 'failed', error: 'upstream 503 again', attempts: 2 });
      expect(failed?.finished_at_ms).toEqual(expect.any(Number));
      expect(await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 10_000 })).toEqual([]);
    });

    it("takes over a job whose lease expired, and refuses the first owner's heartbeat and completion", async () => {
      const kind = freshKind('takeover');
      const job = await nodeA.jobs.enqueue({ kind, payload: { n: 1 } });
      const [first] = await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 100 });
      expect(first.id).toBe(job.id);
      expect(await nodeB.jobs.claim({ kinds: [kind], owner: 'node-b', leaseMs: 10_000 })).toEqual([]);

      await sleep(150);
      const [taken] = await nodeB.jobs.claim({ kinds: [kind], owner: 'node-b', leaseMs: 10_000 });
      expect(taken).toMatchObject({ id: job.id, status: 'running', lease_owner: 'node-b', attempts: 2 });

      expect(await nodeA.jobs.heartbeat(job.id, 'node-a', 10_000)).toBeUndefined();
      expect(await nodeA.jobs.complete(job.id, 'node-a', 'too late')).toBeUndefined();
      expect(await nodeA.jobs.fail(job.id, 'node-a', 'too late')).toBeUndefined();
      expect(await nodeB.jobs.complete(job.id, 'node-b', 'done')).toMatchObject({
        status: 'completed',
        result: 'done',
        lease_owner: 'node-b',
      });
    });

    it('a job whose lease expired during its last attempt is claimed once more, exhausted, for its worker to give up on', async () => {
      const kind = freshKind('exhausted');
      const job = await nodeA.jobs.enqueue({ kind, payload: {}, max_attempts: 1 });
      await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 50 });
      await sleep(100);
      const [again] = await nodeB.jobs.claim({ kinds: [kind], owner: 'node-b', leaseMs: 10_000 });
      // Not to run: the worker fails what the job was for (a batch left validating), then the job.
      expect(again).toMatchObject({ id: job.id, status: 'running', lease_owner: 'node-b', attempts: 2 });
      expect(exhaustedJob(again)).toBe(true);
      expect(await nodeB.jobs.fail(job.id, 'node-b', 'given up')).toMatchObject({
        status: 'failed',
        lease_expires_at_ms: null,
      });
      expect(await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 10_000 })).toEqual([]);
    });

    it('a run its node stopped is given back with its attempt, as many times as the node stops; a lapse still counts', async () => {
      const kind = freshKind('release');
      const job = await nodeA.jobs.enqueue({ kind, payload: {}, max_attempts: 2 });
      // More stops than the job has attempts: none of them uses one up.
      for (let stop = 0; stop < 3; stop++) {
        const [claimed] = await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 10_000 });
        expect(claimed).toMatchObject({ id: job.id, attempts: 1 });
        // Only its holder gives it back.
        expect(await nodeB.jobs.release(job.id, 'node-b')).toBeUndefined();
        const released = await nodeA.jobs.release(job.id, 'node-a');
        expect(released).toMatchObject({
          status: 'queued',
          attempts: 0,
          lease_expires_at_ms: null,
          finished_at_ms: null,
          error: null,
        });
        expect(released?.run_at_ms).toBeLessThanOrEqual(Date.now());
        expect(await nodeA.jobs.release(job.id, 'node-a')).toBeUndefined();
      }
      // Not due before the time it is given back for.
      await nodeB.jobs.claim({ kinds: [kind], owner: 'node-b', leaseMs: 10_000 });
      expect(await nodeB.jobs.release(job.id, 'node-b', Date.now() + 150)).toMatchObject({ attempts: 0 });
      expect(await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 10_000 })).toEqual([]);
      await sleep(200);
      // A node that dies leaves a lease that lapses: that run counts.
      const [dying] = await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 50 });
      expect(dying).toMatchObject({ id: job.id, attempts: 1 });
      await sleep(100);
      const [taken] = await nodeB.jobs.claim({ kinds: [kind], owner: 'node-b', leaseMs: 10_000 });
      expect(taken).toMatchObject({ id: job.id, attempts: 2 });
      expect(await nodeA.jobs.release(job.id, 'node-a')).toBeUndefined();
      expect(await nodeB.jobs.release(job.id, 'node-b')).toMatchObject({ status: 'queued', attempts: 1 });
    });

    it('never leases one job to two owners, with many claims running at once on two nodes', async () => {
      const kind = freshKind('parallel');
      const total = 120;
      const ids = new Set<string>();
      for (let start = 0; start < total; start += 40) {
        const batch = await Promise.all(
          Array.from({ length: 40 }, (_, i) => nodeA.jobs.enqueue({ kind, payload: { i: start + i } })),
        );
        for (const job of batch) ids.add(job.id);
      }
      const claims: Job[][] = [];
      let rounds = 0;
      while (claims.flat().length < total && rounds++ < 50) {
        const results = await Promise.all(
          Array.from({ length: 24 }, (_, i) => {
            const node = i % 2 === 0 ? nodeA : nodeB;
            return node.jobs.claim({ kinds: [kind], owner: `worker-${i}`, leaseMs: 60_000, limit: 3 });
          }),
        );
        claims.push(...results);
      }
      const claimed = claims.flat().map((job) => job.id);
      expect(claimed).toHaveLength(total);
      expect(new Set(claimed).size).toBe(total);
      expect(new Set(claimed)).toEqual(ids);
      const running = await nodeB.jobs.list({ kind, status: 'running', limit: 1_000 });
      expect(running.data).toHaveLength(total);
      expect(running.data.every((job) => job.attempts === 1)).toBe(true);
    });

    it('lists by kind, status and workspace, oldest first, page by page', async () => {
      const kind = freshKind('list');
      const jobs: Job[] = [];
      for (let i = 0; i < 7; i++) {
        jobs.push(
          await nodeA.jobs.enqueue({ kind, payload: i, workspace_id: i % 2 === 0 ? 'ws_even' : 'ws_odd' }),
        );
      }
      const [claimed] = await nodeA.jobs.claim({ kinds: [kind], owner: 'node-a', leaseMs: 10_000 });
      const pages: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await nodeB.jobs.list({ kind, limit: 3, after });
        pages.push(...page.data.map((job) => job.id));
        if (!page.has_more) break;
        after = page.data.at(-1)?.id;
      }
      expect(pages).toEqual([...jobs.map((job) => job.id)].sort());
      expect((await nodeB.jobs.list({ kind, status: 'running' })).data.map((job) => job.id)).toEqual([
        claimed.id,
      ]);
      expect((await nodeB.jobs.list({ kind, status: 'queued' })).data).toHaveLength(6);
      // Ids made in one millisecond do not sort in creation order: compare with the ids' own order.
      const odd = jobs.filter((job) => job.workspace_id === 'ws_odd').map((job) => job.id);
      expect((await nodeB.jobs.list({ kind, workspace_id: 'ws_odd' })).data.map((job) => job.id)).toEqual(
        odd.sort(),
      );
    });

    it('a job enqueued in a transaction that rolls back never exists', async () => {
      const kind = freshKind('tx');
      await expect(
        nodeA.transaction(async (tx) => {
          await tx.jobs.enqueue({ kind, payload: {} });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      const kept = await nodeA.transaction((tx) => tx.jobs.enqueue({ kind, payload: { kept: true } }));
      expect((await nodeB.jobs.list({ kind })).data.map((job) => job.id)).toEqual([kept.id]);
    });
  });
}
