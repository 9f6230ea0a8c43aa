/** What each call cost, in US dollars (docs/cost.md): null when a model it used has no price. */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('logs').addColumn('cost', 'double precision').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('logs').dropColumn('cost').execute();
}
