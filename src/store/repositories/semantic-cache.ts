/**
 * The semantic cache's entries (docs/cache.md). Vectors are float32 in base64 text, so one column type
 * serves SQLite and PostgreSQL. Entries are not announced through `onChange`: the semantic cache
 * publishes its own additions and removals to the other nodes (gateway/cache/semantic/). On SQLite an
 * entry is inserted by the log thread, off the event loop, as log records are (sqlite-log-thread.ts).
 */
import type { Selectable } from 'kysely';
import { toNumber } from '../rows.js';
import type { SemanticCacheEntriesTable } from '../schema.js';
import type { SemanticCacheEntry, SemanticCacheRepository, SemanticCacheVector } from '../types.js';
import type { RepositoryContext } from './context.js';

export function encodeVector(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
}

export function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  // Copied into an aligned buffer of its own: a Buffer may sit at any offset of a shared pool.
  const vector = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(vector.buffer).set(bytes.subarray(0, vector.byteLength));
  return vector;
}

function toVector(row: Omit<Selectable<SemanticCacheEntriesTable>, 'answer'>): SemanticCacheVector {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    namespace: row.namespace,
    partition_key: row.partition_key,
    exact_key: row.exact_key,
    vector: decodeVector(row.vector),
    created_at_ms: toNumber(row.created_at_ms),
    expires_at_ms: toNumber(row.expires_at_ms),
  };
}

const VECTOR_COLUMNS = [
  'id',
  'workspace_id',
  'namespace',
  'partition_key',
  'exact_key',
  'vector',
  'created_at_ms',
  'expires_at_ms',
] as const;

/** The columns of an entry's row, in the order `entryValues` gives them. */
const ENTRY_COLUMNS = [...VECTOR_COLUMNS, 'answer'] as const;

function entryValues(entry: SemanticCacheEntry): Array<string | number> {
  return [
    entry.id,
    entry.workspace_id,
    entry.namespace,
    entry.partition_key,
    entry.exact_key,
    encodeVector(entry.vector),
    entry.created_at_ms,
    entry.expires_at_ms,
    entry.answer,
  ];
}

export function createSemanticCacheRepository({ db, logThread }: RepositoryContext): SemanticCacheRepository {
  return {
    async insertSemanticCacheEntry(entry) {
      if (logThread && !db.isTransaction) {
        await logThread.insert('semantic_cache_entries', ENTRY_COLUMNS, [entryValues(entry)]);
        return;
      }
      await db
        .insertInto('semantic_cache_entries')
        .values({ ...entry, vector: encodeVector(entry.vector) })
        .execute();
    },

    async getSemanticCacheEntry(workspace_id, id): Promise<SemanticCacheEntry | undefined> {
      const row = await db
        .selectFrom('semantic_cache_entries')
        .selectAll()
        .where('workspace_id', '=', workspace_id)
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? { ...toVector(row), answer: row.answer } : undefined;
    },

    async listSemanticCachePartition(workspace_id, partition_key, nowMs, limit) {
      let query = db
        .selectFrom('semantic_cache_entries')
        .select(VECTOR_COLUMNS)
        .where('workspace_id', '=', workspace_id)
        .where('partition_key', '=', partition_key)
        .where('expires_at_ms', '>', nowMs);
      if (limit === undefined) return (await query.orderBy('created_at_ms').execute()).map(toVector);
      query = query.orderBy('created_at_ms', 'desc').limit(limit);
      return (await query.execute()).map(toVector).reverse();
    },

    async listSemanticCacheIds(workspace_id, partition_key, nowMs) {
      const rows = await db
        .selectFrom('semantic_cache_entries')
        .select('id')
        .where('workspace_id', '=', workspace_id)
        .where('partition_key', '=', partition_key)
        .where('expires_at_ms', '>', nowMs)
        .execute();
      return rows.map((row) => row.id);
    },

    async getSemanticCacheVectors(workspace_id, ids) {
      if (ids.length === 0) return [];
      const rows = await db
        .selectFrom('semantic_cache_entries')
        .select(VECTOR_COLUMNS)
        .where('workspace_id', '=', workspace_id)
        .where('id', 'in', ids)
        .execute();
      return rows.map(toVector);
    },

    async deleteSemanticCacheEntry(workspace_id, id) {
      const row = await db
        .deleteFrom('semantic_cache_entries')
        .where('workspace_id', '=', workspace_id)
        .where('id', '=', id)
        .returning(['id', 'workspace_id', 'partition_key'])
        .executeTakeFirst();
      return row;
    },

    async deleteSemanticCacheNamespace(workspace_id, namespace) {
      return db
        .deleteFrom('semantic_cache_entries')
        .where('workspace_id', '=', workspace_id)
        .where('namespace', '=', namespace)
        .returning(['id', 'workspace_id', 'partition_key'])
        .execute();
    },

    async deleteSemanticCacheWorkspace(workspace_id) {
      return db
        .deleteFrom('semantic_cache_entries')
        .where('workspace_id', '=', workspace_id)
        .returning(['id', 'workspace_id', 'partition_key'])
        .execute();
    },

    async deleteExpiredSemanticCacheEntries(nowMs, limit) {
      const expired = db
        .selectFrom('semantic_cache_entries')
        .select('id')
        .where('expires_at_ms', '<=', nowMs)
        .limit(limit);
      const result = await db
        .deleteFrom('semantic_cache_entries')
        .where('id', 'in', expired)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
