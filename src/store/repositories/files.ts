/** File records (the contents are in the BlobStore under `files/<id>`), private to their workspace. */
import type { Selectable } from 'kysely';
import type { FileRepository, FilePurpose, StoredFile } from '../file-batch-types.js';
import { toNumber, toNumberOrNull } from '../rows.js';
import type { FilesTable } from '../schema.js';
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
  };
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
        .executeTakeFirst();
      return row ? toFile(row) : undefined;
    },

    async list(workspaceId, query) {
      // Ids sort by creation time (store/ids.ts), so the id is the cursor and the order.
      let builder = db.selectFrom('files').selectAll().where('workspace_id', '=', workspaceId);
      if (query.purpose !== undefined) builder = builder.where('purpose', '=', query.purpose);
      if (query.after !== undefined) {
        builder = builder.where('id', query.order === 'asc' ? '>' : '<', query.after);
      }
      const rows = await builder
        .orderBy('id', query.order)
        .limit(query.limit + 1)
        .execute();
      return { data: rows.slice(0, query.limit).map(toFile), has_more: rows.length > query.limit };
    },

    delete: (workspaceId, id) => deleteRow(db, 'files', workspaceId, id),
  };
}
