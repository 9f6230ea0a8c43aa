/**
 * Entry point of the durable store. `openStore` connects (SQLite file under `dataDir`, or
 * PostgreSQL when `databaseUrl` is given), runs pending migrations and returns a ready Store.
 */
import { join } from 'node:path';
import { connect, SQLITE_FILE } from './connect.js';
import { startSqliteConnectionReaders } from './sqlite-connection-reader.js';
import { startSqliteLogReaders, type SqliteLogReaders } from './sqlite-log-reader.js';
import { startSqliteLogThread, type SqliteLogThread } from './sqlite-log-thread.js';
import { deriveKeys } from './crypto.js';
import { runMigrations } from './migrate.js';
import { createSqlStore } from './sql-store.js';
import type { Store } from './types.js';

export interface OpenStoreOptions {
  /** `postgres://…`; without it the store is the SQLite file `<dataDir>/gateway.db`. */
  databaseUrl?: string;
  dataDir: string;
  /** 32 bytes; see `loadMasterKey`. */
  masterKey: Buffer;
  /** PostgreSQL schema holding every table (created if missing); the connection's default otherwise. */
  pgSchema?: string;
  /** Metadata keys the analytics rollups group by (GATEWAY_ANALYTICS_METADATA_KEYS). */
  analyticsMetadataKeys?: readonly string[];
  /** How long a log search or analytics query may wait and run before it is stopped (a 408); 10 s by
   * default (read-bounds.ts). */
  readTimeoutMs?: number;
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const keys = deriveKeys(options.masterKey);
  // A query of this connection that waits for the file's write lock raises the log thread's priority.
  let logThread: SqliteLogThread | undefined;
  const { db, kind, wal, readStop, teardown } = await connect({
    ...options,
    onSqliteBusy: () => logThread?.boost(),
  });
  try {
    await runMigrations(db, kind);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  // The log thread opens the file only once the migrations have created its table.
  let logReaders: SqliteLogReaders | undefined;
  if (kind === 'sqlite') {
    logThread = startSqliteLogThread(join(options.dataDir, SQLITE_FILE));
    const bounds = { timeoutMs: options.readTimeoutMs };
    // Without WAL a reader thread's shared lock during a long search would hold every write back: the
    // reads then run on the main connection, under the same bounds (sqlite-connection-reader.ts).
    if (wal) logReaders = startSqliteLogReaders(join(options.dataDir, SQLITE_FILE), bounds);
    else if (readStop) logReaders = startSqliteConnectionReaders(db, readStop, bounds);
  }
  return createSqlStore(
    db,
    kind,
    keys,
    logThread,
    options.analyticsMetadataKeys,
    teardown,
    logReaders,
    options.readTimeoutMs,
  );
}

export { loadMasterKey } from './crypto.js';
export { createLocalBlobStore } from './local-blob-store.js';
export type { BlobData, BlobStat, BlobStore, StoredBlob } from './blob-store.js';
export { newId, newOrganisationId } from './ids.js';
export type * from './types.js';
