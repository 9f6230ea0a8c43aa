/**
 * What Kysely's migrator asks of the database, read from the store's own schema only. Kysely's PostgreSQL
 * introspector lists the tables of every schema of the database and calls functions that look each schema
 * up by name (`has_schema_privilege`, `pg_get_serial_sequence`): a schema another tenant (or another test
 * run) drops while that query runs fails it with "schema … does not exist", and the store that was starting
 * fails its migrations. The migrator only needs to know whether its bookkeeping tables exist in the store's
 * schema (`current_schema()`, as runMigrations names it), so only that schema's tables are listed, by
 * catalog joins alone.
 */
import { PostgresIntrospector, sql, type Kysely, type TableMetadata } from 'kysely';

export class SchemaScopedIntrospector extends PostgresIntrospector {
  constructor(private readonly db: Kysely<unknown>) {
    super(db);
  }

  override async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; kind: string }>`
      select c.relname as name, ns.nspname as schema, c.relkind as kind
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm', 'f')
      order by c.relname`.execute(this.db);
    return rows.map((row) => ({
      name: row.name,
      schema: row.schema,
      isView: row.kind === 'v' || row.kind === 'm',
      // The migrator reads names only.
      columns: [],
    }));
  }
}
