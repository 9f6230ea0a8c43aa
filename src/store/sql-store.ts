/**
 * The Store over Kysely, for SQLite and PostgreSQL: the repositories of `repositories/` composed into
 * one object, plus the store's life cycle. Every query on tenant data names the workspace, so a caller
 * holding workspace A's id can never read or change a row of workspace B.
 */
import { sql, type Kysely } from 'kysely';
import type { StoreKeys } from './crypto.js';
import { runMigrations } from './migrate.js';
import { createRepositories } from './repositories/index.js';
import type { Database } from './schema.js';
import { DEFAULT_READ_TIMEOUT_MS } from './read-bounds.js';
import type { SqliteLogReaders } from './sqlite-log-reader.js';
import type { SqliteLogThread } from './sqlite-log-thread.js';
import type { StoreChange, StoreChangeListener, Store, StoreKind } from './types.js';

export function createSqlStore(
  db: Kysely<Database>,
  kind: StoreKind,
  keys: StoreKeys,
  logThread?: SqliteLogThread,
  analyticsMetadataKeys: readonly string[] = [],
  /** Destroys the connections to the database server at once (connect.ts). */
  teardown: () => void = () => undefined,
  logReaders?: SqliteLogReaders,
  /** How long a log search or analytics query may run; SQLite's readers have it already. */
  readTimeoutMs: number = DEFAULT_READ_TIMEOUT_MS,
): Store {
  const listeners = new Set<StoreChangeListener>();
  const announce = (change: StoreChange) => {
    for (const listener of listeners) {
      try {
        listener(change);
      } catch (error) {
        // The change is committed whatever a listener does; the caller must still hear it succeeded.
        process.emitWarning(error instanceof Error ? error : String(error), 'StoreChangeListenerWarning');
      }
    }
  };

  return {
    ...createRepositories({
      db,
      kind,
      keys,
      logThread,
      logReaders,
      readTimeoutMs,
      analyticsMetadataKeys,
      changed: announce,
    }),
    kind,
    migrate: () => runMigrations(db, kind),
    prioritiseWrites() {
      logThread?.hold();
    },
    async close() {
      await Promise.all([logReaders?.logs.close(), logReaders?.analytics.close()]);
      await logThread?.close();
      await db.destroy();
    },
    destroy() {
      void logReaders?.logs.close();
      void logReaders?.analytics.close();
      logThread?.terminate();
      teardown();
      // SQLite's own connection, which `close` reaches only after the log thread's.
      db.destroy().catch(() => undefined);
    },
    async transaction(work) {
      const pending: StoreChange[] = [];
      const result = await db.transaction().execute((trx) =>
        work(
          createRepositories({
            db: trx,
            kind,
            keys,
            readTimeoutMs,
            analyticsMetadataKeys,
            changed: (change) => pending.push(change),
          }),
        ),
      );
      pending.forEach(announce);
      return result;
    },
    async serialized(name, work) {
      if (kind !== 'postgres') return work();
      // One connection holds the lock while `work` runs on the others: a lock of this schema only, as the
      // migrations' (migrate.ts) is, under a name of its own.
      const lock = sql`hashtext(current_schema() || ${`/${name}`})`;
      return db.connection().execute(async (connection) => {
        await sql`select pg_advisory_lock(${lock})`.execute(connection);
        try {
          return await work();
        } finally {
          await sql`select pg_advisory_unlock(${lock})`.execute(connection);
        }
      });
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
