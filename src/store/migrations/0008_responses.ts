/**
 * Stored responses of the Responses API (docs/responses.md): the Response object as JSON text, and its
 * input items one row each, in order, so `input_items` pages through them and a conversation is rebuilt
 * from its chain of `previous_response_id`. Private to a workspace; deleting a response deletes its items.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('responses')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('previous_response_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('response_input_items')
    .addColumn('response_id', 'text', (c) => c.notNull().references('responses.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('item', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('response_input_items_pk', ['response_id', 'position'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('response_input_items').ifExists().execute();
  await db.schema.dropTable('responses').ifExists().execute();
}
