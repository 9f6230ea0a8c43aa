/**
 * A log search or analytics query on PostgreSQL, under the bound SQLite's readers keep (read-bounds.ts).
 * Without one a heavy query ran as long as the server let it, holding a pooled connection all along.
 * `statement_timeout` is set for the read's own transaction (`set_config(…, true)` is SET LOCAL), so the
 * connection keeps no bound once it is back in the pool; the server cancels the statement at the bound,
 * time spent waiting for a lock included, and the cancellation is answered with the readers' 408.
 */
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { readTimedOut } from '../read-bounds.js';
import type { Database } from '../schema.js';

/** SQLSTATE query_canceled: what a statement stopped by statement_timeout fails with. */
const QUERY_CANCELED = '57014';

export async function boundedPostgresRead<Row>(
  db: Kysely<Database>,
  query: CompiledQuery,
  timeoutMs: number,
): Promise<Row[]> {
  const bound = String(Math.max(1, Math.ceil(timeoutMs)));
  const run = async (trx: Kysely<Database>) => {
    await sql`select set_config('statement_timeout', ${bound}, true)`.execute(trx);
    return (await trx.executeQuery<Row>(query)).rows;
  };
  try {
    if (!db.isTransaction) return await db.transaction().execute(run);
    // A caller's transaction: bound for this statement only, the setting before it restored after (a
    // statement stopped aborts the transaction, which then restores nothing).
    const { rows } = await sql<{
      setting: string;
    }>`select current_setting('statement_timeout') as setting`.execute(db);
    try {
      return await run(db);
    } finally {
      await sql`select set_config('statement_timeout', ${rows[0]!.setting}, true)`
        .execute(db)
        .catch(() => undefined);
    }
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === QUERY_CANCELED) throw readTimedOut(timeoutMs, error);
    throw error;
  }
}
