/**
 * The fine-tuning job, provider file and provider batch repositories on SQLite and PostgreSQL: two stores
 * on one database stand for two nodes. A file's upload to one account is claimed by exactly one of them;
 * a job's call is encrypted at rest; the job list is private to its workspace and pages by id.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import * as fineTuningJobMetadata from '../../src/store/migrations/0020_fine_tuning_job_metadata.js';
import type { Store } from '../../src/store/types.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

interface Nodes {
  a: Store;
  b: Store;
  /** The stored call's column, as it is in the database. */
  rawCall(id: string): Promise<string>;
  close(): Promise<void>;
}

function contract(open: () => Promise<Nodes>) {
  let nodes: Nodes;
  beforeAll(async () => {
    nodes = await open();
  });
  afterAll(async () => nodes?.close());

  const call = {
    caller: { id: 'key_1', organisation_id: 'org', workspace_id: 'ws_a' },
    headers: { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-very-secret-key' },
    metadata: {},
    trace_id: 't',
  };

  it('lets exactly one node claim a file’s upload to one account, and the other wait for its id', async () => {
    const file = `file_${randomBytes(6).toString('hex')}`;
    const claims = await Promise.all([
      nodes.a.providerFiles.claim(file, 'acct', 'openai', 60_000),
      nodes.b.providerFiles.claim(file, 'acct', 'openai', 60_000),
    ]);
    const won = claims.filter((c) => c.state === 'claimed');
    expect(won).toHaveLength(1);
    expect(claims.filter((c) => c.state === 'busy')).toHaveLength(1);
    // Another account is a claim of its own.
    expect((await nodes.b.providerFiles.claim(file, 'other', 'openai', 60_000)).state).toBe('claimed');
    const claim = won[0] as { claimed_at_ms: number };
    await nodes.a.providerFiles.remember(file, 'acct', claim.claimed_at_ms, 'file-abc');
    expect(await nodes.b.providerFiles.claim(file, 'acct', 'openai', 60_000)).toEqual({
      state: 'known',
      provider_file_id: 'file-abc',
    });
  });

  it('takes over a stale claim, and frees a released one', async () => {
    const file = `file_${randomBytes(6).toString('hex')}`;
    const first = await nodes.a.providerFiles.claim(file, 'acct', 'openai', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const taken = await nodes.b.providerFiles.claim(file, 'acct', 'openai', 1);
    expect(taken.state).toBe('claimed');
    // The first claimer's late answer no longer counts.
    await nodes.a.providerFiles.remember(
      file,
      'acct',
      (first as { claimed_at_ms: number }).claimed_at_ms,
      'x',
    );
    expect((await nodes.a.providerFiles.claim(file, 'acct', 'openai', 60_000)).state).toBe('busy');
    await nodes.b.providerFiles.release(file, 'acct', (taken as { claimed_at_ms: number }).claimed_at_ms);
    expect((await nodes.a.providerFiles.claim(file, 'acct', 'openai', 60_000)).state).toBe('claimed');
  });

  it('renews a claim it holds, which is then completed by its new time; never one it lost', async () => {
    const file = `file_${randomBytes(6).toString('hex')}`;
    const first = (await nodes.a.providerFiles.claim(file, 'acct', 'openai', 60_000)) as {
      claimed_at_ms: number;
    };
    const renewed = await nodes.a.providerFiles.renew(file, 'acct', first.claimed_at_ms);
    expect(renewed).toBeGreaterThan(first.claimed_at_ms);
    // The old time no longer names the claim.
    expect(await nodes.a.providerFiles.renew(file, 'acct', first.claimed_at_ms)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const taken = (await nodes.b.providerFiles.claim(file, 'acct', 'openai', 1)) as { claimed_at_ms: number };
    expect(await nodes.a.providerFiles.renew(file, 'acct', renewed as number)).toBeUndefined();
    await nodes.b.providerFiles.remember(file, 'acct', taken.claimed_at_ms, 'file-b');
    expect(await nodes.b.providerFiles.renew(file, 'acct', taken.claimed_at_ms)).toBeUndefined();
    expect(await nodes.a.providerFiles.claim(file, 'acct', 'openai', 60_000)).toEqual({
      state: 'known',
      provider_file_id: 'file-b',
    });
  });

  it('forgets a copy the provider lost, only while it is the one remembered', async () => {
    const file = `file_${randomBytes(6).toString('hex')}`;
    const claim = (await nodes.a.providerFiles.claim(file, 'acct', 'openai', 60_000)) as {
      claimed_at_ms: number;
    };
    await nodes.a.providerFiles.remember(file, 'acct', claim.claimed_at_ms, 'file-lost');
    await nodes.b.providerFiles.forget(file, 'acct', 'file-other');
    expect(await nodes.a.providerFiles.claim(file, 'acct', 'openai', 60_000)).toEqual({
      state: 'known',
      provider_file_id: 'file-lost',
    });
    await nodes.b.providerFiles.forget(file, 'acct', 'file-lost');
    expect((await nodes.a.providerFiles.claim(file, 'acct', 'openai', 60_000)).state).toBe('claimed');
  });

  it('keeps fine-tuning jobs per workspace, newest first, with the call encrypted', async () => {
    const workspace = `ws_${randomBytes(4).toString('hex')}`;
    const made = [];
    for (const n of [1, 2, 3]) {
      made.push(
        await nodes.a.fineTuningJobs.create({
          workspace_id: workspace,
          provider: 'openai',
          provider_job_id: `ftjob-${n}`,
          account: 'acct',
          status: 'queued',
          object: { id: `ftjob-${n}`, status: 'queued' },
          file_ids: { 'file-x': 'file_y' },
          metadata: n === 2 ? null : { team: n === 1 ? 'a' : 'b', "it's": '%_"' },
          call,
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const page = await nodes.b.fineTuningJobs.list(workspace, { limit: 2 });
    expect(page.data.map((j) => j.provider_job_id)).toEqual(['ftjob-3', 'ftjob-2']);
    expect(page.has_more).toBe(true);
    const rest = await nodes.b.fineTuningJobs.list(workspace, { limit: 2, after: page.data[1].id });
    expect(rest.data.map((j) => j.provider_job_id)).toEqual(['ftjob-1']);
    expect(rest.has_more).toBe(false);
    const ids = async (query: Parameters<Store['fineTuningJobs']['list']>[1]) =>
      (await nodes.b.fineTuningJobs.list(workspace, query)).data.map((j) => j.provider_job_id);
    expect(await ids({ limit: 10, metadata: { team: 'b' } })).toEqual(['ftjob-3']);
    expect(await ids({ limit: 10, metadata: { "it's": '%_"' } })).toEqual(['ftjob-3', 'ftjob-1']);
    expect(await ids({ limit: 1, after: made[2].id, metadata: { "it's": '%_"' } })).toEqual(['ftjob-1']);
    expect(await ids({ limit: 10, metadata: { team: 'a', "it's": 'x' } })).toEqual([]);
    expect(await ids({ limit: 10, metadata: null })).toEqual(['ftjob-2']);
    expect((await nodes.a.fineTuningJobs.get(workspace, made[0].id))?.metadata).toEqual({
      team: 'a',
      "it's": '%_"',
    });
    expect(await nodes.b.fineTuningJobs.get('ws_other', made[0].id)).toBeUndefined();
    expect(await nodes.b.fineTuningJobs.callOf(made[0].id)).toEqual(call);
    expect(await nodes.rawCall(made[0].id)).not.toContain('sk-very-secret-key');
    await nodes.b.fineTuningJobs.saw(made[0].id, 'succeeded', { id: 'ftjob-1', status: 'succeeded' });
    expect(await nodes.a.fineTuningJobs.get(workspace, made[0].id)).toMatchObject({
      status: 'succeeded',
      object: { status: 'succeeded' },
      file_ids: { 'file-x': 'file_y' },
    });
  });

  it('keeps a job seen finished from a later unfinished answer, and takes the id chosen for it', async () => {
    const id = `ftjob_${randomBytes(8).toString('hex').toUpperCase()}`;
    const job = await nodes.a.fineTuningJobs.create({
      id,
      workspace_id: 'ws_saw',
      provider: 'openai',
      provider_job_id: 'ftjob-saw',
      account: 'acct',
      status: 'running',
      object: { status: 'running' },
      file_ids: {},
      metadata: null,
      call,
    });
    expect(job.id).toBe(id);
    await nodes.b.fineTuningJobs.saw(id, 'cancelled', { status: 'cancelled' });
    await nodes.a.fineTuningJobs.saw(id, 'running', { status: 'running' });
    expect(await nodes.a.fineTuningJobs.get('ws_saw', id)).toMatchObject({
      status: 'cancelled',
      object: { status: 'cancelled' },
    });
    // A finished answer is still recorded over a finished one (the provider's object grows).
    await nodes.a.fineTuningJobs.saw(id, 'cancelled', { status: 'cancelled', finished_at: 1 });
    expect((await nodes.b.fineTuningJobs.get('ws_saw', id))?.object).toEqual({
      status: 'cancelled',
      finished_at: 1,
    });
  });

  it('records a provider batch and counts its polls', async () => {
    const batchId = `batch_${randomBytes(6).toString('hex')}`;
    await nodes.a.providerBatches.create({
      batch_id: batchId,
      provider: 'openai',
      provider_batch_id: 'batch_p',
      account: 'acct',
      object: { status: 'validating' },
    });
    await nodes.b.providerBatches.saw(batchId, { status: 'in_progress' });
    expect(await nodes.a.providerBatches.get(batchId)).toMatchObject({
      provider_batch_id: 'batch_p',
      object: { status: 'in_progress' },
      polls: 1,
    });
  });
}

describe('provider job repositories on SQLite', () => {
  contract(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-provider-jobs-'));
    const masterKey = randomBytes(32);
    const a = await openStore({ dataDir, masterKey });
    const b = await openStore({ dataDir, masterKey });
    const BetterSqlite3 = (await import('better-sqlite3')).default;
    const raw = new BetterSqlite3(join(dataDir, 'gateway.db'));
    return {
      a,
      b,
      rawCall: async (id) =>
        (
          raw.prepare('select call_encrypted from fine_tuning_jobs where id = ?').get(id) as {
            call_encrypted: string;
          }
        ).call_encrypted,
      async close() {
        raw.close();
        await a.close();
        await b.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  });
});

describeWithPostgres('provider job repositories on PostgreSQL', () => {
  contract(async () => {
    const schema = freshSchemaName('provider_jobs');
    const masterKey = randomBytes(32);
    const options = { databaseUrl: postgresUrl(), dataDir: '/nonexistent', masterKey, pgSchema: schema };
    const a = await openStore(options);
    const b = await openStore(options);
    const client = new pg.Client({ connectionString: postgresUrl() });
    await client.connect();
    await client.query(`set search_path to ${pg.escapeIdentifier(schema)}`);
    return {
      a,
      b,
      rawCall: async (id) =>
        (
          (await client.query('select call_encrypted from fine_tuning_jobs where id = $1', [id])).rows[0] as {
            call_encrypted: string;
          }
        ).call_encrypted,
      async close() {
        await client.end();
        await a.close();
        await b.close();
        await dropSchema(schema);
      },
    };
  });
});

describe('0020_fine_tuning_job_metadata', () => {
  it('gives jobs made before it the metadata of their provider object', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-ft-metadata-'));
    const store = await openStore({ dataDir, masterKey: randomBytes(32) });
    const job = (n: number, object: Record<string, unknown>) =>
      store.fineTuningJobs.create({
        workspace_id: 'ws',
        provider: 'openai',
        provider_job_id: `ftjob-${n}`,
        account: 'acct',
        status: 'queued',
        object,
        file_ids: {},
        metadata: null,
        call: {
          caller: { id: 'k', organisation_id: 'o', workspace_id: 'ws' },
          headers: {},
          metadata: {},
          trace_id: 't',
        },
      });
    const tagged = await job(1, { id: 'ftjob-1', metadata: { team: 'a' } });
    const untagged = await job(2, { id: 'ftjob-2', metadata: null });
    const db = new Kysely<unknown>({
      dialect: new SqliteDialect({ database: new Database(join(dataDir, 'gateway.db')) }),
    });
    await fineTuningJobMetadata.down(db);
    await fineTuningJobMetadata.up(db);
    await db.destroy();
    expect((await store.fineTuningJobs.get('ws', tagged.id))?.metadata).toEqual({ team: 'a' });
    expect((await store.fineTuningJobs.get('ws', untagged.id))?.metadata).toBeNull();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
});
