/**
 * Managed batches and their lines. A line is leased like a job (jobs.ts): PostgreSQL claims in one
 * statement over rows locked FOR UPDATE SKIP LOCKED, so nodes sharing a batch pass over each other's
 * lines; SQLite claims in one UPDATE under the file's write lock. A line's result is written only while
 * its claimer still holds the lease, so a line is settled once, by one node. The call a batch runs under
 * (its provider headers may hold a provider key) is encrypted at rest, bound to the batch's id.
 */
import { sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely';
import { decryptSecret, encryptSecret } from '../crypto.js';
import type {
  BatchCall,
  BatchLineError,
  BatchPatch,
  BatchRepository,
  BatchStatus,
  BatchUsage,
  ClaimedLine,
  SettledLine,
  StoredBatch,
} from '../file-batch-types.js';
import { newId } from '../ids.js';
import { toNumber, toNumberOrNull } from '../rows.js';
import type { BatchesTable, Database, Int8 } from '../schema.js';
import { inTransaction, type RepositoryContext } from './context.js';

function parsed<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

function toBatch(row: Selectable<BatchesTable>): StoredBatch {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    endpoint: row.endpoint,
    input_file_id: row.input_file_id,
    completion_window: row.completion_window,
    status: row.status as BatchStatus,
    metadata: parsed<Record<string, string>>(row.metadata),
    errors: parsed<BatchLineError[]>(row.errors),
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    created_at: toNumber(row.created_at),
    in_progress_at: toNumberOrNull(row.in_progress_at),
    expires_at: toNumberOrNull(row.expires_at),
    finalizing_at: toNumberOrNull(row.finalizing_at),
    completed_at: toNumberOrNull(row.completed_at),
    failed_at: toNumberOrNull(row.failed_at),
    expired_at: toNumberOrNull(row.expired_at),
    cancelling_at: toNumberOrNull(row.cancelling_at),
    cancelled_at: toNumberOrNull(row.cancelled_at),
    total: toNumber(row.total),
    completed: toNumber(row.completed),
    failed: toNumber(row.failed),
    usage: parsed<BatchUsage>(row.usage) ?? usageOfSums(row),
    cost: toNumber(row.unpriced) === 0 ? Number(row.cost) : null,
    concurrency: toNumberOrNull(row.concurrency),
    finalize_queued: toNumber(row.finalize_queued) !== 0,
    output_expires_after: toNumberOrNull(row.output_expires_after),
  };
}

function usageOfSums(
  sums: Record<'input_tokens' | 'output_tokens' | 'cached_tokens' | 'reasoning_tokens', Int8 | null>,
): BatchUsage {
  const input = toNumberOrNull(sums.input_tokens) ?? 0;
  const output = toNumberOrNull(sums.output_tokens) ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: toNumberOrNull(sums.cached_tokens) ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: toNumberOrNull(sums.reasoning_tokens) ?? 0 },
    total_tokens: input + output,
  };
}

/** The sums a batch's row keeps of its settled lines, before any has settled. */
const NO_SUMS = {
  input_tokens: 0,
  output_tokens: 0,
  cached_tokens: 0,
  reasoning_tokens: 0,
  cost: 0,
  unpriced: 0,
} as const;

/** What settled lines add to their batch's row. */
function progressOf(settled: readonly SettledLine[]) {
  const add = { completed: 0, failed: 0, ...NO_SUMS } as Record<
    keyof typeof NO_SUMS | 'completed' | 'failed',
    number
  >;
  for (const line of settled) {
    if (line.state === 'succeeded') add.completed += 1;
    else add.failed += 1;
    add.input_tokens += line.input_tokens ?? 0;
    add.output_tokens += line.output_tokens ?? 0;
    add.cached_tokens += line.cached_tokens ?? 0;
    add.reasoning_tokens += line.reasoning_tokens ?? 0;
    if (line.cost === null) add.unpriced += 1;
    else add.cost += line.cost;
  }
  return add;
}

function toRowPatch(patch: BatchPatch): Partial<BatchesTable> {
  const { errors, usage, finalize_queued, ...rest } = patch;
  return {
    ...rest,
    ...(errors !== undefined && { errors: errors === null ? null : JSON.stringify(errors) }),
    ...(usage !== undefined && { usage: usage === null ? null : JSON.stringify(usage) }),
    ...(finalize_queued !== undefined && { finalize_queued: finalize_queued ? 1 : 0 }),
  };
}

/** Lines inserted per statement (SQLite binds at most 32,766 parameters; each line binds 6). */
const INSERT_CHUNK = 500;

export function createBatchRepository({ db, kind, keys }: RepositoryContext): BatchRepository {
  /** A batch cancelled (or finalized) on another node stops handing out lines at once. */
  function runningBatch(eb: ExpressionBuilder<Database, 'batch_lines'>, batchId: string) {
    return eb
      .selectFrom('batches')
      .select('batches.id')
      .where('batches.id', '=', batchId)
      .where('batches.status', '=', 'in_progress')
      .where('batches.finalize_queued', '=', 0);
  }

  /** Due lines of one state, in input order: `pending` ones whose wait is over, or `running` ones whose
   * lease ran out. One state per query, so the (batch_id, state, line) index serves it and stops at
   * `limit` instead of visiting every line of the batch. */
  function dueLines(
    trx: Kysely<Database>,
    batchId: string,
    state: 'pending' | 'running',
    now: number,
    limit: number,
  ) {
    return trx
      .selectFrom('batch_lines')
      .select(['batch_id', 'line'])
      .where('batch_id', '=', batchId)
      .where('state', '=', state)
      .where(state === 'pending' ? 'not_before_ms' : 'lease_expires_at_ms', '<=', now)
      .where((eb) => eb.exists(runningBatch(eb, batchId)))
      .orderBy('line')
      .limit(limit);
  }

  /**
   * SQLite: the due lines are found first, then leased if still in that state. One UPDATE whose
   * `line IN (subquery)` reads the table it writes cost SQLite half a millisecond even when it found
   * nothing; the search alone is a few tens of microseconds. The update checks again what the search
   * did, so a line another claimer took in between is passed over and a batch cancelled in between
   * hands out nothing.
   */
  async function claimSqlite(
    batchId: string,
    owner: string,
    leaseMs: number,
    now: number,
    state: 'pending' | 'running',
    limit: number,
  ) {
    const due = await dueLines(db, batchId, state, now, limit).execute();
    if (due.length === 0) return [];
    return db
      .updateTable('batch_lines')
      .set(leaseTo(owner, leaseMs, now))
      .where('batch_id', '=', batchId)
      .where(
        'line',
        'in',
        due.map((row) => row.line),
      )
      .where('state', '=', state)
      .where(state === 'pending' ? 'not_before_ms' : 'lease_expires_at_ms', '<=', now)
      .where((eb) => eb.exists(runningBatch(eb, batchId)))
      .returning(['batch_id', 'line', 'custom_id', 'body'])
      .execute();
  }

  /**
   * A line's result, written while `owner` still holds the line (the same conditions as `whileLeased`).
   * Spelt as one SQL text rather than built with the query builder: it runs once per line, and building
   * and compiling the update took more of the event loop than SQLite took to run it.
   */
  function settleLine(batchId: string, line: number, owner: string, result: SettledLine) {
    return sql`update batch_lines set state = ${result.state}, result = ${result.result},
      input_tokens = ${result.input_tokens}, output_tokens = ${result.output_tokens},
      cached_tokens = ${result.cached_tokens}, reasoning_tokens = ${result.reasoning_tokens},
      cost = ${result.cost}, lease_owner = null, lease_expires_at_ms = null
      where batch_id = ${batchId} and line = ${line} and state = 'running' and lease_owner = ${owner}`;
  }

  /** Adds settled lines' counts, usage and cost to the batch's row; SQL text for the reason above. */
  function addProgress(batchId: string, add: ReturnType<typeof progressOf>) {
    return sql`update batches set completed = completed + ${add.completed},
      failed = failed + ${add.failed}, input_tokens = input_tokens + ${add.input_tokens},
      output_tokens = output_tokens + ${add.output_tokens},
      cached_tokens = cached_tokens + ${add.cached_tokens},
      reasoning_tokens = reasoning_tokens + ${add.reasoning_tokens}, cost = cost + ${add.cost},
      unpriced = unpriced + ${add.unpriced} where id = ${batchId}`;
  }

  function leaseTo(owner: string, leaseMs: number, now: number) {
    return { state: 'running', lease_owner: owner, lease_expires_at_ms: now + Math.ceil(leaseMs) } as const;
  }

  function whileLeased(batchId: string, line: number, owner: string, trx: Kysely<Database> = db) {
    return trx
      .updateTable('batch_lines')
      .where('batch_id', '=', batchId)
      .where('line', '=', line)
      .where('state', '=', 'running')
      .where('lease_owner', '=', owner);
  }

  return {
    async create(input) {
      const now = Date.now();
      const id = newId('batch', now);
      const row: BatchesTable = {
        id,
        workspace_id: input.workspace_id,
        endpoint: input.endpoint,
        input_file_id: input.input_file_id,
        completion_window: input.completion_window,
        status: 'validating',
        metadata: input.metadata === null ? null : JSON.stringify(input.metadata),
        errors: null,
        output_file_id: null,
        error_file_id: null,
        created_at: Math.floor(now / 1000),
        in_progress_at: null,
        expires_at: input.expires_at,
        finalizing_at: null,
        completed_at: null,
        failed_at: null,
        expired_at: null,
        cancelling_at: null,
        cancelled_at: null,
        total: 0,
        completed: 0,
        failed: 0,
        usage: null,
        concurrency: input.concurrency,
        call_encrypted: encryptSecret(keys.encryption, JSON.stringify(input.call), id),
        finalize_queued: 0,
        output_expires_after: input.output_expires_after ?? null,
        ...NO_SUMS,
      };
      await db.insertInto('batches').values(row).execute();
      return toBatch(row);
    },

    async get(workspaceId, id) {
      const row = await db
        .selectFrom('batches')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? toBatch(row) : undefined;
    },

    async getById(id) {
      const row = await db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toBatch(row) : undefined;
    },

    async list(workspaceId, query) {
      let builder = db.selectFrom('batches').selectAll().where('workspace_id', '=', workspaceId);
      if (query.after !== undefined) builder = builder.where('id', '<', query.after);
      const rows = await builder
        .orderBy('id', 'desc')
        .limit(query.limit + 1)
        .execute();
      return { data: rows.slice(0, query.limit).map(toBatch), has_more: rows.length > query.limit };
    },

    async withStatus(statuses) {
      const rows = await db
        .selectFrom('batches')
        .selectAll()
        .where('status', 'in', statuses)
        .orderBy('id')
        .execute();
      return rows.map(toBatch);
    },

    async callOf(id) {
      const row = await db
        .selectFrom('batches')
        .select('call_encrypted')
        .where('id', '=', id)
        .executeTakeFirst();
      return row
        ? (JSON.parse(decryptSecret(keys.encryption, row.call_encrypted, id)) as BatchCall)
        : undefined;
    },

    async update(id, patch, from) {
      let builder = db.updateTable('batches').set(toRowPatch(patch)).where('id', '=', id);
      if (from !== undefined) builder = builder.where('status', 'in', from);
      const row = await builder.returningAll().executeTakeFirst();
      return row ? toBatch(row) : undefined;
    },

    async markFinalizeQueued(id, from, patch) {
      const result = await db
        .updateTable('batches')
        .set({ ...toRowPatch(patch), finalize_queued: 1 })
        .where('id', '=', id)
        .where('status', '=', from)
        .where('finalize_queued', '=', 0)
        .executeTakeFirst();
      return toNumber(result.numUpdatedRows) > 0;
    },

    async insertLines(batchId, lines) {
      for (let start = 0; start < lines.length; start += INSERT_CHUNK) {
        const values = lines.slice(start, start + INSERT_CHUNK).map((line) => ({
          batch_id: batchId,
          line: line.line,
          custom_id: line.custom_id,
          body: line.body,
          state: 'pending',
          not_before_ms: 0,
        }));
        await db
          .insertInto('batch_lines')
          .values(values)
          .onConflict((oc) => oc.columns(['batch_id', 'line']).doNothing())
          .execute();
      }
    },

    async deleteLines(batchId) {
      await db.deleteFrom('batch_lines').where('batch_id', '=', batchId).execute();
    },

    async claimLines(batchId, owner, leaseMs, limit) {
      const now = Date.now();
      const claimed: ClaimedLine[] = [];
      // Lines a dead node left first (they are older work), then new ones.
      for (const state of ['running', 'pending'] as const) {
        const room = limit - claimed.length;
        if (room <= 0) break;
        const rows =
          kind === 'postgres'
            ? await db
                .with('due', () => dueLines(db, batchId, state, now, room).forUpdate().skipLocked())
                .updateTable('batch_lines')
                .from('due')
                .set(leaseTo(owner, leaseMs, now))
                .whereRef('batch_lines.batch_id', '=', 'due.batch_id')
                .whereRef('batch_lines.line', '=', 'due.line')
                .returning([
                  'batch_lines.batch_id',
                  'batch_lines.line',
                  'batch_lines.custom_id',
                  'batch_lines.body',
                ])
                .execute()
            : await claimSqlite(batchId, owner, leaseMs, now, state, room);
        claimed.push(...rows.map((row) => ({ ...row, line: toNumber(row.line) })));
      }
      return claimed.sort((a, b) => a.line - b.line);
    },

    async heartbeatLines(batchId, lines, owner, leaseMs) {
      if (lines.length === 0) return;
      await db
        .updateTable('batch_lines')
        .set({ lease_expires_at_ms: Date.now() + Math.ceil(leaseMs) })
        .where('batch_id', '=', batchId)
        .where('line', 'in', lines)
        .where('lease_owner', '=', owner)
        .where('state', '=', 'running')
        .execute();
    },

    async settleLines(batchId, owner, results) {
      return inTransaction(db, async (trx) => {
        const committed = new Set<number>();
        const settled: SettledLine[] = [];
        for (const { line, settled: result } of results) {
          const outcome = await settleLine(batchId, line, owner, result).execute(trx);
          if (toNumber(outcome.numAffectedRows ?? 0) === 0) continue;
          committed.add(line);
          settled.push(result);
        }
        if (settled.length === 0) return committed;
        await addProgress(batchId, progressOf(settled)).execute(trx);
        return committed;
      });
    },

    async releaseLine(batchId, line, owner, notBeforeMs) {
      await whileLeased(batchId, line, owner)
        .set({
          state: 'pending',
          not_before_ms: Math.floor(notBeforeMs),
          lease_owner: null,
          lease_expires_at_ms: null,
        })
        .execute();
    },

    async lineCounts(batchId) {
      // Only columns of the (batch_id, state, line) index: the count never reads the lines' bodies.
      const rows = await db
        .selectFrom('batch_lines')
        .select((eb) => ['state', eb.fn.countAll<number | string>().as('count')])
        .where('batch_id', '=', batchId)
        .groupBy('state')
        .execute();
      const counts = { total: 0, succeeded: 0, failed: 0, open: 0 };
      for (const row of rows) {
        const count = toNumber(row.count);
        counts.total += count;
        if (row.state === 'succeeded') counts.succeeded = count;
        else if (row.state === 'failed') counts.failed = count;
        else counts.open += count;
      }
      return counts;
    },

    async hasOpenLines(batchId) {
      const row = await db
        .selectFrom('batch_lines')
        .select('line')
        .where('batch_id', '=', batchId)
        .where('state', 'in', ['pending', 'running'])
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async liveLeases(batchId) {
      const row = await db
        .selectFrom('batch_lines')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('batch_id', '=', batchId)
        .where('state', '=', 'running')
        .where('lease_expires_at_ms', '>', Date.now())
        .executeTakeFirst();
      return toNumber(row?.count ?? 0);
    },

    async settledLines(batchId, state, afterLine, limit) {
      const rows = await db
        .selectFrom('batch_lines')
        .select(['line', 'result'])
        .where('batch_id', '=', batchId)
        .where('state', '=', state)
        .where('line', '>', afterLine)
        .orderBy('line')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ line: toNumber(row.line), result: row.result ?? 'null' }));
    },

    async openLines(batchId, afterLine, limit) {
      const rows = await db
        .selectFrom('batch_lines')
        .select(['line', 'custom_id'])
        .where('batch_id', '=', batchId)
        .where('state', 'in', ['pending', 'running'])
        .where('line', '>', afterLine)
        .orderBy('line')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ line: toNumber(row.line), custom_id: row.custom_id }));
    },

    async usageOf(batchId) {
      const row = await db
        .selectFrom('batch_lines')
        .select((eb) => [
          eb.fn.sum<number | string | null>('input_tokens').as('input_tokens'),
          eb.fn.sum<number | string | null>('output_tokens').as('output_tokens'),
          eb.fn.sum<number | string | null>('cached_tokens').as('cached_tokens'),
          eb.fn.sum<number | string | null>('reasoning_tokens').as('reasoning_tokens'),
        ])
        .where('batch_id', '=', batchId)
        .executeTakeFirstOrThrow();
      return usageOfSums(row);
    },
  };
}
