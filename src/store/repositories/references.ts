/**
 * What keeps a check of the references between stored documents true until the change it allows is
 * committed. A delete refused while something names what it deletes (a config prompts send their calls
 * to, a guardrail configs list …) checks and deletes in one transaction, and so does a write that names a
 * stored document after finding it there; each holds the workspace's references first, so neither reads
 * the other's half-done work: the later one sees what the earlier one committed.
 */
import { sql } from 'kysely';
import type { ReferenceRepository } from '../types.js';
import type { RepositoryContext } from './context.js';

export function createReferenceRepository({ db, kind }: RepositoryContext): ReferenceRepository {
  return {
    async holdReferences(workspaceId) {
      // Outside a transaction it would hold nothing: the mistake is the caller's, and silent otherwise.
      if (!db.isTransaction) throw new Error('holdReferences needs a transaction (store.transaction)');
      // SQLite: the transaction took the database's one write lock when it began (BEGIN IMMEDIATE).
      if (kind !== 'postgres') return;
      // Released when the transaction ends; a lock of this schema only, as serialized()'s are.
      await sql`select pg_advisory_xact_lock(hashtext(current_schema() || ${`/references/${workspaceId}`}))`.execute(
        db,
      );
    },
  };
}
