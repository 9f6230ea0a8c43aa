/**
 * Stored configs and their versions: versioned documents (versioned-documents.ts). Every `config` given to
 * an update makes a new version, even one equal to the current config; `name` and `status` alone do not.
 */
import { toConfig, toConfigVersion } from '../rows.js';
import type { ConfigsTable } from '../schema.js';
import type { ConfigRepository } from '../types.js';
import type { RepositoryContext } from './context.js';
import { versionIncludes } from './version-includes.js';
import { versionedDocuments } from './versioned-documents.js';

export function createConfigRepository(context: RepositoryContext): ConfigRepository {
  const configs = versionedDocuments<'configs', Record<string, unknown>>(context, {
    table: 'configs',
    versionsTable: 'config_versions',
    documentColumn: 'config',
    ownerColumn: 'config_id',
    idPrefix: 'cfg',
    resource: 'config',
    noun: 'config',
  });
  const references = versionIncludes(context.db, {
    includesTable: 'config_version_references',
    versionsTable: 'config_versions',
    ownersTable: 'configs',
    ownerColumn: 'config_id',
    nameColumn: 'name',
    indexedColumn: 'references_indexed',
  });
  const view = (found: { row: ConfigsTable; document: Record<string, unknown> }) =>
    toConfig(found.row, found.document);

  return {
    async createConfig(input) {
      const { config, references: names, ...rest } = input;
      return view(
        await configs.create({
          ...rest,
          document: config,
          columns: { status: 'active' },
          onVersion: references.onVersion(names),
        }),
      );
    },

    async getConfig(workspace_id, slugOrId) {
      const found = await configs.get(workspace_id, slugOrId);
      return found && view(found);
    },

    async listConfigs(workspace_id) {
      return (await configs.list(workspace_id)).map(view);
    },

    async updateConfig(workspace_id, slugOrId, patch) {
      const found = await configs.update(workspace_id, slugOrId, {
        name: patch.name,
        document: patch.config,
        columns: patch.status !== undefined ? { status: patch.status } : undefined,
        onVersion: references.onVersion(patch.references),
      });
      return found && view(found);
    },

    async listConfigVersions(workspace_id, slugOrId) {
      return (await configs.versions(workspace_id, slugOrId)).map(toConfigVersion);
    },

    deleteConfig: (workspace_id, slugOrId) => configs.delete(workspace_id, slugOrId),

    async listConfigsReferencing(workspace_id, names) {
      const current = await references.currentOwnersIncluding(workspace_id, names, (id) =>
        configs.get(workspace_id, id),
      );
      return current.map(view);
    },

    async listConfigVersionsWithoutReferences(workspace_id) {
      return (await references.unindexedVersionRows(workspace_id)).map((row) =>
        toConfigVersion(configs.readVersion(row)),
      );
    },

    recordConfigVersionReferences: (workspace_id, config_id, version, names) =>
      references.record(workspace_id, config_id, version, names),
  };
}
