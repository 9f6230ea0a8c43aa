/**
 * The names each version of a stored document holds, kept beside its versions so that the versions
 * holding a name are found without reading every version of the workspace: the partials a prompt's or a
 * partial's text includes, by the name it uses (`{{>house-style@2}}`: `house-style`;
 * 0025_prompt_partial_includes), and the stored documents a config, prompt or guardrail version names
 * (`guardrail:no-pii`; 0026_document_references, 0028_guardrail_version_references). The names come from
 * the gateway, which reads the documents; the store keeps them. A version written without them (stored before the table existed, or
 * by a node that does not write it) is listed by `unindexedVersionRows` until they are recorded.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { inTransaction } from './context.js';
import type { VersionWritten } from './versioned-documents.js';

export interface VersionIncludesSpec {
  includesTable:
    | 'prompt_version_includes'
    | 'prompt_partial_version_includes'
    | 'config_version_references'
    | 'prompt_version_references'
    | 'guardrail_version_references';
  versionsTable: 'prompt_versions' | 'prompt_partial_versions' | 'config_versions' | 'guardrail_versions';
  ownersTable: 'prompts' | 'prompt_partials' | 'configs' | 'guardrails';
  ownerColumn: 'prompt_id' | 'partial_id' | 'config_id' | 'guardrail_id';
  /** The includes table's column holding a name. */
  nameColumn: 'partial' | 'name';
  /** The versions table's column saying a version's names are recorded. */
  indexedColumn: 'includes_indexed' | 'references_indexed';
}

type AnyRow = Record<string, unknown>;

export interface VersionIncludes {
  /** What records a version's names as it is written; undefined when they are not known. */
  onVersion(includes: readonly string[] | undefined): VersionWritten | undefined;
  /** Records the names of a version already stored (idempotent). */
  record(workspaceId: string, ownerId: string, version: number, includes: readonly string[]): Promise<void>;
  /** Rows of the versions table, of live owners of the workspace, that include one of `names`; with the
   * owner's `slug` as `owner_slug`, in the owners' order of creation then by version. */
  versionRowsIncluding(workspaceId: string, names: readonly string[]): Promise<AnyRow[]>;
  /** The owners whose current version includes one of `names` (an owner counts by its current version
   * only), each once, read with `get`, in the owners' order of creation. */
  currentOwnersIncluding<Found extends { row: { version: unknown } }>(
    workspaceId: string,
    names: readonly string[],
    get: (ownerId: string) => Promise<Found | undefined>,
  ): Promise<Found[]>;
  /** Rows of the versions table, of live owners of the workspace, whose names are not recorded. */
  unindexedVersionRows(workspaceId: string): Promise<AnyRow[]>;
}

export function versionIncludes(db: Kysely<Database>, spec: VersionIncludesSpec): VersionIncludes {
  const { includesTable, versionsTable, ownersTable, ownerColumn, nameColumn, indexedColumn } = spec;
  // Tables chosen at run time: see versioned-documents.ts.
  const untyped = (on: Kysely<Database>) => on as unknown as Kysely<Record<string, AnyRow>>;

  async function write(
    on: Kysely<Database>,
    workspaceId: string,
    ownerId: string,
    version: number,
    includes: readonly string[],
  ): Promise<void> {
    const names = [...new Set(includes)];
    if (names.length > 0) {
      await untyped(on)
        .insertInto(includesTable)
        .values(
          names.map((name) => ({
            [ownerColumn]: ownerId,
            version,
            workspace_id: workspaceId,
            [nameColumn]: name,
          })),
        )
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    await untyped(on)
      .updateTable(versionsTable)
      .set({ [indexedColumn]: 1 })
      .where(ownerColumn, '=', ownerId)
      .where('version', '=', version)
      .execute();
  }

  const liveVersions = (workspaceId: string) =>
    untyped(db)
      .selectFrom(`${versionsTable} as v`)
      .innerJoin(`${ownersTable} as o`, 'o.id', `v.${ownerColumn}`)
      .where('o.workspace_id', '=', workspaceId)
      .where('o.deleted_at', 'is', null);

  return {
    onVersion(includes) {
      if (includes === undefined) return undefined;
      return (trx, { ownerId, workspaceId, version }) => write(trx, workspaceId, ownerId, version, includes);
    },

    record(workspaceId, ownerId, version, includes) {
      return inTransaction(db, (trx) => write(trx, workspaceId, ownerId, version, includes));
    },

    async versionRowsIncluding(workspaceId, names) {
      if (names.length === 0) return [];
      // Found through the (workspace_id, name) index first; only those versions are read.
      const uses = await untyped(db)
        .selectFrom(includesTable)
        .select([ownerColumn, 'version'])
        .where('workspace_id', '=', workspaceId)
        .where(nameColumn, 'in', [...names])
        .execute();
      if (uses.length === 0) return [];
      const key = (row: AnyRow) => `${row[ownerColumn] as string}\u0000${Number(row.version)}`;
      const wanted = new Set(uses.map(key));
      const rows = await liveVersions(workspaceId)
        .where(`v.${ownerColumn}`, 'in', [...new Set(uses.map((use) => use[ownerColumn] as string))])
        .where('v.version', 'in', [...new Set(uses.map((use) => Number(use.version)))])
        .selectAll('v')
        .select('o.slug as owner_slug')
        .orderBy('o.created_at')
        .orderBy('o.id')
        .orderBy('v.version')
        .execute();
      return rows.filter((row) => wanted.has(key(row)));
    },

    async currentOwnersIncluding<Found extends { row: { version: unknown } }>(
      workspaceId: string,
      names: readonly string[],
      get: (ownerId: string) => Promise<Found | undefined>,
    ): Promise<Found[]> {
      const found = new Map<string, Found>();
      for (const row of await this.versionRowsIncluding(workspaceId, names)) {
        const ownerId = row[ownerColumn] as string;
        if (found.has(ownerId)) continue;
        const current = await get(ownerId);
        if (current && Number(current.row.version) === Number(row.version)) found.set(ownerId, current);
      }
      return [...found.values()];
    },

    async unindexedVersionRows(workspaceId) {
      return liveVersions(workspaceId)
        .where(`v.${indexedColumn}`, '=', 0)
        .selectAll('v')
        .orderBy('o.created_at')
        .orderBy('o.id')
        .orderBy('v.version')
        .execute();
    },
  };
}
