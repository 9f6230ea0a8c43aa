/** Runs the in-code migrations. On PostgreSQL Kysely's migrator holds an advisory lock, so nodes
 * starting together apply each migration once. */
import { Migrator, type Kysely } from 'kysely';
import { GatewayError } from '../gateway/errors.js';
import { migrationProvider } from './migrations/index.js';

export const MIGRATION_TABLE = 'store_migrations';
export const MIGRATION_LOCK_TABLE = 'store_migration_lock';

export async function runMigrations<T>(db: Kysely<T>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new GatewayError('internal_error', `Store migration ${failed} failed`, { cause: error });
  }
}
