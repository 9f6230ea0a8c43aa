/**
 * A log search or analytics query on PostgreSQL, under the bound SQLite's readers keep (read-bounds.ts).
 * Without one a heavy query ran as long as the server let it, holding a pooled connection all along.
 * `statement_timeout` is set for the read's own transaction (`set_config(…, true)` is SET LOCAL), so the
 * connection keeps no bound once it is back in the pool; the server cancels the statement at the bound,
 * time spent waiting for a lock included, and the cancellation is answered with the readers' 408.
 *
 * The bound only ever tightens: a shorter statement_timeout already in force (the operator's, set for the
 * role, the database or in the URL's `options`) is kept, and 0 there means no limit of its own.
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
  const bound = Math.max(1, Math.ceil(timeoutMs));
  /** The timeout in force for the read, in milliseconds: the shorter of the bound and the server's. */
  let inForce = bound;
  const run = async (trx: Kysely<Database>) => {
    // pg_settings gives the setting in milliseconds, whatever unit it was written with.
    const { rows } = await sql<{ bound: string }>`select set_config('statement_timeout', s.bound::text, true),
        s.bound::text as bound
      from (select case when setting::bigint > 0 and setting::bigint < ${bound}::bigint then setting::bigint
          else ${bound}::bigint end as bound
        from pg_settings where name = 'statement_timeout') s`.execute(trx);
    inForce = Number(rows[0]?.bound ?? bound);
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
    if ((error as { code?: unknown } | null)?.code === QUERY_CANCELED) throw readTimedOut(inForce, error);
    throw error;
  }
}
