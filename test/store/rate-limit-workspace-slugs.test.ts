/**
 * 0029_rate_limit_workspace_slugs: a policy stored before the API wrote a `workspace_id` condition's slug
 * as the workspace's id has each slug of a live workspace of its organisation written as that id, on
 * SQLite and on PostgreSQL; patterns, ids, other keys and names of no workspace of the organisation stay.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import * as workspaceSlugs from '../../src/store/migrations/0029_rate_limit_workspace_slugs.js';
import { openStore } from '../../src/store/index.js';
import type { RateLimitCondition, Store } from '../../src/store/types.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

async function convertsSlugs(store: Store, db: Kysely<unknown>): Promise<void> {
  const organisation = await store.createOrganisation({ name: 'Slugs' });
  const other = await store.createOrganisation({ name: 'Other' });
  const team = await store.createWorkspace({ organisation_id: organisation.id, name: 'Team', slug: 'team' });
  const ops = await store.createWorkspace({ organisation_id: organisation.id, name: 'Ops', slug: 'ops' });
  // Another organisation's workspace: its slug names nothing of the policy's organisation.
  await store.createWorkspace({ organisation_id: other.id, name: 'Elsewhere', slug: 'elsewhere' });
  const policy = (conditions: RateLimitCondition[]) =>
    store.createRateLimitPolicy({
      organisation_id: organisation.id,
      workspace_id: team.id,
      name: 'old',
      type: 'requests',
      unit: 'rpm',
      value: 60,
      conditions,
      group_by: [{ key: 'api_key' }],
    });
  // Written as the API stored them before it converted slugs.
  const bySlug = await policy([
    { key: 'workspace_id', value: 'team' },
    { key: 'workspace_id', value: ['ops', '*', 'elsewhere', team.id], excludes: 'ops' },
    { key: 'metadata.team', value: 'team' },
  ]);
  const untouched = await policy([
    { key: 'workspace_id', value: 'team/*', excludes: ['nowhere'] },
    { key: 'config', value: 'ops' },
  ]);

  await workspaceSlugs.up(db);

  expect((await store.getRateLimitPolicy(team.id, bySlug.id))?.conditions).toEqual([
    { key: 'workspace_id', value: team.id },
    { key: 'workspace_id', value: [ops.id, '*', 'elsewhere', team.id], excludes: ops.id },
    { key: 'metadata.team', value: 'team' },
  ]);
  expect((await store.getRateLimitPolicy(team.id, untouched.id))?.conditions).toEqual(untouched.conditions);
}

describe('0029_rate_limit_workspace_slugs', () => {
  it('writes the workspace slugs of stored workspace_id conditions as ids (SQLite)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rate-limit-slugs-'));
    const store = await openStore({ dataDir, masterKey: randomBytes(32) });
    const db = new Kysely<unknown>({
      dialect: new SqliteDialect({ database: new Database(join(dataDir, 'gateway.db')) }),
    });
    try {
      await convertsSlugs(store, db);
    } finally {
      await db.destroy();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describeWithPostgres('0029_rate_limit_workspace_slugs on PostgreSQL', () => {
  it('writes the workspace slugs of stored workspace_id conditions as ids', async () => {
    const schema = freshSchemaName('rate_limit_slugs');
    const store = await openStore({
      databaseUrl: postgresUrl(),
      dataDir: '/nonexistent',
      masterKey: randomBytes(32),
      pgSchema: schema,
    });
    const pool = new pg.Pool({
      connectionString: postgresUrl(),
      options: `-c search_path=${pg.escapeIdentifier(schema)}`,
    });
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    try {
      await convertsSlugs(store, db);
    } finally {
      await db.destroy();
      await store.close();
      await dropSchema(schema);
    }
  });
});
