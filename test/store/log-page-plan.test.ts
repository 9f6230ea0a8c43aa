/**
 * A page after a cursor starts at the cursor on the workspace's index, on both databases: the row value
 * `(created_at_ms, id) < (?, ?)` is the index's range, so the page reads no record newer than the cursor.
 * A bound on time alone (`created_at_ms <= to_ms`) or the same cursor written as an `or` of two conditions
 * was a range that started at `to_ms`, or at the newest record, and passed over every record until the
 * cursor. Told by the plans, not by timing.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQLITE_FILE } from '../../src/store/connect.js';
import { openStore } from '../../src/store/index.js';
import { logPageQuery } from '../../src/store/repositories/logs.js';
import type { Database as Schema } from '../../src/store/schema.js';
import { STOP_POINT } from '../../src/store/sqlite-log-reader.js';
import type { LogQuery } from '../../src/store/types.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

const cursor = { createdAtMs: 5_000, id: 'log_5000' };
/** A page of a range whose end is after the cursor (the cursor's page of such a listing), and one without. */
const queries: [string, LogQuery][] = [
  ['to_ms after the cursor', { workspace_id: 'ws', limit: 50, to_ms: 9_000 }],
  ['to_ms and from_ms', { workspace_id: 'ws', limit: 50, from_ms: 10, to_ms: 9_000 }],
  ['no bound', { workspace_id: 'ws', limit: 50 }],
];

describe('on SQLite', () => {
  let file: Database.Database;
  let db: Kysely<Schema>;

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'log-page-plan-'));
    await (await openStore({ dataDir, masterKey: randomBytes(32) })).close();
    file = new Database(join(dataDir, SQLITE_FILE));
    // The reader thread's call for each record (sqlite-log-reader.ts).
    file.function(STOP_POINT, () => 1);
    db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: file }) });
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it.each(queries)('starts the page at the cursor on the index (%s)', (_name, query) => {
    for (const stoppable of [false, true]) {
      const compiled = logPageQuery(db, 'sqlite', query, cursor, stoppable).compile();
      const plan = file
        .prepare(`explain query plan ${compiled.sql}`)
        .all(...(compiled.parameters as unknown[])) as { detail: string }[];
      const detail = plan.map((step) => step.detail).join('\n');
      expect(detail).toMatch(
        /SEARCH logs USING INDEX logs_workspace_created_idx \(workspace_id=\? AND (created_at_ms>\? AND )?\(created_at_ms,id\)<\(\?,\?\)\)/,
      );
    }
  });

  it('keeps the bound of to_ms before the cursor', () => {
    const query = { workspace_id: 'ws', limit: 50, to_ms: 4_000 };
    const compiled = logPageQuery(db, 'sqlite', query, cursor, false).compile();
    expect(compiled.parameters).toContain(4_000);
  });
});

describeWithPostgres('on PostgreSQL', () => {
  const schema = freshSchemaName('log_page_plan');
  let client: pg.Client;
  let db: Kysely<Schema>;

  beforeAll(async () => {
    await (
      await openStore({
        databaseUrl: postgresUrl(),
        dataDir: '/nonexistent',
        masterKey: randomBytes(32),
        pgSchema: schema,
      })
    ).close();
    client = new pg.Client({ connectionString: postgresUrl() });
    await client.connect();
    await client.query(`set search_path to "${schema}"`);
    // The table is empty: the plan the index would give, not the sequential scan of nothing.
    await client.query('set enable_seqscan = off');
    // Compiles only.
    db = new Kysely<Schema>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl(), max: 1 }) }),
    });
  });
  afterAll(async () => {
    await db?.destroy();
    await client?.end();
    await dropSchema(schema);
  });

  it.each(queries)('starts the page at the cursor on the index (%s)', async (_name, query) => {
    const compiled = logPageQuery(db, 'postgres', query, cursor, false).compile();
    const plan = await client.query<{ 'QUERY PLAN': string }>(
      `explain ${compiled.sql}`,
      compiled.parameters as unknown[],
    );
    const lines = plan.rows.map((row) => row['QUERY PLAN']);
    const condition = lines.find((line) => line.includes('Index Cond'));
    expect(condition, lines.join('\n')).toMatch(/ROW\(created_at_ms, id\) < ROW\(/);
  });
});
