/**
 * A store starting in its schema while another schema of the same database is dropped (another tenant,
 * another test run): what its migrations ask the database (the tables of its own schema) cannot fail for
 * that. Kysely's own introspector listed every schema's tables and looked each schema up by name, and a
 * schema dropped meanwhile failed the query with "schema … does not exist", and so the store's start.
 */
import pg from 'pg';
import { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { TextRefusalPostgresDialect } from '../../src/store/postgres-text-refusal.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

describeWithPostgres("the store's introspection beside a schema being dropped", () => {
  it('lists its own schema, whatever another schema of the database is doing', async () => {
    const admin = new pg.Pool({ connectionString: postgresUrl(), max: 2 });
    const mine = freshSchemaName('introspected');
    await admin.query(`create schema ${mine}; create table ${mine}.kept (id serial primary key)`);
    const db = new Kysely<unknown>({
      dialect: new TextRefusalPostgresDialect({
        pool: new pg.Pool({ connectionString: postgresUrl(), max: 2, options: `-c search_path=${mine}` }),
      }),
    });
    try {
      for (let i = 0; i < 40; i++) {
        const other = freshSchemaName('dropped');
        await admin.query(
          `create schema ${other}; create table ${other}.a (id serial primary key, x text); create table ${other}.b (id serial primary key)`,
        );
        const [listed] = await Promise.allSettled([
          db.introspection.getTables({ withInternalKyselyTables: true }),
          admin.query(`drop schema ${other} cascade`),
        ]);
        expect(listed.status, listed.status === 'rejected' ? String(listed.reason) : '').toBe('fulfilled');
        if (listed.status === 'fulfilled') {
          expect(listed.value.map((table) => [table.schema, table.name])).toEqual([[mine, 'kept']]);
        }
      }
    } finally {
      await db.destroy();
      await admin.end();
      await dropSchema(mine);
    }
  }, 60_000);
});
