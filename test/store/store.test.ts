/** The store contract against an SQLite file in a temp dir and against the real PostgreSQL. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { describe } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { storeContract } from './store-contract.js';

describe('store on SQLite', () => {
  storeContract(async () => {
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
  });
});

describeWithPostgres('store on PostgreSQL', () => {
  storeContract(async () => {
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
  });
});
