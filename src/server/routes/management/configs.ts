/**
 * Stored configs of the caller's workspace, addressed by slug or id. A config is checked in full when it
 * is stored (as a request carrying it would be), so a stored config never fails to parse later. Every new
 * `config` makes a new version. Configs may hold provider credentials; answers redact them.
 */
import type { FastifyInstance } from 'fastify';
import { parseConfig, type GatewayConfig } from '../../../gateway/config/index.js';
import { checkProvidersKnown } from '../../../gateway/config/config-rules.js';
import { checkOverrideMetadata } from '../../../gateway/config/override-metadata.js';
import { storedGuardrailRefs } from '../../../gateway/config/hook-specs.js';
import { resolveStoredGuardrail } from '../../../gateway/hooks/stored-guardrail.js';
import { assertNamedDocumentsExist } from '../../../gateway/named-documents.js';
import { refuseOwnerHeadersBesideStored } from '../../../gateway/forwarded-headers.js';
import {
  configReferences,
  recordMissingReferences,
  refuseBreakingConfigRemoval,
} from '../../../gateway/prompts/destination-dependents.js';
import { refuseBreakingDestinationChange } from '../../../gateway/prompts/prompt-host-dependents.js';
import { refuseMisshapenHeaders } from './extra-headers.js';
import { keepRedactedValues } from './redacted-values.js';
import { refuseCreatingUnderUsedName, refuseMovingSecrets } from './secret-dependents.js';
import type { GatewayDeps } from '../../../gateway/deps.js';
import type { Repositories } from '../../../store/types.js';
import { validateCreateConfig, validateUpdateConfig } from './body-schemas.js';
import { forced, notFound, pathParam, requireSomeField } from './route-helpers.js';
import { configVersionView, configView, deletedView, listView } from './views.js';

/** Stored configs are used with requests that may carry `Authorization`, so a provider without
 * api_key is acceptable here, as it is in a request that sends one. */
const STORED_CONFIG_OPTIONS = { authorizationPresent: true } as const;

export async function registerConfigRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { store } = deps;

  /**
   * A config as a request carrying it would check it, and what a request checks only when it gets there:
   * its providers and the stored guardrails it names. Returns the config parsed: the transaction storing
   * it finds every stored document it names there, since any may be deleted meanwhile, and judges it
   * with what they hold then (assertStoredDocuments).
   */
  async function checkStoredConfig(config: unknown, workspaceId: string): Promise<GatewayConfig> {
    refuseMisshapenHeaders({ config });
    const parsed = parseConfig(config, STORED_CONFIG_OPTIONS);
    checkProvidersKnown(parsed, 'config');
    refuseOwnerHeadersBesideStored(parsed);
    // Resolved as a call resolves them: a name the workspace does not hold is the call's 400, and a
    // stored definition is checked as a call would build it.
    for (const ref of storedGuardrailRefs(parsed, 'config'))
      await resolveStoredGuardrail(deps, workspaceId, ref);
    return parsed;
  }

  /**
   * What a config is judged with in the transaction storing it, holding the workspace's references: the
   * stored documents it names (named-documents.ts), and the metadata its targets send with the prompt
   * versions they select as it reads them (override-metadata.ts; `stored`, the config as the PATCH
   * changes it), so that a version published or stored meanwhile is either seen or sees this config.
   */
  async function assertStoredDocuments(
    tx: Repositories,
    workspaceId: string,
    parsed: GatewayConfig,
    stored?: unknown,
  ): Promise<void> {
    await checkOverrideMetadata(parsed, { store: tx, workspaceId, stored });
    await assertNamedDocumentsExist(tx, workspaceId, parsed);
  }

  app.post('/configs', async (request) => {
    const body = validateCreateConfig(request.body);
    const force = forced(request);
    const caller = request.gw.apiKey;
    const parsed = await checkStoredConfig(body.config, caller.workspace_id);
    // Recorded outside the change's transaction, which a refusal rolls back.
    if (!force) await recordMissingReferences(store, caller.workspace_id);
    const config = await store.transaction(async (tx) => {
      await tx.holdReferences(caller.workspace_id);
      await assertStoredDocuments(tx, caller.workspace_id, parsed);
      if (!force) await refuseCreatingUnderUsedName(tx, caller.workspace_id, 'config', body.slug);
      return tx.createConfig({
        organisation_id: caller.organisation_id,
        workspace_id: caller.workspace_id,
        slug: body.slug,
        name: body.name ?? body.slug,
        config: body.config,
        references: configReferences(body.config),
      });
    });
    return configView(config);
  });

  app.get('/configs', async (request) => {
    const configs = await store.listConfigs(request.gw.apiKey.workspace_id);
    return listView(configs.map(configView));
  });

  app.get('/configs/:id', async (request) => {
    const id = pathParam(request.params, 'id');
    const config = await store.getConfig(request.gw.apiKey.workspace_id, id);
    if (!config) throw notFound('config', id, 'id');
    return configView(config);
  });

  app.patch('/configs/:id', async (request) => {
    const id = pathParam(request.params, 'id');
    const body = validateUpdateConfig(request.body);
    requireSomeField(body, ['name', 'config', 'status']);
    // Read first: a bad `force` is a 400 even on a change (not an archive) that needs none.
    const force = forced(request);
    const workspaceId = request.gw.apiKey.workspace_id;
    let parsed: GatewayConfig | undefined;
    if (body.config !== undefined) {
      // Credentials sent back as shown ([REDACTED]) keep their stored values.
      const current = await store.getConfig(workspaceId, id);
      if (!current) throw notFound('config', id, 'id');
      body.config = keepRedactedValues(body.config, current.config, 'config') as typeof body.config;
      parsed = await checkStoredConfig(body.config, workspaceId);
    }
    // Where the calls of prompts sending theirs to it go (its config) is judged for the configs' targets
    // naming those prompts, as a prompt's change is.
    const judged = !force && body.config !== undefined;
    if (body.status === 'archived' || judged) await recordMissingReferences(store, workspaceId);
    const config = await store.transaction(async (tx) => {
      await tx.holdReferences(workspaceId);
      const current = await tx.getConfig(workspaceId, id);
      if (!current) return undefined;
      // An archived config answers calls with a 404, as a deleted one does.
      if (body.status === 'archived' && !force) await refuseBreakingConfigRemoval(tx, current, 'archive');
      // What holds secrets in the calls sent to it would send them to its new destinations.
      if (parsed && !force) {
        await refuseMovingSecrets(
          tx,
          workspaceId,
          { kind: 'config', names: new Set([current.slug, current.id]) },
          { next: body.config, stored: current.config },
          { doing: `Changing where the config "${current.slug}" sends its calls`, param: 'config' },
        );
      }
      if (parsed) {
        // Metadata left as stored is not judged again: one stored before the check keeps its other fields'
        // changes working (override-metadata.ts).
        await assertStoredDocuments(tx, workspaceId, parsed, current.config);
      } else if (body.status === 'active' && current.status !== 'active') {
        // An archived config was no delete's concern: what it names may be gone since it was archived.
        await assertNamedDocumentsExist(
          tx,
          workspaceId,
          parseConfig(current.config, { ...STORED_CONFIG_OPTIONS, asStored: true }),
        );
      }
      const write = () =>
        tx.updateConfig(workspaceId, id, {
          ...body,
          ...(body.config !== undefined && { references: configReferences(body.config) }),
        });
      // Calls sent to an archived one fail already (404): no change of it breaks them.
      if (!judged || current.status !== 'active') return write();
      return refuseBreakingDestinationChange(tx, current, 'config', write);
    });
    if (!config) throw notFound('config', id, 'id');
    return configView(config);
  });

  app.get('/configs/:id/versions', async (request) => {
    const id = pathParam(request.params, 'id');
    const workspaceId = request.gw.apiKey.workspace_id;
    // An empty list would not tell a missing config from one without versions (there is none).
    const config = await store.getConfig(workspaceId, id);
    if (!config) throw notFound('config', id, 'id');
    const versions = await store.listConfigVersions(workspaceId, config.id);
    return listView(versions.map(configVersionView));
  });

  app.delete('/configs/:id', async (request) => {
    const id = pathParam(request.params, 'id');
    const workspaceId = request.gw.apiKey.workspace_id;
    await recordMissingReferences(store, workspaceId);
    const config = await store.transaction(async (tx) => {
      await tx.holdReferences(workspaceId);
      const found = await tx.getConfig(workspaceId, id);
      if (!found) throw notFound('config', id, 'id');
      if (!forced(request)) await refuseBreakingConfigRemoval(tx, found, 'delete');
      if (!(await tx.deleteConfig(workspaceId, found.id))) throw notFound('config', id, 'id');
      return found;
    });
    return deletedView('config', config.id);
  });
}
