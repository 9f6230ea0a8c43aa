/**
 * Log records: batch insert and the newest-first listing with keyset paging. Ordering is
 * (created_at_ms desc, id desc); ids are unique, so records with the same timestamp still have one
 * fixed order and a page boundary never skips or repeats a record.
 */
import { sql, type Insertable, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { AbortSignalLike } from '../../core/abort.js';
import { GatewayError } from '../../core/errors.js';
import { LOG_ROW_COLUMNS, toLogRecord, toLogRow, toLogValues, toNumber } from '../rows.js';
import type { Database, LogRollupsTable, LogsTable } from '../schema.js';
import { STOP_POINT, type SqliteLogReader } from '../sqlite-log-reader.js';
import {
  ROLLUP_COLUMNS,
  ROLLUP_KEY_COLUMNS,
  ROLLUP_SUM_COLUMNS,
  ROLLUP_UPSERT_SQL,
  rollupValues,
} from '../rollups.js';
import type { LogQuery, LogRecord, LogRepository, Page, StoreKind } from '../types.js';
import { inTransaction, type RepositoryContext } from './context.js';
import { metadataContains, metadataEquals } from './metadata-filter.js';
import { boundedPostgresRead } from './postgres-read.js';

/** SQLite allows 32,766 bound parameters per statement, PostgreSQL 65,535; stay under both. */
const MAX_PARAMETERS = 30_000;
const LOG_COLUMNS = 33;
const ROWS_PER_STATEMENT = Math.floor(MAX_PARAMETERS / LOG_COLUMNS);
const ROLLUPS_PER_STATEMENT = Math.floor(MAX_PARAMETERS / ROLLUP_COLUMNS.length);
const MAX_LOG_PAGE = 1_000;

export function createLogRepository({
  db,
  kind,
  logThread,
  logReaders,
  readTimeoutMs,
  analyticsMetadataKeys,
}: RepositoryContext): Omit<LogRepository, 'analytics'> {
  return {
    insertLogs(given) {
      const records = given.map(storableLogRecord);
      const rollups = rollupValues(records, analyticsMetadataKeys);
      if (logThread) {
        return logThread.insert('logs', LOG_ROW_COLUMNS, records.map(toLogValues), {
          sql: ROLLUP_UPSERT_SQL,
          rows: rollups,
        });
      }
      return insertLogs(db, records, rollups);
    },
    getLog: (workspace_id, id) => getLog(db, workspace_id, id),
    listLogs: (query, options) =>
      listLogs(db, kind, query, { reader: logReaders?.logs, timeoutMs: readTimeoutMs }, options?.signal),
    deleteLogsBefore: (cutoffMs, limit) => deleteLogsBefore(db, kind, cutoffMs, limit),
  };
}

const NUL = '\u0000';
const REPLACEMENT = '\uFFFD';

function withoutNul(text: string): string {
  return text.includes(NUL) ? text.replaceAll(NUL, REPLACEMENT) : text;
}

/** A UTF-16 surrogate without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Metadata text as its JSON may hold it: no U+0000, and no lone surrogate (`{"k":"\ud800"}` in
 * x-gateway-metadata parses to one), which JSON.stringify writes as an escape that PostgreSQL's jsonb
 * refuses, and every metadata filter and search reads the column as jsonb: one such record made them fail
 * for the whole workspace.
 */
function storableMetadataText(text: string): string {
  return withoutNul(text).replace(LONE_SURROGATE, REPLACEMENT);
}

/** The metadata with its keys and values as storableMetadataText makes them; itself when each is already
 * (nearly always): read in place, with no list of its entries or closure made for every record. */
function storableMetadata(metadata: Record<string, string>): Record<string, string> {
  for (const name in metadata) {
    if (storableMetadataText(name) !== name || storableMetadataText(metadata[name]) !== metadata[name]) {
      return Object.fromEntries(
        Object.entries(metadata).map(([key, text]) => [
          storableMetadataText(key),
          storableMetadataText(text),
        ]),
      );
    }
  }
  return metadata;
}

/** Fields stored as JSON text, where U+0000 is written as the escape `\u0000`, which both databases keep. */
const JSON_FIELDS = new Set(['request_body', 'response_body', 'hook_results']);

/**
 * The record with U+0000 replaced by U+FFFD in its text columns (a model name, an error message; metadata,
 * whose values the rollups keep as text), which PostgreSQL cannot hold, and with lone surrogates replaced
 * so in its metadata: a call is recorded, and its workspace's records searched, whatever its client or
 * provider sent, on both databases alike. The record itself when it holds none, as nearly every one does.
 */
function storableLogRecord(record: LogRecord): LogRecord {
  let copy: Record<string, unknown> | undefined;
  for (const key in record) {
    if (JSON_FIELDS.has(key)) continue;
    const value: unknown = record[key as keyof LogRecord];
    let storable: unknown = value;
    if (typeof value === 'string') {
      storable = withoutNul(value);
    } else if (key === 'metadata' && value !== null && typeof value === 'object') {
      storable = storableMetadata(value as Record<string, string>);
    }
    if (storable !== value) {
      copy ??= { ...record };
      copy[key] = storable;
    }
  }
  return (copy as LogRecord | undefined) ?? record;
}

/**
 * One bounded batch of retention. On PostgreSQL the rows are locked with SKIP LOCKED, so nodes sweeping at
 * the same time take different rows instead of waiting on each other.
 */
async function deleteLogsBefore(
  db: Kysely<Database>,
  kind: StoreKind,
  cutoffMs: number,
  limit: number,
): Promise<number> {
  let oldest = db
    .selectFrom('logs')
    .select('id')
    .where('created_at_ms', '<', cutoffMs)
    .orderBy('created_at_ms')
    .limit(Math.max(1, Math.floor(limit)));
  if (kind === 'postgres') oldest = oldest.forUpdate().skipLocked();
  const result = await db.deleteFrom('logs').where('id', 'in', oldest).executeTakeFirst();
  return toNumber(result.numDeletedRows);
}

async function insertLogs(db: Kysely<Database>, records: LogRecord[], rollups: unknown[][]): Promise<void> {
  if (records.length === 0) return;
  const rows = records.map(toLogRow);
  // One transaction, so a batch and its rollups are stored whole or not at all (the writer retries it).
  await inTransaction(db, async (trx) => {
    for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
      await trx
        .insertInto('logs')
        .values(rows.slice(start, start + ROWS_PER_STATEMENT))
        .execute();
    }
    // Rows in key order (rollupValues sorts them): nodes adding to the same rows lock them in one order.
    for (let start = 0; start < rollups.length; start += ROLLUPS_PER_STATEMENT) {
      await trx
        .insertInto('log_rollups')
        .values(rollups.slice(start, start + ROLLUPS_PER_STATEMENT).map(rollupRow))
        .onConflict((conflict) =>
          conflict
            .columns([...ROLLUP_KEY_COLUMNS])
            .doUpdateSet(
              Object.fromEntries(
                ROLLUP_SUM_COLUMNS.map((column) => [
                  column,
                  sql<number>`${sql.ref(`log_rollups.${column}`)} + ${sql.ref(`excluded.${column}`)}`,
                ]),
              ),
            ),
        )
        .execute();
    }
  });
}

function rollupRow(values: unknown[]): Insertable<LogRollupsTable> {
  return Object.fromEntries(
    ROLLUP_COLUMNS.map((column, index) => [column, values[index]]),
  ) as Insertable<LogRollupsTable>;
}

async function getLog(db: Kysely<Database>, workspaceId: string, id: string): Promise<LogRecord | undefined> {
  const row = await db
    .selectFrom('logs')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toLogRecord(row) : undefined;
}

/** Whether the query filters by workspace, time and cursor only. */
function byTimeAlone(query: LogQuery): boolean {
  return (
    query.search === undefined &&
    Object.keys(query.metadata ?? {}).length === 0 &&
    [query.trace_id, query.provider, query.model, query.status, query.api_key_id].every(
      (filter) => filter === undefined,
    )
  );
}

/**
 * A page of the workspace's records, newest first. On SQLite the page's query goes to the log reader (a
 * search scans every record of the workspace), unless it lists by time alone: its thread, or without WAL
 * the main connection under the same bound (sqlite-connection-reader.ts). On PostgreSQL it runs under
 * that bound as a statement timeout. The cursor's lookup, one indexed row, is read as it is.
 */
async function listLogs(
  db: Kysely<Database>,
  kind: StoreKind,
  query: LogQuery,
  { reader, timeoutMs }: { reader: SqliteLogReader | undefined; timeoutMs: number },
  signal: AbortSignalLike | undefined,
): Promise<Page<LogRecord>> {
  const limit = Math.min(Math.max(Math.floor(query.limit), 1), MAX_LOG_PAGE);
  let cursor: { createdAtMs: number; id: string } | undefined;
  if (query.after !== undefined) {
    const row = await db
      .selectFrom('logs')
      .select(['id', 'created_at_ms'])
      .where('workspace_id', '=', query.workspace_id)
      .where('id', '=', query.after)
      .executeTakeFirst();
    if (!row)
      throw new GatewayError('invalid_query', 'Unknown cursor: no log record with that id', {
        param: 'after',
      });
    cursor = { createdAtMs: toNumber(row.created_at_ms), id: row.id };
  }

  // A listing by time alone reads its page off the workspace's index in order, no other row: it runs on
  // the main connection, never behind a search on the reader thread. Any other filter may pass over
  // every record of the workspace.
  const bounded = !byTimeAlone(query);
  const onReader = bounded ? reader : undefined;
  const page = logPageQuery(db, kind, query, cursor, onReader !== undefined);
  let rows: Selectable<LogsTable>[];
  if (onReader) {
    const compiled = page.compile();
    rows = await onReader.all<Selectable<LogsTable>>(compiled.sql, compiled.parameters, { signal });
  } else if (bounded && kind === 'postgres') {
    rows = await boundedPostgresRead<Selectable<LogsTable>>(db, page.compile(), timeoutMs);
  } else {
    rows = await page.execute();
  }
  return { data: rows.slice(0, limit).map(toLogRecord), has_more: rows.length > limit };
}

/**
 * The page query of `listLogs`: the records after `cursor` (newest first), `query.limit + 1` of them.
 * `stoppable` (on the reader thread) calls STOP_POINT first for each record it looks at.
 */
export function logPageQuery(
  db: Kysely<Database>,
  kind: StoreKind,
  query: LogQuery,
  cursor: { createdAtMs: number; id: string } | undefined,
  stoppable: boolean,
) {
  const limit = Math.min(Math.max(Math.floor(query.limit), 1), MAX_LOG_PAGE);
  let builder = db.selectFrom('logs').selectAll().where('workspace_id', '=', query.workspace_id);
  // First of the conditions on a record, so a stopped read stops before its next record's search.
  if (stoppable) builder = builder.where(sql<SqlBool>`${sql.raw(STOP_POINT)}()`);
  if (query.trace_id !== undefined) builder = builder.where('trace_id', '=', query.trace_id);
  if (query.provider !== undefined) builder = builder.where('provider', '=', query.provider);
  if (query.model !== undefined) builder = builder.where('model', '=', query.model);
  if (query.status !== undefined) builder = builder.where('status', '=', query.status);
  if (query.api_key_id !== undefined) builder = builder.where('api_key_id', '=', query.api_key_id);
  if (query.from_ms !== undefined) builder = builder.where('created_at_ms', '>=', query.from_ms);
  // A cursor at or before to_ms implies its bound: given both, SQLite took the bound for the index's
  // range and passed over every record between to_ms and the cursor.
  if (query.to_ms !== undefined && !(cursor && cursor.createdAtMs <= query.to_ms))
    builder = builder.where('created_at_ms', '<=', query.to_ms);
  for (const [key, value] of Object.entries(query.metadata ?? {})) {
    builder = builder.where(metadataEquals(kind, 'logs.metadata', key, value));
  }
  if (query.search !== undefined)
    builder = builder.where(metadataContains(kind, 'logs.metadata', query.search));
  if (cursor) {
    const { createdAtMs, id } = cursor;
    // The row value is a range of the index on both databases (the page starts at the cursor); the two
    // conditions' `or` had the listing pass over every newer record first.
    builder = builder.where((eb) => eb(eb.refTuple('created_at_ms', 'id'), '<', eb.tuple(createdAtMs, id)));
  }
  const page = builder
    .orderBy('created_at_ms', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1);
  return page;
}
