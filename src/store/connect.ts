/**
 * Opens the database behind the store: a SQLite file under the data directory by default, or
 * PostgreSQL when a `postgres://` URL is given. Only connection set-up lives here.
 */
import { mkdirSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setImmediate, setTimeout } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  SqliteDialect,
  SqliteDriver,
  sql,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type SqliteDatabase,
  type SqliteDialectConfig,
} from 'kysely';
import { LRUCache } from 'lru-cache';
import { GatewayError } from '../core/errors.js';
import type { Database } from './schema.js';
import { TextRefusalPostgresDialect } from './postgres-text-refusal.js';

export const SQLITE_FILE = 'gateway.db';
/** How long a SQLite writer waits for another process's lock before failing. */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export interface Connection {
  db: Kysely<Database>;
  kind: 'sqlite' | 'postgres';
  /** SQLite: whether the file is in WAL mode, which lets the log reader threads read while others write. */
  wal?: boolean;
  /** SQLite: when the read running on this connection stops (sqlite-connection-reader.ts). */
  readStop?: ReadStop;
  /** Destroys the connections to the database server at once, waiting for no reply (a stop whose close of
   * `db` did not end: the server no longer answers). SQLite has none. */
  teardown(): void;
}

export interface ConnectOptions {
  databaseUrl?: string;
  dataDir: string;
  pgSchema?: string;
  /** SQLite: called when a query finds the file's write lock taken (the log thread holds it). */
  onSqliteBusy?: () => void;
}

export async function connect(options: ConnectOptions): Promise<Connection> {
  if (options.databaseUrl) return connectPostgres(options.databaseUrl, options.pgSchema);
  return {
    ...connectSqlite(options.dataDir, options.onSqliteBusy),
    kind: 'sqlite',
    teardown: () => undefined,
  };
}

/**
 * Asks for WAL mode and says whether SQLite gave it: it answers the mode in force, another one (`memory`
 * for an in-memory database, `delete` where the file system cannot share the WAL index) when it cannot.
 */
export function useWal(database: BetterSqlite3.Database): boolean {
  return database.pragma('journal_mode = WAL', { simple: true }) === 'wal';
}

/** The name of the SQLite function that lower-cases every letter (registered on each connection). */
export const UNICODE_LOWER = 'unicode_lower';

/**
 * The SQL function every log search and analytics query calls for each row it looks at, first among its
 * conditions (`where … and stop_point() and …`; it is true): the one moment SQLite, busy in its C code,
 * calls back into JavaScript, where the read can be stopped (sqlite-log-reader.ts, and on the main
 * connection sqlite-connection-reader.ts).
 */
export const STOP_POINT = 'stop_point';

/**
 * The main connection's stop point throws once `at` (performance.now()) has passed: the bound of the read
 * it runs. Infinity while no bounded read runs.
 */
export interface ReadStop {
  at: number;
}

/** What the main connection's stop point throws: the read passed its bound, or its request ended. */
export class ReadStopped extends Error {
  constructor() {
    super('The read was stopped');
    this.name = 'ReadStopped';
  }
}

function connectSqlite(
  dataDir: string,
  onBusy: (() => void) | undefined,
): { db: Kysely<Database>; wal: boolean; readStop: ReadStop } {
  mkdirSync(dataDir, { recursive: true });
  const database = new BetterSqlite3(join(dataDir, SQLITE_FILE));
  // WAL lets readers run while the log writer writes; NORMAL is durable across process crashes in
  // WAL mode and only risks the last commits on power loss, which is the right trade for logs.
  const wal = useWal(database);
  database.pragma('synchronous = NORMAL');
  // No busy handler: it would sleep on the event loop. A query that finds the write lock taken is tried
  // again asynchronously (RetryWhenBusy below), so requests in flight go on meanwhile.
  database.pragma('busy_timeout = 0');
  // A commit that takes the WAL past its limit copies it into the file and syncs both: up to tens of
  // milliseconds on the event loop. The log thread checkpoints instead (sqlite-log-thread.ts).
  database.pragma('wal_autocheckpoint = 0');
  database.pragma('foreign_keys = ON');
  // SQLite's own lower() folds ASCII letters only; searches that ignore case use this one, which folds
  // every letter as JavaScript (and PostgreSQL's lower()) does: "ÉQUIPE" is found by "équipe".
  database.function(UNICODE_LOWER, { deterministic: true }, (value: unknown) =>
    value === null || value === undefined ? null : String(value).toLowerCase(),
  );
  // Without WAL the log's searches and analytics queries run here, on the event loop: nothing can
  // interrupt the statement but its own call back, which checks the clock.
  const readStop: ReadStop = { at: Infinity };
  database.function(STOP_POINT, { deterministic: false }, () => {
    if (performance.now() >= readStop.at) throw new ReadStopped();
    return 1;
  });
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }, onBusy),
  });
  return { db, wal, readStop };
}

/** Distinct statements kept compiled; the store's queries are a few hundred shapes. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew, and better-sqlite3 compiles a statement on each `prepare` (a
 * parse and plan, tens of microseconds, on the event loop). The store's queries repeat (a batch line's
 * claim and settle, a key's lookup), so their compiled statements are kept and reused. Kysely runs one
 * query at a time on the connection, so a statement is never in use twice at once.
 */
function withStatementCache(database: BetterSqlite3.Database): SqliteDatabase {
  const statements = new LRUCache<string, BetterSqlite3.Statement>({ max: STATEMENT_CACHE_SIZE });
  return {
    close: () => database.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = database.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/**
 * Transactions on SQLite start with BEGIN IMMEDIATE, taking the write lock at once (waiting up to
 * SQLITE_BUSY_TIMEOUT_MS for it). A plain BEGIN reads first and upgrades to a writer at its first write;
 * if another connection — the log thread, or another Store on the file — committed in between, SQLite
 * cannot upgrade the stale snapshot and fails at once with SQLITE_BUSY_SNAPSHOT, without waiting.
 * That made a read-then-write transaction (a config update) fail now and then while logs were written.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  private readonly driverConfig: SqliteDialectConfig;

  constructor(
    config: SqliteDialectConfig,
    private readonly onBusy: (() => void) | undefined,
  ) {
    super(config);
    this.driverConfig = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.driverConfig, this.onBusy);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  private connection?: DatabaseConnection;

  constructor(
    config: SqliteDialectConfig,
    private readonly onBusy: (() => void) | undefined,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    this.connection ??= new RetryWhenBusy(connection, this.onBusy);
    return this.connection;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * SQLite has one writer at a time, and the log thread writes every few milliseconds. SQLite's own busy
 * handler waits by sleeping the calling thread — here the event loop, so every request in flight would
 * stop for each wait (a millisecond at least). Instead a query refused with SQLITE_BUSY is tried again
 * after yielding to the event loop, until SQLITE_BUSY_TIMEOUT_MS have passed. It is safe to try again:
 * a refused statement did nothing, and inside a transaction (BEGIN IMMEDIATE holds the write lock) no
 * statement is refused. Kysely's connection mutex keeps other queries waiting meanwhile, asynchronously.
 */
class RetryWhenBusy implements DatabaseConnection {
  constructor(
    private readonly connection: DatabaseConnection,
    private readonly onBusy: (() => void) | undefined,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    let deadline: number | undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.connection.executeQuery<R>(query);
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
        const now = performance.now();
        deadline ??= now + SQLITE_BUSY_TIMEOUT_MS;
        if (now >= deadline) throw error;
        if (attempt === 0) this.onBusy?.();
        // The first tries come back right after the event loop's pending work; then every millisecond.
        await (attempt < 3 ? setImmediate() : setTimeout(1));
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.connection.streamQuery<R>(query, chunkSize);
  }
}

async function connectPostgres(databaseUrl: string, pgSchema: string | undefined): Promise<Connection> {
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new GatewayError('internal_error', 'DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  if (pgSchema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(pgSchema)) {
    throw new GatewayError('internal_error', `Invalid PostgreSQL schema name: ${pgSchema}`);
  }
  // Loaded here, not at start: the embedded (SQLite) store never needs the PostgreSQL driver.
  const { default: pg } = await import('pg');
  // The pool's `end` waits for its connections' queries, and for those still being opened: a server that
  // no longer answers lets neither end. Their sockets are kept to be destroyed then.
  const sockets = new Set<Socket>();
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    stream: () => {
      const socket = new Socket();
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      return socket;
    },
  });
  // An idle pooled connection that the server drops emits 'error' on the pool; unhandled, that
  // would end the process. The pool discards the connection and the next query opens a new one.
  pool.on('error', () => undefined);
  // A connection in use that ends (the server gone, or torn down at a stop) fails its query, which its
  // caller hears; the client's own 'error' besides, with no listener while the pool has it out, would end
  // the process, the one the gateway is embedded in included.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const teardown = () => {
    for (const socket of sockets) socket.destroy();
  };
  const db = new Kysely<Database>({
    dialect: new TextRefusalPostgresDialect({
      pool,
      // Every connection resolves unqualified table names in the chosen schema only, so the store's
      // queries and the migrator's own tables need no schema prefix.
      onCreateConnection: pgSchema
        ? async (connection) => {
            await connection.executeQuery(CompiledQuery.raw(`set search_path to "${pgSchema}"`));
          }
        : undefined,
    }),
  });
  if (pgSchema) {
    try {
      await sql`create schema if not exists ${sql.id(pgSchema)}`.execute(db);
    } catch (error) {
      // Two nodes starting together can both try; the loser sees a duplicate and the schema exists.
      const code = (error as { code?: string }).code;
      if (code !== '23505' && code !== '42P06') {
        await db.destroy();
        throw error;
      }
    }
  }
  return { db, kind: 'postgres', teardown };
}
