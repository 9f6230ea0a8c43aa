/**
 * The one implementation of a versioned document: a row named by slug or id within a workspace that holds
 * its latest document, and a versions table that keeps every document it ever held (1, 2, …). Configs,
 * guardrails, prompts and prompt partials are all this, with their own tables and columns. A document may
 * carry credentials (a config's `api_key`, a webhook's headers, a prompt's inline config), so it is
 * encrypted at rest in both tables, bound to the row's id.
 *
 * Version numbers are incremented inside the UPDATE (never from a value read before it), so two concurrent
 * updates never claim the same number; changes are announced after their commit, so a node that drops a
 * cached copy on hearing of one cannot reload the old row.
 */
import type { Kysely, Selectable } from 'kysely';
import { decryptSecret, encryptSecret } from '../crypto.js';
import { newId, type IdPrefix } from '../ids.js';
import type { DocumentVersion } from '../rows.js';
import type { Database } from '../schema.js';
import type { StoreChange } from '../types.js';
import {
  announcerOf,
  assertWorkspaceOf,
  findLiveRow,
  inTransaction,
  insertOrConflict,
  nowSeconds,
  softDelete,
  type RepositoryContext,
  type VersionedTable,
} from './context.js';

/** Where one kind of versioned document lives. */
export interface VersionedDocumentSpec<T extends VersionedTable> {
  table: T;
  versionsTable: keyof Database;
  /** The column of both tables that holds the (encrypted) document. */
  documentColumn: string;
  /** The versions table's column naming the row (`config_id`). */
  ownerColumn: string;
  idPrefix: IdPrefix;
  resource: StoreChange['resource'];
  /** How errors name one, e.g. "config". */
  noun: string;
}

/** Records what goes with a version just written, in its transaction. */
export type VersionWritten = (
  trx: Kysely<Database>,
  written: { ownerId: string; workspaceId: string; version: number },
) => Promise<void>;

export interface VersionedDocuments<T extends VersionedTable, D> {
  create(input: {
    organisation_id: string;
    workspace_id: string;
    slug: string;
    name: string;
    document: D;
    /** Further columns of the row (a config's `status`, a prompt's `published_version`). */
    columns?: Record<string, unknown>;
    /** Run in the transaction once version 1 is written (what a prompt's version includes). */
    onVersion?: VersionWritten;
  }): Promise<{ row: Selectable<Database[T]>; document: D }>;
  get(
    workspaceId: string,
    slugOrId: string,
  ): Promise<{ row: Selectable<Database[T]>; document: D } | undefined>;
  /** Oldest first. */
  list(workspaceId: string): Promise<Array<{ row: Selectable<Database[T]>; document: D }>>;
  /**
   * A new `document` makes the next version; `name` and `columns` alone change the row only. `check`, run
   * in the transaction on the row as it is, may refuse the change (it throws) before anything is written.
   */
  update(
    workspaceId: string,
    slugOrId: string,
    patch: {
      name?: string;
      document?: D;
      columns?: Record<string, unknown>;
      check?: (trx: Kysely<Database>, row: Selectable<Database[T]>) => Promise<void>;
      /** Run in the transaction once the new version (of a new `document`) is written. */
      onVersion?: VersionWritten;
    },
  ): Promise<{ row: Selectable<Database[T]>; document: D } | undefined>;
  /** Oldest first; empty when there is no such live row. */
  versions(workspaceId: string, slugOrId: string): Promise<Array<DocumentVersion<D>>>;
  /** One version of a live row. */
  version(workspaceId: string, slugOrId: string, version: number): Promise<DocumentVersion<D> | undefined>;
  /** A row of the versions table, as read (all its columns), decrypted. */
  readVersion(row: Record<string, unknown>): DocumentVersion<D>;
  /** Whether a row has this version (read in `db`, which may be a transaction). */
  hasVersion(db: Kysely<Database>, ownerId: string, version: number): Promise<boolean>;
  delete(workspaceId: string, slugOrId: string): Promise<boolean>;
}

type AnyRow = Record<string, unknown>;

export function versionedDocuments<T extends VersionedTable, D>(
  { db, keys, changed }: RepositoryContext,
  spec: VersionedDocumentSpec<T>,
): VersionedDocuments<T, D> {
  const announce = announcerOf(changed, spec.resource);
  const { documentColumn, ownerColumn } = spec;
  const table = spec.table as string;
  const versionsTable = spec.versionsTable as string;
  const encrypt = (id: string, document: D) => encryptSecret(keys.encryption, JSON.stringify(document), id);
  const decrypt = (id: string, text: string) => JSON.parse(decryptSecret(keys.encryption, text, id)) as D;
  // The tables differ by name and columns only; Kysely's per-table types cannot follow a table chosen at
  // run time, so the queries below are written against an untyped view of the same database.
  const untyped = (on: Kysely<Database>) => on as unknown as Kysely<Record<string, AnyRow>>;
  const decrypted = (row: AnyRow) => ({
    row: row as unknown as Selectable<Database[T]>,
    document: decrypt(row.id as string, row[documentColumn] as string),
  });
  const toVersion = (row: AnyRow): DocumentVersion<D> => ({
    owner_id: row[ownerColumn] as string,
    version: Number(row.version),
    document: decrypt(row[ownerColumn] as string, row[documentColumn] as string),
    created_at: row.created_at as number | string,
  });

  async function liveRow(on: Kysely<Database>, workspaceId: string, slugOrId: string) {
    return (await findLiveRow(on, spec.table, workspaceId, slugOrId)) as AnyRow | undefined;
  }

  return {
    async create(input) {
      await assertWorkspaceOf(db, input.organisation_id, input.workspace_id);
      const now = nowSeconds();
      const id = newId(spec.idPrefix);
      const text = encrypt(id, input.document);
      const row: AnyRow = {
        id,
        organisation_id: input.organisation_id,
        workspace_id: input.workspace_id,
        slug: input.slug,
        name: input.name,
        [documentColumn]: text,
        version: 1,
        ...input.columns,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      };
      await insertOrConflict(
        () =>
          inTransaction(db, async (trx) => {
            await untyped(trx).insertInto(table).values(row).execute();
            await untyped(trx)
              .insertInto(versionsTable)
              .values({ [ownerColumn]: id, version: 1, [documentColumn]: text, created_at: now })
              .execute();
            await input.onVersion?.(trx, { ownerId: id, workspaceId: input.workspace_id, version: 1 });
          }),
        `A ${spec.noun} with slug '${input.slug}' already exists`,
      );
      announce('created', input.workspace_id, id);
      return { row: row as unknown as Selectable<Database[T]>, document: input.document };
    },

    async get(workspaceId, slugOrId) {
      const row = await liveRow(db, workspaceId, slugOrId);
      return row ? decrypted(row) : undefined;
    },

    async list(workspaceId) {
      const rows = await untyped(db)
        .selectFrom(table)
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('deleted_at', 'is', null)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(decrypted);
    },

    async update(workspaceId, slugOrId, patch) {
      const updated = await inTransaction(db, async (trx) => {
        const current = await liveRow(trx, workspaceId, slugOrId);
        if (!current) return undefined;
        await patch.check?.(trx, current as unknown as Selectable<Database[T]>);
        const now = nowSeconds();
        const text = patch.document !== undefined ? encrypt(current.id as string, patch.document) : undefined;
        const row = await untyped(trx)
          .updateTable(table)
          .set((eb) => ({
            ...(patch.name !== undefined && { name: patch.name }),
            ...patch.columns,
            ...(text !== undefined && { [documentColumn]: text, version: eb('version', '+', 1) }),
            updated_at: now,
          }))
          .where('workspace_id', '=', workspaceId)
          .where('id', '=', current.id as string)
          // Deleted since it was read (PostgreSQL): gone, like a row that was never there.
          .where('deleted_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (!row) return undefined;
        if (text !== undefined) {
          await untyped(trx)
            .insertInto(versionsTable)
            .values({
              [ownerColumn]: row.id,
              version: row.version,
              [documentColumn]: text,
              created_at: now,
            })
            .execute();
          await patch.onVersion?.(trx, {
            ownerId: row.id as string,
            workspaceId,
            version: Number(row.version),
          });
        }
        return decrypted(row);
      });
      if (updated) announce('updated', workspaceId, (updated.row as { id: string }).id);
      return updated;
    },

    async versions(workspaceId, slugOrId) {
      const owner = await liveRow(db, workspaceId, slugOrId);
      if (!owner) return [];
      const rows = await untyped(db)
        .selectFrom(versionsTable)
        .selectAll()
        .where(ownerColumn, '=', owner.id as string)
        .orderBy('version')
        .execute();
      return rows.map(toVersion);
    },

    async version(workspaceId, slugOrId, version) {
      const owner = await liveRow(db, workspaceId, slugOrId);
      if (!owner) return undefined;
      const row = await untyped(db)
        .selectFrom(versionsTable)
        .selectAll()
        .where(ownerColumn, '=', owner.id as string)
        .where('version', '=', version)
        .executeTakeFirst();
      return row ? toVersion(row) : undefined;
    },

    readVersion: toVersion,

    async hasVersion(on, ownerId, version) {
      const row = await untyped(on)
        .selectFrom(versionsTable)
        .select('version')
        .where(ownerColumn, '=', ownerId)
        .where('version', '=', version)
        .executeTakeFirst();
      return row !== undefined;
    },

    async delete(workspaceId, slugOrId) {
      const current = await liveRow(db, workspaceId, slugOrId);
      if (!current || !(await softDelete(db, spec.table, workspaceId, current.id as string))) return false;
      announce('deleted', workspaceId, current.id as string);
      return true;
    },
  };
}
