/** Runs the in-code migrations. On PostgreSQL the whole run holds a session advisory lock, so nodes
 * starting together apply each migration once: Kysely's own lock only covers the migrations, not the
 * creation of its bookkeeping tables, which races when several nodes start at the same moment. */
import { Migrator, sql, type Kysely } from 'kysely';
import { GatewayError } from '../core/errors.js';
import { migrationProvider } from './migrations/index.js';

export const MIGRATION_TABLE = 'store_migrations';
export const MIGRATION_LOCK_TABLE = 'store_migration_lock';

async function migrate<T>(db: Kysely<T>, schema?: string): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    migrationTableSchema: schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new GatewayError('internal_error', `Store migration ${failed} failed`, { cause: error });
  }
}

export async function runMigrations<T>(db: Kysely<T>, kind: 'sqlite' | 'postgres'): Promise<void> {
  if (kind === 'sqlite') return migrate(db);
  await db.connection().execute(async (connection) => {
    // One lock per schema: test runs and tenants in other schemas do not wait for each other.
    await sql`select pg_advisory_lock(hashtext(current_schema()))`.execute(connection);
    try {
      // Named, because without a schema Kysely's migrator takes a bookkeeping table found in any
      // schema of the database for its own: a store in a new schema next to another one's would then
      // skip creating its lock table and fail.
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(connection);
      await migrate(connection, rows[0].schema);
    } finally {
      await sql`select pg_advisory_unlock(hashtext(current_schema()))`.execute(connection);
    }
  });
}
