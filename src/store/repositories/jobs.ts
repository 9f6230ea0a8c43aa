/**
 * The job queue: due jobs are leased to one owner at a time. PostgreSQL claims in one statement whose
 * candidate rows are locked with FOR UPDATE SKIP LOCKED, so concurrent claimers (any node) pass over
 * each other's rows instead of waiting or taking the same job. SQLite claims in one UPDATE statement,
 * atomic under the file's single write lock.
 */
import type { Kysely } from 'kysely';
import { GatewayError } from '../../core/errors.js';
import { newId } from '../ids.js';
import { toJob } from '../rows.js';
import type { Database } from '../schema.js';
import type { Job, JobRepository } from '../types.js';
import type { RepositoryContext } from './context.js';

const DEFAULT_MAX_ATTEMPTS = 3;
const MAX_CLAIM = 100;
const MAX_PAGE = 1_000;
const DEFAULT_PAGE = 100;

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(Math.floor(value), min), max);
}

function jsonText(value: unknown): string {
  return JSON.stringify(value ?? null);
}

export function createJobRepository({ db, kind }: RepositoryContext): JobRepository {
  /**
   * Jobs a claim has something to do with: due, or running on a lease that ran out. One that ran out on its
   * last attempt is claimed once more, its attempts then past `max_attempts`: not to run again, but for its
   * worker to give up on what it was for (fail a batch left validating) and then `fail` it.
   */
  function waitingJobs(trx: Kysely<Database>, kinds: readonly string[], now: number) {
    return trx
      .selectFrom('jobs')
      .select('id')
      .where('kind', 'in', kinds)
      .where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'queued'), eb('run_at_ms', '<=', now)]),
          eb.and([eb('status', '=', 'running'), eb('lease_expires_at_ms', '<=', now)]),
        ]),
      );
  }

  function dueJobs(trx: Kysely<Database>, kinds: readonly string[], now: number, limit: number) {
    return waitingJobs(trx, kinds, now).orderBy('run_at_ms').orderBy('id').limit(limit);
  }

  /**
   * Whether a claim would find anything. A read, so that the idle polls of every node's workers — several
   * a second, on a store that has no jobs — take no write lock (on SQLite the log thread's) and change
   * nothing.
   */
  async function anythingToClaim(kinds: readonly string[], now: number): Promise<boolean> {
    return (await waitingJobs(db, kinds, now).limit(1).executeTakeFirst()) !== undefined;
  }

  function leaseTo(owner: string, leaseMs: number, now: number) {
    return {
      status: 'running',
      lease_owner: owner,
      lease_expires_at_ms: now + leaseMs,
      updated_at_ms: now,
    } as const;
  }

  async function claimPostgres(
    kinds: readonly string[],
    owner: string,
    leaseMs: number,
    limit: number,
    now: number,
  ) {
    // The CTE runs once; its rows stay locked by this statement, and SKIP LOCKED makes a concurrent
    // claimer pass over them to the next due jobs.
    const rows = await db
      .with('due', () => dueJobs(db, kinds, now, limit).forUpdate().skipLocked())
      .updateTable('jobs')
      .from('due')
      .set((eb) => ({ ...leaseTo(owner, leaseMs, now), attempts: eb('jobs.attempts', '+', 1) }))
      .whereRef('jobs.id', '=', 'due.id')
      .returningAll('jobs')
      .execute();
    return rows.map(toJob);
  }

  /** One statement: SQLite runs it atomically under the file's write lock, and never holds that lock
   * across an await (in one process, a second connection waiting for it would block the thread that
   * holds it). */
  async function claimSqlite(
    kinds: readonly string[],
    owner: string,
    leaseMs: number,
    limit: number,
    now: number,
  ) {
    const rows = await db
      .updateTable('jobs')
      .set((eb) => ({ ...leaseTo(owner, leaseMs, now), attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', dueJobs(db, kinds, now, limit))
      .returningAll()
      .execute();
    return rows.map(toJob);
  }

  /** An update of the job while `owner` holds it; it changes nothing once they do not. */
  function whileOwned(id: string, owner: string) {
    return db
      .updateTable('jobs')
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where('lease_owner', '=', owner);
  }

  async function changed(update: ReturnType<typeof whileOwned>): Promise<Job | undefined> {
    const row = await update.returningAll().executeTakeFirst();
    return row ? toJob(row) : undefined;
  }

  return {
    async enqueue(input) {
      const maxAttempts = input.max_attempts ?? DEFAULT_MAX_ATTEMPTS;
      if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
        throw new GatewayError(
          'internal_error',
          `max_attempts must be a positive integer, not ${maxAttempts}`,
        );
      }
      const now = Date.now();
      const row = {
        id: newId('job', now),
        kind: input.kind,
        status: 'queued',
        workspace_id: input.workspace_id ?? null,
        payload: jsonText(input.payload),
        result: null,
        error: null,
        attempts: 0,
        max_attempts: maxAttempts,
        run_at_ms: Math.floor(input.run_at_ms ?? now),
        lease_owner: null,
        lease_expires_at_ms: null,
        created_at_ms: now,
        updated_at_ms: now,
        finished_at_ms: null,
      };
      await db.insertInto('jobs').values(row).execute();
      return toJob(row);
    },

    async claim({ kinds, owner, leaseMs, limit = 1 }) {
      if (kinds.length === 0) return [];
      const count = clamp(limit, 1, MAX_CLAIM);
      const now = Date.now();
      if (!(await anythingToClaim(kinds, now))) return [];
      const jobs =
        kind === 'postgres'
          ? await claimPostgres(kinds, owner, Math.ceil(leaseMs), count, now)
          : await claimSqlite(kinds, owner, Math.ceil(leaseMs), count, now);
      return jobs.sort((a, b) => a.run_at_ms - b.run_at_ms || (a.id < b.id ? -1 : 1));
    },

    heartbeat(id, owner, leaseMs) {
      const now = Date.now();
      return changed(
        whileOwned(id, owner).set({ lease_expires_at_ms: now + Math.ceil(leaseMs), updated_at_ms: now }),
      );
    },

    complete(id, owner, result) {
      const now = Date.now();
      return changed(
        whileOwned(id, owner).set({
          status: 'completed',
          result: jsonText(result),
          lease_expires_at_ms: null,
          updated_at_ms: now,
          finished_at_ms: now,
        }),
      );
    },

    fail(id, owner, error, retryAtMs) {
      const now = Date.now();
      return changed(
        whileOwned(id, owner).set((eb) => {
          const exhausted = eb('attempts', '>=', eb.ref('max_attempts'));
          return {
            status: eb.case().when(exhausted).then('failed').else('queued').end(),
            run_at_ms: eb
              .case()
              .when(exhausted)
              .then(eb.ref('run_at_ms'))
              .else(Math.floor(retryAtMs ?? now))
              .end(),
            finished_at_ms: eb.case().when(exhausted).then(now).else(null).end(),
            error,
            lease_expires_at_ms: null,
            updated_at_ms: now,
          };
        }),
      );
    },

    release(id, owner, retryAtMs) {
      const now = Date.now();
      // The claim that made this run counted an attempt: it is taken back (a claim always counted one).
      return changed(
        whileOwned(id, owner).set((eb) => ({
          status: 'queued',
          attempts: eb('attempts', '-', 1),
          run_at_ms: Math.floor(retryAtMs ?? now),
          lease_expires_at_ms: null,
          updated_at_ms: now,
        })),
      );
    },

    async get(id) {
      const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toJob(row) : undefined;
    },

    async list(query = {}) {
      const limit = clamp(query.limit ?? DEFAULT_PAGE, 1, MAX_PAGE);
      let builder = db.selectFrom('jobs').selectAll();
      if (query.kind !== undefined) builder = builder.where('kind', '=', query.kind);
      if (query.status !== undefined) builder = builder.where('status', '=', query.status);
      if (query.workspace_id !== undefined) builder = builder.where('workspace_id', '=', query.workspace_id);
      if (query.after !== undefined) builder = builder.where('id', '>', query.after);
      const rows = await builder
        .orderBy('id')
        .limit(limit + 1)
        .execute();
      return { data: rows.slice(0, limit).map(toJob), has_more: rows.length > limit };
    },
  };
}
