/**
 * The Store over Kysely, for SQLite and PostgreSQL: the repositories of `repositories/` composed into
 * one object, plus the store's life cycle. Every query on tenant data names the workspace, so a caller
 * holding workspace A's id can never read or change a row of workspace B.
 */
import type { Kysely } from 'kysely';
import type { StoreKeys } from './crypto.js';
import { runMigrations } from './migrate.js';
import { createRepositories } from './repositories/index.js';
import type { Database } from './schema.js';
import type { SqliteLogThread } from './sqlite-log-thread.js';
import type { Store, StoreKind } from './types.js';

export function createSqlStore(
  db: Kysely<Database>,
  kind: StoreKind,
  keys: StoreKeys,
  logThread?: SqliteLogThread,
): Store {
  return {
    ...createRepositories({ db, kind, keys, logThread }),
    kind,
    migrate: () => runMigrations(db, kind),
    async close() {
      await logThread?.close();
      await db.destroy();
    },
    transaction(work) {
      return db.transaction().execute((trx) => work(createRepositories({ db: trx, kind, keys })));
    },
  };
}
