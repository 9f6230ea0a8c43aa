/**
 * PostgreSQL cannot hold U+0000 in text: a value holding it is refused (SQLSTATE 22021, or 22P05 in JSON)
 * whatever the query. The value comes from a client (a name, a filename, a custom_id), so the refusal is
 * the client's 400, not the store's 500: every query's error passes through here, once, rather than each
 * route checking each string it hands over. (SQLite keeps such text as it is.)
 */
import {
  PostgresDialect,
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Kysely,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { GatewayError } from '../core/errors.js';
import { SchemaScopedIntrospector } from './postgres-introspector.js';

const NUL_REFUSED = new Set(['22021', '22P05']);

type CompileQuery = QueryCompiler['compileQuery'];

function mapped(error: unknown): unknown {
  if (!NUL_REFUSED.has((error as { code?: string } | null)?.code ?? '')) return error;
  return new GatewayError('invalid_body', 'A value holds U+0000, which the store cannot keep', {
    cause: error,
  });
}

class RefusalConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(query);
    } catch (error) {
      throw mapped(error);
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/** The driver's own methods get its own connection back; queries go through RefusalConnection. */
class RefusalDriver implements Driver {
  private readonly wrappers = new WeakMap<DatabaseConnection, RefusalConnection>();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.wrappers.get(connection);
    if (!wrapper) {
      wrapper = new RefusalConnection(connection);
      this.wrappers.set(connection, wrapper);
    }
    return wrapper;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(innerOf(connection), settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(innerOf(connection));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(innerOf(connection));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: CompileQuery): Promise<void> {
    await this.inner.savepoint?.(innerOf(connection), name, compile);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: CompileQuery,
  ): Promise<void> {
    await this.inner.rollbackToSavepoint?.(innerOf(connection), name, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: CompileQuery): Promise<void> {
    await this.inner.releaseSavepoint?.(innerOf(connection), name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(innerOf(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

function innerOf(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof RefusalConnection ? connection.inner : connection;
}

/**
 * Kysely's PostgreSQL dialect, with U+0000 in a value refused as the client's error, and the store's own
 * schema the only one introspected (postgres-introspector.ts).
 */
export class TextRefusalPostgresDialect extends PostgresDialect {
  override createDriver(): Driver {
    return new RefusalDriver(super.createDriver());
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SchemaScopedIntrospector(db);
  }
}
