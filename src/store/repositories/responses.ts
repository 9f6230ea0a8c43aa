/**
 * Stored responses of the Responses API and their input items. A response is written with its items in
 * one transaction before its answer is complete, and updated once it is, so a follow-up that names it finds
 * it. Items are paged by their position: `after` / `before` name an item by id (an unknown one is a 400);
 * `before` alone gives the page just before its item, as a previous page.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import { GatewayError } from '../../core/errors.js';
import { decryptSecret, encryptSecret } from '../crypto.js';
import type { BatchCall } from '../file-batch-types.js';
import { toNumber } from '../rows.js';
import type { Database, ResponsesTable } from '../schema.js';
import type { ResponseRepository, StoredResponse, StoredResponseItem } from '../types.js';
import { deleteRow, inTransaction, type RepositoryContext } from './context.js';

function parseObject(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

async function responseExists(db: Kysely<Database>, workspace_id: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('responses')
    .select('id')
    .where('workspace_id', '=', workspace_id)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

async function positionOf(
  db: Kysely<Database>,
  responseId: string,
  itemId: string,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('response_input_items')
    .select('position')
    .where('response_id', '=', responseId)
    .where('id', '=', itemId)
    .executeTakeFirst();
  return row?.position;
}

/**
 * The position of the item a cursor names. A response's items are never removed one by one, so an id
 * that is none of them is the caller's mistake: read as no cursor, it would start the list over.
 */
async function cursorPosition(
  db: Kysely<Database>,
  responseId: string,
  itemId: string,
  param: 'after' | 'before',
): Promise<number> {
  const position = await positionOf(db, responseId, itemId);
  if (position === undefined) {
    throw new GatewayError('invalid_query', `Unknown cursor: no input item ${itemId} in this response`, {
      param,
    });
  }
  return position;
}

/** Statuses of a response that has not ended. */
const RUNNING = ['queued', 'in_progress'];

function storedResponse(row: Selectable<ResponsesTable>): StoredResponse {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    previous_response_id: row.previous_response_id,
    status: row.status,
    body: parseObject(row.body),
    created_at_ms: toNumber(row.created_at_ms),
    updated_at_ms: toNumber(row.updated_at_ms),
  };
}

export function createResponseRepository({ db, keys }: RepositoryContext): ResponseRepository {
  return {
    async createResponse(input) {
      const now = Date.now();
      await inTransaction(db, async (trx) => {
        await trx
          .insertInto('responses')
          .values({
            id: input.id,
            workspace_id: input.workspace_id,
            previous_response_id: input.previous_response_id,
            status: input.status,
            body: JSON.stringify(input.body),
            created_at_ms: now,
            updated_at_ms: now,
          })
          .execute();
        if (input.input_items.length > 0) {
          await trx
            .insertInto('response_input_items')
            .values(
              input.input_items.map((item, position) => ({
                response_id: input.id,
                position,
                id: item.id,
                item: JSON.stringify(item.item),
              })),
            )
            .execute();
        }
        if (input.run) {
          await trx
            .insertInto('response_runs')
            .values({
              response_id: input.id,
              call_encrypted: encryptSecret(keys.encryption, JSON.stringify(input.run.call), input.id),
              request: JSON.stringify(input.run.request),
            })
            .execute();
        }
        if (input.events?.length) {
          await trx
            .insertInto('response_events')
            .values(input.events.map((event) => ({ response_id: input.id, ...event })))
            .execute();
        }
      });
    },

    async updateResponse(workspace_id, id, patch, from) {
      let update = db
        .updateTable('responses')
        .set({ status: patch.status, body: JSON.stringify(patch.body), updated_at_ms: Date.now() })
        .where('workspace_id', '=', workspace_id)
        .where('id', '=', id);
      if (from) update = update.where('status', 'in', from.length > 0 ? [...from] : ['']);
      const result = await update.executeTakeFirst();
      return toNumber(result.numUpdatedRows) > 0;
    },

    async responseRun(workspace_id, id) {
      const row = await db
        .selectFrom('response_runs')
        .innerJoin('responses', 'responses.id', 'response_runs.response_id')
        .select(['response_runs.call_encrypted', 'response_runs.request'])
        .where('responses.workspace_id', '=', workspace_id)
        .where('responses.id', '=', id)
        .executeTakeFirst();
      if (!row) return undefined;
      return {
        call: JSON.parse(decryptSecret(keys.encryption, row.call_encrypted, id)) as BatchCall,
        request: parseObject(row.request),
      };
    },

    async appendResponseEvents(id, events) {
      if (events.length === 0) return;
      await db
        .insertInto('response_events')
        .values(events.map((event) => ({ response_id: id, ...event })))
        .execute();
    },

    async listResponseEvents(id, after, limit) {
      return db
        .selectFrom('response_events')
        .select(['sequence_number', 'event'])
        .where('response_id', '=', id)
        .where('sequence_number', '>', after)
        .orderBy('sequence_number')
        .limit(limit)
        .execute();
    },

    async lastResponseEvent(id) {
      const row = await db
        .selectFrom('response_events')
        .select((eb) => eb.fn.max('sequence_number').as('last'))
        .where('response_id', '=', id)
        .executeTakeFirst();
      return row?.last == null ? -1 : toNumber(row.last);
    },

    async pruneResponseRuns(endedBeforeMs) {
      // Read from the runs, which only background responses have: the foreground ones are never looked at.
      const ended = db
        .selectFrom('response_runs')
        .innerJoin('responses', 'responses.id', 'response_runs.response_id')
        .select('response_runs.response_id')
        .where('responses.status', 'not in', RUNNING)
        .where('responses.updated_at_ms', '<', endedBeforeMs);
      const result = await db
        .deleteFrom('response_events')
        .where('response_id', 'in', ended)
        .executeTakeFirst();
      await db.deleteFrom('response_runs').where('response_id', 'in', ended).execute();
      return toNumber(result.numDeletedRows);
    },

    async getResponse(workspace_id, id) {
      const row = await db
        .selectFrom('responses')
        .selectAll()
        .where('workspace_id', '=', workspace_id)
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? storedResponse(row) : undefined;
    },

    async interruptedResponses(writtenBeforeMs, limit) {
      const rows = await db
        .selectFrom('responses')
        .selectAll()
        .where('status', '=', 'in_progress')
        .where('updated_at_ms', '<', writtenBeforeMs)
        // A background response has a run, and its job sees to it.
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('response_runs')
                .select('response_runs.response_id')
                .whereRef('response_runs.response_id', '=', 'responses.id'),
            ),
          ),
        )
        .orderBy('updated_at_ms')
        .limit(limit)
        .execute();
      return rows.map(storedResponse);
    },

    // The items go with it (ON DELETE CASCADE).
    deleteResponse: (workspace_id, id) => deleteRow(db, 'responses', workspace_id, id),

    async getResponseChain(workspace_id, id, maxLength) {
      // One recursive query walks the chain, one more reads every item of it: two round trips, whatever
      // the conversation's length.
      const rows = await db
        .withRecursive('chain(id, previous_response_id, depth)', (qb) =>
          qb
            .selectFrom('responses')
            .select(['id', 'previous_response_id', sql<number>`0`.as('depth')])
            .where('workspace_id', '=', workspace_id)
            .where('id', '=', id)
            .unionAll((next) =>
              next
                .selectFrom('responses')
                .innerJoin('chain', 'chain.previous_response_id', 'responses.id')
                .select([
                  'responses.id',
                  'responses.previous_response_id',
                  sql<number>`chain.depth + 1`.as('depth'),
                ])
                .where('responses.workspace_id', '=', workspace_id)
                .where('chain.depth', '<', maxLength - 1),
            ),
        )
        .selectFrom('chain')
        .innerJoin('responses', 'responses.id', 'chain.id')
        .select(['responses.id', 'responses.previous_response_id', 'responses.body', 'chain.depth'])
        .orderBy('chain.depth', 'desc')
        .execute();
      if (rows.length === 0) return { responses: [], missing: id };
      const items = await db
        .selectFrom('response_input_items')
        .select(['response_id', 'id', 'item'])
        .where(
          'response_id',
          'in',
          rows.map((row) => row.id),
        )
        .orderBy('response_id')
        .orderBy('position')
        .execute();
      const itemsOf = new Map<string, StoredResponseItem[]>();
      for (const row of items) {
        const list = itemsOf.get(row.response_id) ?? [];
        list.push({ id: row.id, item: parseObject(row.item) });
        itemsOf.set(row.response_id, list);
      }
      const oldest = rows[0]!;
      return {
        responses: rows.map((row) => ({
          id: row.id,
          body: parseObject(row.body),
          input_items: itemsOf.get(row.id) ?? [],
        })),
        // The first response names one that is gone (deleted), or the chain is longer than allowed.
        missing: oldest.previous_response_id ?? undefined,
      };
    },

    async listResponseInputItems(workspace_id, id, query) {
      if (!(await responseExists(db, workspace_id, id))) return undefined;
      const ascending = query.order === 'asc';
      let select = db.selectFrom('response_input_items').select(['id', 'item']).where('response_id', '=', id);
      if (query.after !== undefined) {
        const position = await cursorPosition(db, id, query.after, 'after');
        select = select.where('position', ascending ? '>' : '<', position);
      }
      if (query.before !== undefined) {
        const position = await cursorPosition(db, id, query.before, 'before');
        select = select.where('position', ascending ? '<' : '>', position);
      }
      // `before` alone pages back: the items nearest the cursor, read from it outwards, then put in order.
      const backwards = query.before !== undefined && query.after === undefined;
      const rows = await select
        .orderBy('position', ascending !== backwards ? 'asc' : 'desc')
        .limit(query.limit + 1)
        .execute();
      const page = rows.slice(0, query.limit);
      if (backwards) page.reverse();
      return {
        data: page.map((row) => ({ id: row.id, item: parseObject(row.item) })),
        has_more: rows.length > query.limit,
      };
    },
  };
}
