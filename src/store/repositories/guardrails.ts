/**
 * Stored guardrails and their versions: versioned documents (versioned-documents.ts), like configs. Every
 * `guardrail` given to an update makes a new version; `name` alone does not. A guardrail may carry
 * credentials (a webhook check's `headers`), hence the encryption at rest the documents share. Each
 * version records the stored documents it names (0028_guardrail_version_references), as a config's does.
 */
import { toGuardrail, toGuardrailVersion } from '../rows.js';
import type { GuardrailsTable } from '../schema.js';
import type { GuardrailRepository } from '../types.js';
import type { RepositoryContext } from './context.js';
import { versionIncludes } from './version-includes.js';
import { versionedDocuments } from './versioned-documents.js';

export function createGuardrailRepository(context: RepositoryContext): GuardrailRepository {
  const guardrails = versionedDocuments<'guardrails', Record<string, unknown>>(context, {
    table: 'guardrails',
    versionsTable: 'guardrail_versions',
    documentColumn: 'guardrail',
    ownerColumn: 'guardrail_id',
    idPrefix: 'grd',
    resource: 'guardrail',
    noun: 'guardrail',
  });
  const references = versionIncludes(context.db, {
    includesTable: 'guardrail_version_references',
    versionsTable: 'guardrail_versions',
    ownersTable: 'guardrails',
    ownerColumn: 'guardrail_id',
    nameColumn: 'name',
    indexedColumn: 'references_indexed',
  });
  const view = (found: { row: GuardrailsTable; document: Record<string, unknown> }) =>
    toGuardrail(found.row, found.document);

  return {
    async createGuardrail(input) {
      const { guardrail, references: names, ...rest } = input;
      return view(
        await guardrails.create({ ...rest, document: guardrail, onVersion: references.onVersion(names) }),
      );
    },

    async getGuardrail(workspace_id, slugOrId) {
      const found = await guardrails.get(workspace_id, slugOrId);
      return found && view(found);
    },

    async listGuardrails(workspace_id) {
      return (await guardrails.list(workspace_id)).map(view);
    },

    async updateGuardrail(workspace_id, slugOrId, patch) {
      const found = await guardrails.update(workspace_id, slugOrId, {
        name: patch.name,
        document: patch.guardrail,
        onVersion: references.onVersion(patch.references),
      });
      return found && view(found);
    },

    async listGuardrailVersions(workspace_id, slugOrId) {
      return (await guardrails.versions(workspace_id, slugOrId)).map(toGuardrailVersion);
    },

    deleteGuardrail: (workspace_id, slugOrId) => guardrails.delete(workspace_id, slugOrId),

    async listGuardrailsReferencing(workspace_id, names) {
      const current = await references.currentOwnersIncluding(workspace_id, names, (id) =>
        guardrails.get(workspace_id, id),
      );
      return current.map(view);
    },

    async listGuardrailVersionsWithoutReferences(workspace_id) {
      return (await references.unindexedVersionRows(workspace_id)).map((row) =>
        toGuardrailVersion(guardrails.readVersion(row)),
      );
    },

    recordGuardrailVersionReferences: (workspace_id, guardrail_id, version, names) =>
      references.record(workspace_id, guardrail_id, version, names),
  };
}
