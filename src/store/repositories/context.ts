/**
 * What every repository is built on: the database (or the transaction the repositories are bound to),
 * the dialect, the keys, and the few helpers they share.
 */
import type { Kysely, Selectable } from 'kysely';
import { GatewayError } from '../../core/errors.js';
import type { StoreKeys } from '../crypto.js';
import { isUniqueViolation } from '../db-errors.js';
import { toNumber } from '../rows.js';
import type { Database } from '../schema.js';
import type { SqliteLogReaders } from '../sqlite-log-reader.js';
import type { SqliteLogThread } from '../sqlite-log-thread.js';
import type { StoreChange, StoreKind } from '../types.js';

export interface RepositoryContext {
  /** The database, or the open transaction (`db.isTransaction`) every query must go through. */
  readonly db: Kysely<Database>;
  readonly kind: StoreKind;
  readonly keys: StoreKeys;
  /** SQLite only, outside transactions: log inserts go to a worker thread so they never stall the
   * event loop. */
  readonly logThread?: SqliteLogThread;
  /** SQLite only, outside transactions: the log's list and search reads, and analytics queries, each run
   * on a worker thread of their own, off the event loop (sqlite-log-reader.ts). */
  readonly logReaders?: SqliteLogReaders;
  /** How long a log search or analytics query may run (read-bounds.ts): SQLite's readers keep it
   * themselves, PostgreSQL as a statement timeout. */
  readonly readTimeoutMs: number;
  /** Metadata keys the log's analytics rollups group by (store/rollups.ts). */
  readonly analyticsMetadataKeys: readonly string[];
  /** Announces a change once it is committed (at once, or when the context's transaction commits). */
  readonly changed: (change: StoreChange) => void;
}

/** The announcer of one resource's changes: `announce('updated', workspaceId, id)`. */
export function announcerOf(
  changed: RepositoryContext['changed'],
  resource: StoreChange['resource'],
): (action: StoreChange['action'], workspace_id: string, id: string) => void {
  return (action, workspace_id, id) => changed({ resource, action, workspace_id, id });
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Runs `work` in a transaction: the context's own when it is bound to one, a new one otherwise. */
export function inTransaction<T>(
  db: Kysely<Database>,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/** An id match wins over a slug match, should someone choose another row's id as a slug. */
export function preferIdMatch<Row extends { id: string }>(rows: Row[], slugOrId: string): Row | undefined {
  return rows.find((row) => row.id === slugOrId) ?? rows[0];
}

/** Versioned documents named by slug or id within a workspace (credentials add a kind: credentials.ts). */
export type VersionedTable = 'configs' | 'guardrails' | 'prompts' | 'prompt_partials';

/** The live row of `table` in a workspace whose id, or else whose slug, is `slugOrId`. */
export async function findLiveRow<T extends VersionedTable>(
  db: Kysely<Database>,
  table: T,
  workspaceId: string,
  slugOrId: string,
): Promise<Selectable<Database[T]> | undefined> {
  const rows = await db
    .selectFrom(table as VersionedTable)
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('id', '=', slugOrId), eb('slug', '=', slugOrId)]))
    .limit(2)
    .execute();
  return preferIdMatch(rows, slugOrId) as Selectable<Database[T]> | undefined;
}

export async function assertWorkspaceOf(
  db: Kysely<Database>,
  organisationId: string,
  workspaceId: string,
): Promise<void> {
  const row = await db
    .selectFrom('workspaces')
    .select('id')
    .where('id', '=', workspaceId)
    .where('organisation_id', '=', organisationId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) {
    throw new GatewayError(
      'not_found',
      `Workspace ${workspaceId} does not exist in organisation ${organisationId}`,
    );
  }
}

/** `param`: the field whose value is taken (a slug, for every unique row there is). */
export async function insertOrConflict(
  insert: () => Promise<unknown>,
  message: string,
  param = 'slug',
): Promise<void> {
  try {
    await insert();
  } catch (error) {
    if (isUniqueViolation(error)) throw new GatewayError('conflict', message, { param, cause: error });
    throw error;
  }
}

/** Credentials and versioned documents stay as rows once deleted: logs keep naming them. */
export async function softDelete(
  db: Kysely<Database>,
  table: 'credentials' | VersionedTable,
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const result = await db
    .updateTable(table)
    .set({ deleted_at: nowSeconds() })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return toNumber(result.numUpdatedRows) > 0;
}

/** Rows that go when deleted (nothing names them afterwards); rows of theirs go with them (ON DELETE CASCADE). */
export async function deleteRow(
  db: Kysely<Database>,
  table: 'api_keys' | 'rate_limit_policies' | 'files' | 'responses',
  workspaceId: string,
  id: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom(table)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return toNumber(result.numDeletedRows) > 0;
}
