/**
 * Opens the database behind the store: a SQLite file under the data directory by default, or
 * PostgreSQL when a `postgres://` URL is given. Only connection set-up lives here.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  SqliteDriver,
  sql,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  type SqliteDialectConfig,
} from 'kysely';
import { LRUCache } from 'lru-cache';
import { GatewayError } from '../core/errors.js';
import type { Database } from './schema.js';

export const SQLITE_FILE = 'gateway.db';
/** How long a SQLite writer waits for another process's lock before failing. */
const SQLITE_BUSY_TIMEOUT_MS = 5_000;

export interface Connection {
  db: Kysely<Database>;
  kind: 'sqlite' | 'postgres';
}

export interface ConnectOptions {
  databaseUrl?: string;
  dataDir: string;
  pgSchema?: string;
}

export async function connect(options: ConnectOptions): Promise<Connection> {
  if (options.databaseUrl) return connectPostgres(options.databaseUrl, options.pgSchema);
  return { db: connectSqlite(options.dataDir), kind: 'sqlite' };
}

function connectSqlite(dataDir: string): Kysely<Database> {
  mkdirSync(dataDir, { recursive: true });
  const database = new BetterSqlite3(join(dataDir, SQLITE_FILE));
  // WAL lets readers run while the log writer writes; NORMAL is durable across process crashes in
  // WAL mode and only risks the last commits on power loss, which is the right trade for logs.
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  database.pragma('foreign_keys = ON');
  return new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }),
  });
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
 * busy_timeout for it). A plain BEGIN reads first and upgrades to a writer at its first write; if
 * another connection — the log thread, or another Store on the file — committed in between, SQLite
 * cannot upgrade the stale snapshot and fails at once with SQLITE_BUSY_SNAPSHOT, without waiting.
 * That made a read-then-write transaction (a config update) fail now and then while logs were written.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  private readonly driverConfig: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.driverConfig = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.driverConfig);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
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
  const pool = new pg.Pool({ connectionString: databaseUrl });
  // An idle pooled connection that the server drops emits 'error' on the pool; unhandled, that
  // would end the process. The pool discards the connection and the next query opens a new one.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
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
  return { db, kind: 'postgres' };
}
