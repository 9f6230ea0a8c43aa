/**
 * Stored prompts and prompt partials: versioned documents (versioned-documents.ts) with a published
 * version. Creation makes version 1 and publishes it; an update with a new document makes the next version
 * and leaves the published one as it was; publishing names an existing version.
 */
import type { Kysely, Selectable } from 'kysely';
import { GatewayError } from '../../core/errors.js';
import { toPrompt, toPromptPartial, toPromptPartialVersion, toPromptVersion } from '../rows.js';
import type { Database, PromptPartialsTable, PromptsTable } from '../schema.js';
import type {
  PromptDocument,
  PromptPartialDocument,
  PromptPartialRepository,
  PromptRepository,
} from '../types.js';
import type { RepositoryContext } from './context.js';
import { versionIncludes } from './version-includes.js';
import { versionedDocuments, type VersionedDocuments, type VersionWritten } from './versioned-documents.js';

/** What records both `a` and `b` as a version is written. */
function both(a: VersionWritten | undefined, b: VersionWritten | undefined): VersionWritten | undefined {
  if (!a || !b) return a ?? b;
  return async (trx, written) => {
    await a(trx, written);
    await b(trx, written);
  };
}

/** Publishing a version the row does not have is refused before anything is written. */
function publishCheck<T extends 'prompts' | 'prompt_partials', D>(
  documents: VersionedDocuments<T, D>,
  noun: string,
  version: number,
) {
  return async (trx: Kysely<Database>, row: Selectable<Database[T]>) => {
    const { id, slug } = row as { id: string; slug: string };
    if (!(await documents.hasVersion(trx, id, version))) {
      throw new GatewayError('not_found', `The ${noun} "${slug}" has no version ${version}`, {
        param: 'version',
      });
    }
  };
}

export function createPromptRepository(context: RepositoryContext): PromptRepository {
  const prompts = versionedDocuments<'prompts', PromptDocument>(context, {
    table: 'prompts',
    versionsTable: 'prompt_versions',
    documentColumn: 'prompt',
    ownerColumn: 'prompt_id',
    idPrefix: 'pmt',
    resource: 'prompt',
    noun: 'prompt',
  });
  const includes = versionIncludes(context.db, {
    includesTable: 'prompt_version_includes',
    versionsTable: 'prompt_versions',
    ownersTable: 'prompts',
    ownerColumn: 'prompt_id',
    nameColumn: 'partial',
    indexedColumn: 'includes_indexed',
  });
  const references = versionIncludes(context.db, {
    includesTable: 'prompt_version_references',
    versionsTable: 'prompt_versions',
    ownersTable: 'prompts',
    ownerColumn: 'prompt_id',
    nameColumn: 'name',
    indexedColumn: 'references_indexed',
  });
  const view = (found: { row: Selectable<PromptsTable>; document: PromptDocument }) =>
    toPrompt(found.row, found.document);

  return {
    async createPrompt({ prompt, includes: names, references: named, ...rest }) {
      return view(
        await prompts.create({
          ...rest,
          document: prompt,
          columns: { published_version: 1 },
          onVersion: both(includes.onVersion(names), references.onVersion(named)),
        }),
      );
    },
    async getPrompt(workspace_id, slugOrId) {
      const found = await prompts.get(workspace_id, slugOrId);
      return found && view(found);
    },
    async listPrompts(workspace_id) {
      return (await prompts.list(workspace_id)).map(view);
    },
    async updatePrompt(workspace_id, slugOrId, patch) {
      const found = await prompts.update(workspace_id, slugOrId, {
        name: patch.name,
        document: patch.prompt,
        onVersion: both(includes.onVersion(patch.includes), references.onVersion(patch.references)),
      });
      return found && view(found);
    },
    async publishPrompt(workspace_id, slugOrId, version) {
      const found = await prompts.update(workspace_id, slugOrId, {
        columns: { published_version: version },
        check: publishCheck(prompts, 'prompt', version),
      });
      return found && view(found);
    },
    async listPromptVersions(workspace_id, slugOrId) {
      return (await prompts.versions(workspace_id, slugOrId)).map(toPromptVersion);
    },
    async getPromptVersion(workspace_id, slugOrId, version) {
      const found = await prompts.version(workspace_id, slugOrId, version);
      return found && toPromptVersion(found);
    },
    deletePrompt: (workspace_id, slugOrId) => prompts.delete(workspace_id, slugOrId),
    async listPromptVersionsIncluding(workspace_id, names) {
      return (await includes.versionRowsIncluding(workspace_id, names)).map((row) => ({
        ...toPromptVersion(prompts.readVersion(row)),
        slug: row.owner_slug as string,
      }));
    },
    async listUnindexedPromptVersions(workspace_id) {
      return (await includes.unindexedVersionRows(workspace_id)).map((row) =>
        toPromptVersion(prompts.readVersion(row)),
      );
    },
    recordPromptVersionIncludes: (workspace_id, prompt_id, version, names) =>
      includes.record(workspace_id, prompt_id, version, names),
    async listPromptVersionsReferencing(workspace_id, names) {
      return (await references.versionRowsIncluding(workspace_id, names)).map((row) => ({
        ...toPromptVersion(prompts.readVersion(row)),
        slug: row.owner_slug as string,
      }));
    },
    async listPromptVersionsWithoutReferences(workspace_id) {
      return (await references.unindexedVersionRows(workspace_id)).map((row) =>
        toPromptVersion(prompts.readVersion(row)),
      );
    },
    recordPromptVersionReferences: (workspace_id, prompt_id, version, names) =>
      references.record(workspace_id, prompt_id, version, names),
  };
}

export function createPromptPartialRepository(context: RepositoryContext): PromptPartialRepository {
  const partials = versionedDocuments<'prompt_partials', PromptPartialDocument>(context, {
    table: 'prompt_partials',
    versionsTable: 'prompt_partial_versions',
    documentColumn: 'partial',
    ownerColumn: 'partial_id',
    idPrefix: 'ptl',
    resource: 'prompt_partial',
    noun: 'prompt partial',
  });
  const includes = versionIncludes(context.db, {
    includesTable: 'prompt_partial_version_includes',
    versionsTable: 'prompt_partial_versions',
    ownersTable: 'prompt_partials',
    ownerColumn: 'partial_id',
    nameColumn: 'partial',
    indexedColumn: 'includes_indexed',
  });
  const view = (found: { row: Selectable<PromptPartialsTable>; document: PromptPartialDocument }) =>
    toPromptPartial(found.row, found.document);

  return {
    async createPromptPartial({ partial, includes: names, ...rest }) {
      return view(
        await partials.create({
          ...rest,
          document: partial,
          columns: { published_version: 1 },
          onVersion: includes.onVersion(names),
        }),
      );
    },
    async getPromptPartial(workspace_id, slugOrId) {
      const found = await partials.get(workspace_id, slugOrId);
      return found && view(found);
    },
    async listPromptPartials(workspace_id) {
      return (await partials.list(workspace_id)).map(view);
    },
    async updatePromptPartial(workspace_id, slugOrId, patch) {
      const found = await partials.update(workspace_id, slugOrId, {
        name: patch.name,
        document: patch.partial,
        onVersion: includes.onVersion(patch.includes),
      });
      return found && view(found);
    },
    async publishPromptPartial(workspace_id, slugOrId, version) {
      const found = await partials.update(workspace_id, slugOrId, {
        columns: { published_version: version },
        check: publishCheck(partials, 'prompt partial', version),
      });
      return found && view(found);
    },
    async listPromptPartialVersions(workspace_id, slugOrId) {
      return (await partials.versions(workspace_id, slugOrId)).map(toPromptPartialVersion);
    },
    async getPromptPartialVersion(workspace_id, slugOrId, version) {
      const found = await partials.version(workspace_id, slugOrId, version);
      return found && toPromptPartialVersion(found);
    },
    deletePromptPartial: (workspace_id, slugOrId) => partials.delete(workspace_id, slugOrId),
    async listPromptPartialVersionsIncluding(workspace_id, names) {
      return (await includes.versionRowsIncluding(workspace_id, names)).map((row) => ({
        ...toPromptPartialVersion(partials.readVersion(row)),
        slug: row.owner_slug as string,
      }));
    },
    async listUnindexedPromptPartialVersions(workspace_id) {
      return (await includes.unindexedVersionRows(workspace_id)).map((row) =>
        toPromptPartialVersion(partials.readVersion(row)),
      );
    },
    recordPromptPartialVersionIncludes: (workspace_id, partial_id, version, names) =>
      includes.record(workspace_id, partial_id, version, names),
  };
}
