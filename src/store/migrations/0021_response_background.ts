/**
 * Background responses of the Responses API (docs/responses.md): the call a background response runs
 * (its caller and provider headers encrypted, bound to the response's id, and the request the pipeline
 * carries), and the events of a streamed one, numbered as the client reads them, so that
 * `GET /responses/{id}?stream=true&starting_after=N` replays them on any node. Both go with their response.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('response_runs')
    .addColumn('response_id', 'text', (c) =>
      c.primaryKey().notNull().references('responses.id').onDelete('cascade'),
    )
    .addColumn('call_encrypted', 'text', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('response_events')
    .addColumn('response_id', 'text', (c) => c.notNull().references('responses.id').onDelete('cascade'))
    .addColumn('sequence_number', 'integer', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('response_events_pk', ['response_id', 'sequence_number'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('response_events').ifExists().execute();
  await db.schema.dropTable('response_runs').ifExists().execute();
}
