/**
 * Stored prompts and prompt partials of the caller's workspace, addressed by slug or id. A version is
 * checked in full before it is stored (template, variables' places, partials, parameters, destination), so
 * nothing is kept from a rejected write and a call never meets a version that cannot render for a reason
 * of its own. Creating makes version 1 and publishes it; PUT makes the next version and leaves the
 * published one; publishing names a version. Every change reaches every node's lookup cache at once
 * (store.onChange → lookups.applyChange, Redis between nodes).
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../../core/errors.js';
import { refuseMisshapenHeaders } from './extra-headers.js';
import { parseConfig } from '../../../gateway/config/index.js';
import { checkOverrideMetadata } from '../../../gateway/config/override-metadata.js';
import type { GatewayDeps } from '../../../gateway/deps.js';
import { refuseOwnerHeadersBesideStored } from '../../../gateway/forwarded-headers.js';
import { assertVersionDocumentsExist } from '../../../gateway/named-documents.js';
import {
  promptReferences,
  recordMissingReferences,
  refuseBreakingPromptDeletion,
} from '../../../gateway/prompts/destination-dependents.js';
import {
  includesOf,
  partialsState,
  recordMissingIncludes,
  refuseBreakingPrompts,
  writeIfUnchanged,
} from '../../../gateway/prompts/partial-dependents.js';
import { partialLoader, storedPartials } from '../../../gateway/prompts/prompt-call.js';
import { refuseBreakingPromptTargets } from '../../../gateway/prompts/prompt-host-dependents.js';
import { checkPartialText, checkPromptDocument } from '../../../gateway/prompts/render-prompt.js';
import { parseVersionNumber } from '../../../gateway/prompts/prompt-reference.js';
import type {
  PromptDocument,
  Repositories,
  StoredPrompt,
  StoredPromptPartial,
} from '../../../store/types.js';
import {
  validateCreatePrompt,
  validateCreatePromptPartial,
  validatePublish,
  validateUpdatePrompt,
  validateUpdatePromptPartial,
  type CreatePrompt,
} from './body-schemas.js';
import { stringQuery, type Query } from '../query-params.js';
import { keepRedactedPromptValues } from './redacted-values.js';
import { forced, notFound, pathParam } from './route-helpers.js';
import {
  deletedView,
  listView,
  promptPartialVersionView,
  promptPartialView,
  promptVersionView,
  promptView,
} from './views.js';

const DESTINATIONS = ['virtual_key', 'provider', 'config'] as const;

/** The stored config a version sends its calls to is there and active (404 naming `config` otherwise):
 * an archived config answers its calls with that 404 already. */
async function assertDestinationConfig(
  store: Pick<Repositories, 'getConfig'>,
  workspaceId: string,
  config: string,
): Promise<void> {
  const found = await store.getConfig(workspaceId, config);
  if (!found) {
    throw new GatewayError('config_not_found', `No config "${config}" in this workspace`, {
      param: 'config',
    });
  }
  if (found.status !== 'active') {
    throw new GatewayError(
      'config_not_found',
      `The config "${config}" is archived: calls sent to it would fail. Make it active first`,
      { param: 'config' },
    );
  }
}

/** A body's version document, checked; throws a 400 (or the 404 of a missing stored config) naming why. */
async function promptDocument(
  deps: GatewayDeps,
  workspaceId: string,
  body: Omit<CreatePrompt, 'slug'>,
): Promise<PromptDocument> {
  const given = DESTINATIONS.filter((key) => body[key] !== undefined);
  if (given.length > 1) {
    throw new GatewayError(
      'invalid_body',
      `Send at most one of ${DESTINATIONS.join(', ')}, not ${given.join(' and ')}`,
      {
        param: given[1],
      },
    );
  }
  refuseMisshapenHeaders(body);
  if (typeof body.config === 'string') await assertDestinationConfig(deps.store, workspaceId, body.config);
  const document: PromptDocument = {
    template_type: body.template_type ?? 'chat',
    string: body.string,
    parameters: body.parameters ?? {},
    ...(body.virtual_key !== undefined && { virtual_key: body.virtual_key }),
    ...(body.provider !== undefined && { provider: body.provider }),
    ...(body.config !== undefined && { config: body.config as PromptDocument['config'] }),
  };
  // The store's partials, not this node's cache: the check is made again if they change before the write.
  await checkPromptDocument(document, partialLoader(storedPartials(deps.store), workspaceId));
  return document;
}

/**
 * A version sent back as it was shown: each `[REDACTED]` credential (an inline config's, a parameter's)
 * stands for the one the previous version holds at the same place, while the version's destinations (its
 * `config` among them) are all the previous version's (redacted-values.ts); otherwise, with no previous
 * version, or nothing to keep there, it is refused naming it (`config.api_key`, `parameters.user_api_key`)
 * rather than stored as the credential.
 */
function keepPreviousCredentials<T extends Omit<CreatePrompt, 'slug'>>(
  body: T,
  previous: PromptDocument | undefined,
): T {
  return keepRedactedPromptValues(body, previous) as T;
}

/** PUT sends the whole body again: its slug, if any, must be the one the record has. */
function assertSameSlug(record: { slug: string }, slug: string | undefined): void {
  if (slug !== undefined && slug !== record.slug) {
    throw new GatewayError('invalid_body', `slug cannot change (it is "${record.slug}")`, { param: 'slug' });
  }
}

export async function registerPromptRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { store } = deps;
  const workspaceOf = (request: { gw: { apiKey: { workspace_id: string } } }) =>
    request.gw.apiKey.workspace_id;

  async function existingPrompt(
    workspaceId: string,
    id: string,
    from: Pick<Repositories, 'getPrompt'> = store,
  ): Promise<StoredPrompt> {
    const prompt = await from.getPrompt(workspaceId, id);
    if (!prompt)
      throw new GatewayError('prompt_not_found', `No prompt "${id}" in this workspace`, { param: 'id' });
    return prompt;
  }

  async function existingPartial(workspaceId: string, id: string): Promise<StoredPromptPartial> {
    const partial = await store.getPromptPartial(workspaceId, id);
    if (!partial) throw notFound('prompt partial', id, 'id');
    return partial;
  }

  /**
   * Checks a body's version and writes it (`write`) in a transaction holding the workspace's references
   * (holdReferences), once the stored documents it names are found there: the stored config it sends its
   * calls to, its virtual key or catalog provider, what its inline config names (named-documents.ts), and
   * the partials it includes as they were when its template was checked (else it is checked again:
   * writeIfUnchanged). One deleted or changed since the version was checked is not named by it once stored.
   */
  function storeVersion<T>(
    workspaceId: string,
    body: Omit<CreatePrompt, 'slug'>,
    write: (tx: Repositories, document: PromptDocument) => Promise<T>,
  ): Promise<T> {
    return writeIfUnchanged(
      store,
      workspaceId,
      (from) => partialsState(from, workspaceId),
      () => promptDocument(deps, workspaceId, body),
      async (tx, document) => {
        if (typeof document.config === 'string')
          await assertDestinationConfig(tx, workspaceId, document.config);
        const inline =
          typeof document.config === 'object'
            ? parseConfig(document.config, { authorizationPresent: true })
            : undefined;
        if (inline !== undefined) refuseOwnerHeadersBesideStored(inline);
        if (inline !== undefined && document.template_type !== 'completion') {
          // Checked as a stored config is, with the prompt versions as the transaction reads them: its
          // targets' metadata goes into the body of every chat call (a text prompt's calls are completions,
          // sent without it).
          await checkOverrideMetadata(inline, { store: tx, workspaceId });
        }
        await assertVersionDocumentsExist(tx, workspaceId, document, inline);
        return write(tx, document);
      },
      'string',
    );
  }

  // Partials first: `/prompts/partials` is a path of its own, not a prompt's slug.
  app.post('/prompts/partials', async (request) => {
    const body = validateCreatePromptPartial(request.body);
    const caller = request.gw.apiKey;
    const workspaceId = caller.workspace_id;
    // Written only if the partials it was checked against are still so, as a prompt version is: a partial
    // it includes, deleted meanwhile, is not included by it once stored.
    const partial = await writeIfUnchanged(
      store,
      workspaceId,
      (from) => partialsState(from, workspaceId),
      () =>
        checkPartialText({ slug: body.slug }, body.string, partialLoader(storedPartials(store), workspaceId)),
      (tx) =>
        tx.createPromptPartial({
          organisation_id: caller.organisation_id,
          workspace_id: workspaceId,
          slug: body.slug,
          name: body.name ?? body.slug,
          partial: { string: body.string },
          includes: includesOf(body.string),
        }),
      'string',
    );
    return promptPartialView(partial);
  });

  app.get('/prompts/partials', async (request) => {
    const partials = await store.listPromptPartials(workspaceOf(request));
    return listView(partials.map(promptPartialView));
  });

  app.get('/prompts/partials/:id', async (request) => {
    return promptPartialView(await existingPartial(workspaceOf(request), pathParam(request.params, 'id')));
  });

  /**
   * A change to a partial (storing a version, publishing one, deleting it): `check` (given the partial as
   * it is, read again each time) runs before the transaction that makes the change (`write`), which holds
   * the workspace's references and finds there the partials, and the prompt versions including this one,
   * that the check read (writeIfUnchanged).
   */
  async function changePartial<T>(
    workspaceId: string,
    id: string,
    check: (current: StoredPromptPartial) => Promise<void>,
    write: (tx: Repositories, current: StoredPromptPartial) => Promise<T | undefined>,
    param: string,
  ): Promise<T> {
    const first = await existingPartial(workspaceId, id);
    await recordMissingIncludes(store, workspaceId);
    const changed = await writeIfUnchanged(
      store,
      workspaceId,
      (from) => partialsState(from, workspaceId, first),
      async () => {
        const current = await existingPartial(workspaceId, first.id);
        await check(current);
        return current;
      },
      async (tx, current) => ({ current, value: await write(tx, current) }),
      param,
    );
    if (changed.value === undefined) throw notFound('prompt partial', changed.current.slug, 'id');
    return changed.value;
  }

  app.put('/prompts/partials/:id', async (request) => {
    const workspaceId = workspaceOf(request);
    const body = validateUpdatePromptPartial(request.body);
    const id = pathParam(request.params, 'id');
    const partial = await changePartial(
      workspaceId,
      id,
      async (current) => {
        assertSameSlug(current, body.slug);
        await checkPartialText(current, body.string, partialLoader(storedPartials(store), workspaceId));
        if (forced(request)) return;
        // The new version is at once what `{{>slug@latest}}` includes.
        const loaded = { text: body.string, record: {}, id: current.id };
        await refuseBreakingPrompts(deps, current, {
          action: 'Storing this version of',
          after: (selector) => (selector === 'latest' ? loaded : 'unchanged'),
          param: 'string',
        });
      },
      (tx, current) =>
        tx.updatePromptPartial(workspaceId, current.id, {
          name: body.name,
          partial: { string: body.string },
          includes: includesOf(body.string),
        }),
      'string',
    );
    return promptPartialView(partial);
  });

  app.put('/prompts/partials/:id/publish', async (request) => {
    const workspaceId = workspaceOf(request);
    const { version } = validatePublish(request.body);
    // Read first: a bad `force` is a 400 even when publishing the version already published needs none.
    const force = forced(request);
    const partial = await changePartial(
      workspaceId,
      pathParam(request.params, 'id'),
      async (current) => {
        if (version === current.published_version || force) return;
        const next = await store.getPromptPartialVersion(workspaceId, current.id, version);
        if (!next) return;
        const loaded = { text: next.partial.string, record: next, id: current.id };
        await refuseBreakingPrompts(deps, current, {
          action: `Publishing version ${version} of`,
          after: (selector) => (selector === 'published' ? loaded : 'unchanged'),
          param: 'version',
        });
      },
      (tx, current) => tx.publishPromptPartial(workspaceId, current.id, version),
      'version',
    );
    return promptPartialView(partial);
  });

  app.get('/prompts/partials/:id/versions', async (request) => {
    const workspaceId = workspaceOf(request);
    const partial = await existingPartial(workspaceId, pathParam(request.params, 'id'));
    const versions = await store.listPromptPartialVersions(workspaceId, partial.id);
    return listView(versions.map(promptPartialVersionView));
  });

  app.get('/prompts/partials/:id/versions/:version', async (request) => {
    const workspaceId = workspaceOf(request);
    const partial = await existingPartial(workspaceId, pathParam(request.params, 'id'));
    const raw = pathParam(request.params, 'version');
    const number = parseVersionNumber(raw);
    const version =
      number === undefined ? undefined : await store.getPromptPartialVersion(workspaceId, partial.id, number);
    if (!version) {
      throw new GatewayError('not_found', `The prompt partial "${partial.slug}" has no version ${raw}`, {
        param: 'version',
      });
    }
    return promptPartialVersionView(version);
  });

  app.delete('/prompts/partials/:id', async (request) => {
    const workspaceId = workspaceOf(request);
    const partial = await changePartial(
      workspaceId,
      pathParam(request.params, 'id'),
      async (current) => {
        if (forced(request)) return;
        await refuseBreakingPrompts(deps, current, {
          action: 'Deleting',
          after: () => undefined,
          param: 'id',
        });
      },
      async (tx, current) => ((await tx.deletePromptPartial(workspaceId, current.id)) ? current : undefined),
      'id',
    );
    return deletedView('prompt.partial', partial.id);
  });

  app.post('/prompts', async (request) => {
    const { slug, ...sent } = validateCreatePrompt(request.body);
    const body = keepPreviousCredentials(sent, undefined);
    const caller = request.gw.apiKey;
    const prompt = await storeVersion(caller.workspace_id, body, (tx, document) =>
      tx.createPrompt({
        organisation_id: caller.organisation_id,
        workspace_id: caller.workspace_id,
        slug,
        name: body.name ?? slug,
        prompt: document,
        includes: includesOf(body.string),
        references: promptReferences(document),
      }),
    );
    return promptView(prompt);
  });

  app.get('/prompts', async (request) => {
    const needle = stringQuery(request.query as Query, 'name')?.toLowerCase();
    const prompts = await store.listPrompts(workspaceOf(request));
    const matching = needle ? prompts.filter((p) => p.name.toLowerCase().includes(needle)) : prompts;
    return listView(matching.map(promptView));
  });

  app.get('/prompts/:id', async (request) => {
    return promptView(await existingPrompt(workspaceOf(request), pathParam(request.params, 'id')));
  });

  app.put('/prompts/:id', async (request) => {
    const workspaceId = workspaceOf(request);
    const { slug, ...sent } = validateUpdatePrompt(request.body);
    const force = forced(request);
    const current = await existingPrompt(workspaceId, pathParam(request.params, 'id'));
    assertSameSlug(current, slug);
    // Credentials sent back as shown ([REDACTED]) keep the latest version's values.
    const body = keepPreviousCredentials(sent, current.prompt);
    // Recorded outside the change's transaction, which a refusal rolls back.
    if (!force) await recordMissingReferences(store, workspaceId);
    const prompt = await storeVersion(workspaceId, body, async (tx, document) => {
      // The new version is at once what `slug@latest` selects.
      const now = await tx.getPrompt(workspaceId, current.id);
      if (now && !force) {
        await refuseBreakingPromptTargets(tx, {
          prompt: now,
          selector: 'latest',
          next: { number: now.version + 1, document },
          action: 'Storing this version of',
          param: DESTINATIONS.find((key) => document[key] !== undefined) ?? 'string',
        });
      }
      return tx.updatePrompt(workspaceId, current.id, {
        name: body.name,
        prompt: document,
        includes: includesOf(body.string),
        references: promptReferences(document),
      });
    });
    if (!prompt)
      throw new GatewayError('prompt_not_found', `No prompt "${current.slug}" in this workspace`, {
        param: 'id',
      });
    return promptView(prompt);
  });

  app.put('/prompts/:id/publish', async (request) => {
    const workspaceId = workspaceOf(request);
    const { version } = validatePublish(request.body);
    // Read first: a bad `force` is a 400 even when publishing the version already published needs none.
    const force = forced(request);
    const id = pathParam(request.params, 'id');
    // Recorded outside the change's transaction, which a refusal rolls back.
    if (!force) await recordMissingReferences(store, workspaceId);
    const prompt = await store.transaction(async (tx) => {
      await tx.holdReferences(workspaceId);
      const current = await existingPrompt(workspaceId, id, tx);
      const next =
        force || version === current.published_version
          ? undefined
          : await tx.getPromptVersion(workspaceId, current.id, version);
      if (next) {
        await refuseBreakingPromptTargets(tx, {
          prompt: current,
          selector: 'published',
          next: { number: version, document: next.prompt },
          action: `Publishing version ${version} of`,
          param: 'version',
        });
      }
      return tx.publishPrompt(workspaceId, current.id, version);
    });
    if (!prompt)
      throw new GatewayError('prompt_not_found', `No prompt "${id}" in this workspace`, { param: 'id' });
    return promptView(prompt);
  });

  app.get('/prompts/:id/versions', async (request) => {
    const workspaceId = workspaceOf(request);
    const prompt = await existingPrompt(workspaceId, pathParam(request.params, 'id'));
    const versions = await store.listPromptVersions(workspaceId, prompt.id);
    return listView(versions.map(promptVersionView));
  });

  app.get('/prompts/:id/versions/:version', async (request) => {
    const workspaceId = workspaceOf(request);
    const prompt = await existingPrompt(workspaceId, pathParam(request.params, 'id'));
    const raw = pathParam(request.params, 'version');
    const number = parseVersionNumber(raw);
    const version =
      number === undefined ? undefined : await store.getPromptVersion(workspaceId, prompt.id, number);
    if (!version) {
      throw new GatewayError('prompt_not_found', `The prompt "${prompt.slug}" has no version ${raw}`, {
        param: 'version',
      });
    }
    return promptVersionView(version);
  });

  app.delete('/prompts/:id', async (request) => {
    const workspaceId = workspaceOf(request);
    await recordMissingReferences(store, workspaceId);
    const prompt = await store.transaction(async (tx) => {
      await tx.holdReferences(workspaceId);
      const found = await existingPrompt(workspaceId, pathParam(request.params, 'id'), tx);
      if (!forced(request)) await refuseBreakingPromptDeletion(tx, found);
      if (!(await tx.deletePrompt(workspaceId, found.id))) {
        throw new GatewayError('prompt_not_found', `No prompt "${found.slug}" in this workspace`, {
          param: 'id',
        });
      }
      return found;
    });
    return deletedView('prompt', prompt.id);
  });
}
