/**
 * Stored guardrails and their versions: versioned documents (versioned-documents.ts), like configs. Every
 * `guardrail` given to an update makes a new version; `name` alone does not. A guardrail may carry
 * credentials (a webhook check's `headers`), hence the encryption at rest the documents share.
 */
import { toGuardrail, toGuardrailVersion } from '../rows.js';
import type { GuardrailsTable } from '../schema.js';
import type { GuardrailRepository } from '../types.js';
import type { RepositoryContext } from './context.js';
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
  const view = (found: { row: GuardrailsTable; document: Record<string, unknown> }) =>
    toGuardrail(found.row, found.document);

  return {
    async createGuardrail(input) {
      const { guardrail, ...rest } = input;
      return view(await guardrails.create({ ...rest, document: guardrail }));
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
      });
      return found && view(found);
    },

    async listGuardrailVersions(workspace_id, slugOrId) {
      return (await guardrails.versions(workspace_id, slugOrId)).map(toGuardrailVersion);
    },

    deleteGuardrail: (workspace_id, slugOrId) => guardrails.delete(workspace_id, slugOrId),
  };
}
