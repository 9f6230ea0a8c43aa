/**
 * Entry point of the durable store. `openStore` connects (SQLite file under `dataDir`, or
 * PostgreSQL when `databaseUrl` is given), runs pending migrations and returns a ready Store.
 */
import { connect } from './connect.js';
import { deriveKeys } from './crypto.js';
import { SqlStore } from './sql-store.js';
import type { Store } from './types.js';

export interface OpenStoreOptions {
  /** `postgres://…`; without it the store is the SQLite file `<dataDir>/gateway.db`. */
  databaseUrl?: string;
  dataDir: string;
  /** 32 bytes; see `loadMasterKey`. */
  masterKey: Buffer;
  /** PostgreSQL schema holding every table (created if missing); the connection's default otherwise. */
  pgSchema?: string;
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const keys = deriveKeys(options.masterKey);
  const { db, kind } = await connect(options);
  const store = new SqlStore(db, kind, keys);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

export { loadMasterKey } from './crypto.js';
export { newId, newOrganisationId } from './ids.js';
export type * from './types.js';
