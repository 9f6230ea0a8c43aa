/** File records (the contents are in the BlobStore under `files/<id>`), private to their workspace. */
import type { ExpressionBuilder, Selectable } from 'kysely';
import type { FileRepository, FilePurpose, StoredFile } from '../file-batch-types.js';
import { toNumber, toNumberOrNull } from '../rows.js';
import type { Database, FilesTable } from '../schema.js';
import { deleteRow, type RepositoryContext } from './context.js';

function toFile(row: Selectable<FilesTable>): StoredFile {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    purpose: row.purpose as FilePurpose,
    filename: row.filename,
    bytes: toNumber(row.bytes),
    line_count: toNumberOrNull(row.line_count),
    created_at: toNumber(row.created_at),
    expires_at: toNumberOrNull(row.expires_at),
  };
}

/** A file past its `expires_at` is gone, though its sweep (`expired`) may not have deleted it yet. */
function live(eb: ExpressionBuilder<Database, 'files'>) {
  const now = Math.floor(Date.now() / 1000);
  return eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]);
}

export function createFileRepository({ db }: RepositoryContext): FileRepository {
  return {
    async create(file) {
      await db.insertInto('files').values(file).execute();
      return file;
    },

    async get(workspaceId, id) {
      const row = await db
        .selectFrom('files')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where(live)
        .executeTakeFirst();
      return row ? toFile(row) : undefined;
    },

    async list(workspaceId, query) {
      // By creation time, then id: most ids sort by creation time (store/ids.ts), but a batch's result
      // files are named after the batch. The cursor is a file id; its row gives the position.
      const op = query.order === 'asc' ? '>' : '<';
      let builder = db.selectFrom('files').selectAll().where('workspace_id', '=', workspaceId).where(live);
      if (query.purpose !== undefined) builder = builder.where('purpose', '=', query.purpose);
      if (query.after !== undefined) {
        const after = query.after;
        const cursor = await db
          .selectFrom('files')
          .select('created_at')
          .where('workspace_id', '=', workspaceId)
          .where('id', '=', after)
          .executeTakeFirst();
        builder =
          cursor === undefined
            ? // A file deleted since: its id still places it, near enough.
              builder.where('id', op, after)
            : builder.where((eb) =>
                eb.or([
                  eb('created_at', op, cursor.created_at),
                  eb.and([eb('created_at', '=', cursor.created_at), eb('id', op, after)]),
                ]),
              );
      }
      const rows = await builder
        .orderBy('created_at', query.order)
        .orderBy('id', query.order)
        .limit(query.limit + 1)
        .execute();
      return { data: rows.slice(0, query.limit).map(toFile), has_more: rows.length > query.limit };
    },

    delete: (workspaceId, id) => deleteRow(db, 'files', workspaceId, id),

    async expired(now, limit) {
      const rows = await db
        .selectFrom('files')
        .selectAll()
        .where('expires_at', '<=', now)
        .orderBy('expires_at')
        .limit(limit)
        .execute();
      return rows.map(toFile);
    },
  };
}
