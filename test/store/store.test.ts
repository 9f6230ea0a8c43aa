/** The store contract against an SQLite file in a temp dir and against the real PostgreSQL. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { guardrailsContract } from './guardrails-contract.js';
import { jobsContract } from './jobs-contract.js';
import { storeContract, type StoreHarness } from './store-contract.js';

async function sqliteHarness(): Promise<StoreHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-store-'));
  let raw: BetterSqlite3.Database | undefined;
  return {
    open: (masterKey) => openStore({ dataDir, masterKey }),
    async raw(sqlText, params = []) {
      raw ??= new BetterSqlite3(join(dataDir, 'gateway.db'));
      const statement = raw.prepare(sqlText);
      if (statement.reader) return statement.all(...params) as Record<string, unknown>[];
      statement.run(...params);
      return [];
    },
    async cleanup() {
      raw?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function postgresHarness(): Promise<StoreHarness> {
  const schema = freshSchemaName('store');
  const client = new pg.Client({ connectionString: postgresUrl() });
  await client.connect();
  await client.query(`set search_path to ${pg.escapeIdentifier(schema)}`);
  return {
    open: (masterKey) =>
      openStore({ databaseUrl: postgresUrl(), dataDir: '/nonexistent', masterKey, pgSchema: schema }),
    async raw(sqlText, params = []) {
      let n = 0;
      const result = await client.query(
        sqlText.replace(/\?/g, () => `$${++n}`),
        params,
      );
      return result.rows as Record<string, unknown>[];
    },
    async cleanup() {
      await client.end();
      await dropSchema(schema);
    },
  };
}

describe('store on SQLite', () => {
  storeContract(sqliteHarness);
  jobsContract(sqliteHarness);
  guardrailsContract(sqliteHarness);
});

describeWithPostgres('store on PostgreSQL', () => {
  storeContract(postgresHarness);
  jobsContract(postgresHarness);
  guardrailsContract(postgresHarness);
});

describeWithPostgres('store on PostgreSQL, several nodes starting together', () => {
  it('creates the schema and applies each migration once', async () => {
    const schema = freshSchemaName('store_nodes');
    const masterKey = randomBytes(32);
    try {
      const stores = await Promise.all(
        [1, 2, 3, 4].map(() =>
          openStore({ databaseUrl: postgresUrl(), dataDir: '/nonexistent', masterKey, pgSchema: schema }),
        ),
      );
      const org = await stores[0].createOrganisation({ name: 'shared' });
      expect(await stores[3].getOrganisation(org.id)).toEqual(org);
      await Promise.all(stores.map((store) => store.close()));
      const client = new pg.Client({ connectionString: postgresUrl() });
      await client.connect();
      const { rows } = await client.query(`select name from ${pg.escapeIdentifier(schema)}.store_migrations`);
      await client.end();
      expect(rows.map((row) => row.name)).toEqual([
        '0001_initial',
        '0002_jobs',
        '0003_log_hook_results',
        '0004_guardrails',
        '0005_prompts',
        '0006_rate_limit_policies',
        '0007_log_retention',
        '0009_files_batches',
      ]);
    } finally {
      await dropSchema(schema);
    }
  });
});

describeWithPostgres('store on PostgreSQL, two schemas in one database', () => {
  it('migrates a new schema while another one already holds the tables', async () => {
    const [first, second] = [freshSchemaName('store_first'), freshSchemaName('store_second')];
    const masterKey = randomBytes(32);
    const open = (pgSchema: string) =>
      openStore({ databaseUrl: postgresUrl(), dataDir: '/nonexistent', masterKey, pgSchema });
    try {
      const one = await open(first);
      const two = await open(second);
      const org = await two.createOrganisation({ name: 'second' });
      expect(await one.getOrganisation(org.id)).toBeUndefined();
      await Promise.all([one.close(), two.close()]);
    } finally {
      await Promise.all([dropSchema(first), dropSchema(second)]);
    }
  });
});
