/**
 * A batch whose validation was cut short on every attempt (its node died each time, as one would on a
 * file that makes it run out of memory) fails, rather than stay `validating` for ever: the job's last
 * lapsed lease is claimed once more, exhausted, by a live node, which gives up on the batch. Two gateway
 * nodes on one PostgreSQL store: the first only serves the API; its store plays the dying node's claims.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { VALIDATE_JOB } from '../../src/gateway/batches/batch-phases.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { chatLine, createBatch, jsonl, sdk, sleep, target, upload, waitFor } from './support.js';

describeWithPostgres('a validation cut short on every attempt', () => {
  const schema = freshSchemaName('batches_exhausted');
  let api: TestGateway;
  let worker: TestGateway | undefined;
  let upstream: FakeUpstream;
  let s3: TestS3;
  let env: Record<string, string>;

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ name: 'exhausted' });
    s3 = await startS3();
    env = {
      ...s3.env,
      GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
      GATEWAY_BATCH_POLL_MS: '50',
      GATEWAY_BATCH_LEASE_MS: '1000',
    };
    api = await startGateway({
      env: { ...env, GATEWAY_BATCH_WORKER: 'false' },
      postgres: { url: postgresUrl(), schema },
    });
  });

  afterAll(async () => {
    await worker?.close();
    await api?.close();
    await upstream?.close();
    await s3?.close();
    await dropSchema(schema);
  });

  it('fails its batch once a live node claims the exhausted job', async () => {
    const client = sdk(api.url, api.adminKey, target(upstream));
    const file = await upload(client, jsonl([chatLine('only')]));
    const created = await createBatch(client, file.id);
    const { jobs, batches } = api.server.deps.store;
    // A node that takes the validation and dies, on each of its attempts, having stored lines of it.
    await batches.insertLines(created.id, [
      { line: 1, custom_id: 'only', body: JSON.stringify(chatLine('only').body) },
    ]);
    const [queued] = (await jobs.list({ kind: VALIDATE_JOB, status: 'queued' })).data;
    for (let attempt = 1; attempt <= queued.max_attempts; attempt++) {
      const [taken] = await jobs.claim({ kinds: [VALIDATE_JOB], owner: 'dying-node', leaseMs: 50 });
      expect(taken).toMatchObject({ id: queued.id, attempts: attempt });
      await sleep(100);
    }
    worker = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
    const batch = await waitFor(client, created.id, (b) => b.status !== 'validating', 20_000);
    expect(batch.status).toBe('failed');
    expect(batch.errors?.data?.[0]).toMatchObject({ code: 'internal_error' });
    expect(await jobs.get(queued.id)).toMatchObject({ status: 'failed' });
    // The lines it stored are gone with it.
    expect((await batches.lineCounts(created.id)).total).toBe(0);
    // No request of the batch reached the provider.
    expect(upstream.requests.length).toBe(0);
  }, 60_000);
});
