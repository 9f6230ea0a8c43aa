/**
 * Stored guardrails of the caller's workspace, addressed by slug or id. A definition is checked in full
 * when it is stored (as the same item inline in a config would be), so a config naming it by slug never
 * meets a definition that cannot run. Every new `guardrail` makes a new version; the change reaches every
 * node's lookup cache at once (store.onChange → lookups.applyChange, Redis between nodes).
 */
import type { FastifyInstance } from 'fastify';
import { parseGuardrailDefinition } from '../../../gateway/config/guardrail-definition.js';
import type { GatewayDeps } from '../../../gateway/deps.js';
import { assertGuardrailDocumentsExist } from '../../../gateway/named-documents.js';
import {
  guardrailReferences,
  recordMissingReferences,
  refuseBreakingGuardrailChange,
  refuseBreakingGuardrailDeletion,
} from '../../../gateway/prompts/destination-dependents.js';
import { validateCreateGuardrail, validateUpdateGuardrail } from './body-schemas.js';
import { keepRedactedValues } from './redacted-values.js';
import { forced, notFound, pathParam, requireSomeField } from './route-helpers.js';
import { refuseCreatingUnderUsedName, refuseMovingSecrets } from './secret-dependents.js';
import { deletedView, guardrailVersionView, guardrailView, listView } from './views.js';

export async function registerGuardrailRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { store } = deps;

  app.post('/guardrails', async (request) => {
    const body = validateCreateGuardrail(request.body);
    parseGuardrailDefinition(body.guardrail);
    const force = forced(request);
    const caller = request.gw.apiKey;
    // Recorded outside the change's transaction, which a refusal rolls back.
    if (!force) await recordMissingReferences(store, caller.workspace_id);
    // What its model-judged checks judge through is found in the transaction storing it (as for a
    // config), so a delete of that config or virtual key either sees this guardrail or is seen by it.
    const guardrail = await store.transaction(async (tx) => {
      await tx.holdReferences(caller.workspace_id);
      await assertGuardrailDocumentsExist(tx, caller.workspace_id, body.guardrail);
      if (!force) await refuseCreatingUnderUsedName(tx, caller.workspace_id, 'guardrail', body.slug);
      return tx.createGuardrail({
        organisation_id: caller.organisation_id,
        workspace_id: caller.workspace_id,
        slug: body.slug,
        name: body.name ?? body.slug,
        guardrail: body.guardrail,
        references: guardrailReferences(body.guardrail),
      });
    });
    return guardrailView(guardrail);
  });

  app.get('/guardrails', async (request) => {
    const guardrails = await store.listGuardrails(request.gw.apiKey.workspace_id);
    return listView(guardrails.map(guardrailView));
  });

  app.get('/guardrails/:id', async (request) => {
    const id = pathParam(request.params, 'id');
    const guardrail = await store.getGuardrail(request.gw.apiKey.workspace_id, id);
    if (!guardrail) throw notFound('guardrail', id, 'id');
    return guardrailView(guardrail);
  });

  app.patch('/guardrails/:id', async (request) => {
    const id = pathParam(request.params, 'id');
    const body = validateUpdateGuardrail(request.body);
    requireSomeField(body, ['name', 'guardrail']);
    if (body.guardrail !== undefined) {
      // Credentials sent back as shown ([REDACTED]) keep their stored values.
      const current = await store.getGuardrail(request.gw.apiKey.workspace_id, id);
      if (!current) throw notFound('guardrail', id, 'id');
      body.guardrail = keepRedactedValues(
        body.guardrail,
        current.guardrail,
        'guardrail',
      ) as typeof body.guardrail;
      parseGuardrailDefinition(body.guardrail);
    }
    const workspaceId = request.gw.apiKey.workspace_id;
    const force = forced(request);
    if (body.guardrail !== undefined && !force) await recordMissingReferences(store, workspaceId);
    const guardrail = await store.transaction(async (tx) => {
      await tx.holdReferences(workspaceId);
      if (body.guardrail !== undefined) {
        await assertGuardrailDocumentsExist(tx, workspaceId, body.guardrail);
        const found = force ? undefined : await tx.getGuardrail(workspaceId, id);
        if (found) await refuseBreakingGuardrailChange(tx, found, body.guardrail);
        // What holds secrets in the calls it is sent would send them to its new addresses.
        if (found) {
          await refuseMovingSecrets(
            tx,
            workspaceId,
            { kind: 'guardrail', names: new Set([found.slug, found.id]) },
            { next: body.guardrail, stored: found.guardrail },
            {
              doing: `Changing where the guardrail "${found.slug}" sends the calls it checks`,
              param: 'guardrail',
            },
          );
        }
      }
      return tx.updateGuardrail(workspaceId, id, {
        ...body,
        ...(body.guardrail !== undefined && { references: guardrailReferences(body.guardrail) }),
      });
    });
    if (!guardrail) throw notFound('guardrail', id, 'id');
    return guardrailView(guardrail);
  });

  app.get('/guardrails/:id/versions', async (request) => {
    const id = pathParam(request.params, 'id');
    const workspaceId = request.gw.apiKey.workspace_id;
    // An empty list would not tell a missing guardrail from one without versions (there is none).
    const guardrail = await store.getGuardrail(workspaceId, id);
    if (!guardrail) throw notFound('guardrail', id, 'id');
    const versions = await store.listGuardrailVersions(workspaceId, guardrail.id);
    return listView(versions.map(guardrailVersionView));
  });

  app.delete('/guardrails/:id', async (request) => {
    const id = pathParam(request.params, 'id');
    const workspaceId = request.gw.apiKey.workspace_id;
    await recordMissingReferences(store, workspaceId);
    const guardrail = await store.transaction(async (tx) => {
      await tx.holdReferences(workspaceId);
      const found = await tx.getGuardrail(workspaceId, id);
      if (!found) throw notFound('guardrail', id, 'id');
      if (!forced(request)) await refuseBreakingGuardrailDeletion(tx, found);
      if (!(await tx.deleteGuardrail(workspaceId, found.id))) throw notFound('guardrail', id, 'id');
      return found;
    });
    return deletedView('guardrail', guardrail.id);
  });
}
