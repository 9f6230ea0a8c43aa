/**
 * Stored provider credentials, in two flavours that share everything but their address: virtual keys
 * (`/v1/virtual-keys`, used as `x-gateway-virtual-key: <slug>`) and model-catalog providers
 * (`/v1/providers`, used as `@<slug>`). A credential is checked as a request would check it (the
 * provider must be known, custom_host must pass the gateway's policy) so a mistake shows up here
 * rather than on the first model call.
 */
import type { FastifyInstance } from 'fastify';
import { checkCustomHost } from '../../../gateway/custom-host.js';
import type { GatewayDeps } from '../../../gateway/deps.js';
import { refuseBreakingSettingsChange } from '../../../gateway/prompts/credential-settings-dependents.js';
import {
  recordMissingReferences,
  refuseBreakingCredentialDeletion,
  refuseBreakingProviderChange,
  shownCredential,
} from '../../../gateway/prompts/destination-dependents.js';
import { GatewayError } from '../../../core/errors.js';
import { fieldError } from '../../../core/validator/compile-validator.js';
import { findAdapter } from '../../../providers/registry.js';
import { sharedRequestTypeRefusal, type VertexCapacity } from '../../../providers/vertex-ai/index.js';
import { PROVIDER_TARGET_KEYS } from '../../../providers/types.js';
import { mergeSettings } from '../../../store/credential-settings.js';
import type { ProviderCredential, ProviderSecret } from '../../../store/types.js';
import { validateCreateCredential, validateUpdateCredential } from './body-schemas.js';
import { ADDRESS_FIELDS } from './redacted-values.js';
import { forced, notFound, pathParam, requireSomeField } from './route-helpers.js';
import { refuseCreatingUnderUsedName, refuseSendingSecretsElsewhere } from './secret-dependents.js';
import { credentialView, deletedView, isSecretSetting, listView } from './views.js';

export interface CredentialRoutes {
  /** `/virtual-keys` or `/providers`. */
  path: string;
  kind: ProviderCredential['kind'];
  /** For messages: "virtual key", "provider". */
  noun: string;
}

export const CREDENTIAL_ROUTES: readonly CredentialRoutes[] = [
  { path: '/virtual-keys', kind: 'virtual_key', noun: 'virtual key' },
  { path: '/providers', kind: 'provider', noun: 'provider' },
];

/** The canonical id of a provider name or alias; unknown names are refused. */
function canonicalProvider(name: string): string {
  const adapter = findAdapter(name);
  if (!adapter) {
    throw new GatewayError('unknown_provider', `Unknown provider "${name}"`, { param: 'provider' });
  }
  return adapter.id;
}

function checkSecret(secret: ProviderSecret, deps: GatewayDeps): void {
  if (typeof secret.custom_host === 'string') {
    checkCustomHost(secret.custom_host, deps.settings.customHostPolicy, 'custom_host');
  }
  // A Vertex AI service account's token endpoint is called as custom_host is.
  const account = secret.cloudb_service_account_json as Record<string, unknown> | undefined;
  if (typeof account?.token_uri === 'string') {
    checkCustomHost(
      account.token_uri,
      deps.settings.customHostPolicy,
      'cloudb_service_account_json.token_uri',
    );
  }
}

/** The settings Vertex AI's rule of `cloudb_shared_request_type` judges together. */
const VERTEX_CAPACITY_KEYS = ['cloudb_region', 'cloudb_request_type', 'cloudb_shared_request_type'];

/**
 * Settings Vertex AI would not serve together (vertex-ai-request-type.ts), refused as a config giving them
 * is: the credential's every call would fail, or ask for what Vertex never applies. Judged on the secret as
 * stored, a PATCH's settings merged in.
 */
function checkVertexCapacity(secret: ProviderSecret): void {
  const refusal = sharedRequestTypeRefusal(secret as VertexCapacity);
  if (refusal !== undefined) throw fieldError('invalid_body', 'cloudb_shared_request_type', refusal.reason);
}

function settingsOf(body: Record<string, unknown>): ProviderSecret {
  const secret: ProviderSecret = {};
  for (const key of PROVIDER_TARGET_KEYS) if (body[key] !== undefined) secret[key] = body[key];
  return secret;
}

/** The first field of a PATCH that changes where the credential sends its calls (its provider, custom_host,
 * or a setting a host is made from: redacted-values.ts, ADDRESS_FIELDS); undefined when none does. */
function movedBy(
  body: Record<string, unknown>,
  provider: string | undefined,
  current: ProviderCredential,
): string | undefined {
  if (provider !== undefined && provider !== current.provider) return 'provider';
  return ADDRESS_FIELDS.find(
    (field) =>
      field !== 'provider' &&
      body[field] !== undefined &&
      JSON.stringify(body[field]) !== JSON.stringify(current.secret[field] ?? null),
  );
}

/**
 * A PATCH that changes where the credential goes (movedBy) must send each stored secret again, or null it:
 * a secret the API never shows must not be carried to a host the caller picks, as configs' `[REDACTED]`
 * values never are (redacted-values.ts).
 */
function refuseCarriedSecrets(
  body: Record<string, unknown>,
  provider: string | undefined,
  current: ProviderCredential,
): void {
  const moved = movedBy(body, provider, current);
  if (moved === undefined) return;
  for (const [name, value] of Object.entries(current.secret)) {
    if (value === undefined || value === null || !isSecretSetting(name) || body[name] !== undefined) continue;
    throw new GatewayError(
      'invalid_body',
      `${name} must be sent again (or null) with a new ${moved}: a stored secret is never carried to another provider or host`,
      { param: name },
    );
  }
}

export async function registerCredentialRoutes(
  app: FastifyInstance,
  deps: GatewayDeps,
  routes: CredentialRoutes,
): Promise<void> {
  const { store } = deps;
  const { path, kind, noun } = routes;

  app.post(path, async (request) => {
    const body = validateCreateCredential(request.body);
    const provider = canonicalProvider(body.provider);
    const secret = settingsOf(body);
    checkSecret(secret, deps);
    checkVertexCapacity(secret);
    const force = forced(request);
    const caller = request.gw.apiKey;
    const workspaceId = caller.workspace_id;
    // Recorded outside the change's transaction, which a refusal rolls back.
    if (!force) await recordMissingReferences(store, workspaceId);
    const credential = await store.transaction(async (tx) => {
      await tx.holdReferences(workspaceId);
      if (!force) await refuseCreatingUnderUsedName(tx, workspaceId, kind, body.slug);
      return tx.createCredential({
        organisation_id: caller.organisation_id,
        workspace_id: workspaceId,
        kind,
        slug: body.slug,
        name: body.name ?? body.slug,
        provider,
        secret,
      });
    });
    return credentialView(credential);
  });

  app.get(path, async (request) => {
    const credentials = await store.listCredentials(request.gw.apiKey.workspace_id, kind);
    return listView(credentials.map(credentialView));
  });

  app.get(`${path}/:slug`, async (request) => {
    const slug = pathParam(request.params, 'slug');
    const credential = await store.getCredential(request.gw.apiKey.workspace_id, kind, slug);
    if (!credential) throw notFound(noun, slug, 'slug');
    return credentialView(credential);
  });

  app.patch(`${path}/:slug`, async (request) => {
    const slug = pathParam(request.params, 'slug');
    const body = validateUpdateCredential(request.body);
    requireSomeField(body, ['name', 'provider', ...PROVIDER_TARGET_KEYS]);
    // Read first: a bad `force` is a 400 even on a change that needs none.
    const force = forced(request);
    const workspaceId = request.gw.apiKey.workspace_id;
    const current = await store.getCredential(workspaceId, kind, slug);
    if (!current) throw notFound(noun, slug, 'slug');
    const provider = body.provider === undefined ? undefined : canonicalProvider(body.provider);
    // A host the policy refuses is named as such before anything is said of the secrets it would get.
    checkSecret(body as ProviderSecret, deps);
    // Judged here first, so that a PATCH carrying a secret is refused before anything else is judged of
    // it; and again against the credential as it is written (below), with a secret another PATCH stored
    // meanwhile.
    refuseCarriedSecrets(body, provider, current);
    // Settings left out are kept, settings sent as null are removed, others replace the stored value:
    // merged by the store into the secret as it is when written, so concurrent PATCHes keep each other's.
    const settings: Record<string, unknown> = {};
    for (const key of PROVIDER_TARGET_KEYS) if (body[key] !== undefined) settings[key] = body[key];
    // Vertex AI's capacity is judged when the PATCH changes it: a secret is rotated at once whatever else
    // the credential holds.
    const capacityChanged = VERTEX_CAPACITY_KEYS.some((key) => settings[key] !== undefined);
    const settingsSent = Object.keys(settings).length > 0;
    const checkWritten = (secret: ProviderSecret, stored: ProviderCredential) => {
      refuseCarriedSecrets(body, provider, stored);
      if (!settingsSent) return;
      checkSecret(secret, deps);
      if (capacityChanged) checkVertexCapacity(secret);
    };
    const patch = {
      ...(body.name !== undefined && { name: body.name }),
      ...(provider !== undefined && { provider }),
      ...(settingsSent && { settings }),
      check: checkWritten,
    };
    // Checked whenever a provider is sent: another PATCH may have changed it since `current` was read.
    const checkProvider = provider !== undefined && !force;
    // Settings that are not secrets are checked against what their calls need; a secret never is, so a
    // leaked key is replaced at once.
    const changing = force ? [] : Object.keys(settings).filter((key) => !isSecretSetting(key));
    const checked = checkProvider || changing.length > 0;
    if (checked) await recordMissingReferences(store, workspaceId);
    // Another provider, or settings, under what names the credential are checked in the transaction that
    // makes the change, as a delete is: a config or prompt naming it, stored meanwhile, is either seen
    // here or sees the change. Another checked PATCH of it waits for the same hold; one that is not (of
    // secrets only, or forced) may write between this read and the write, which merges this change into
    // the row as it is then: that one is never refused for what names the credential, so the outcome is
    // as if it had come just after this one (or, for a setting both send, just before). The secrets this
    // change must send again (refuseCarriedSecrets) are judged again in the write, on the row it writes.
    const updated = checked
      ? await store.transaction(async (tx) => {
          await tx.holdReferences(workspaceId);
          const found = await tx.getCredential(workspaceId, kind, current.id);
          if (!found) return undefined;
          // The credential on its own first: what it would be is refused whatever names it.
          if (capacityChanged) checkVertexCapacity(mergeSettings(found.secret, settings));
          if (checkProvider) await refuseBreakingProviderChange(tx, found, noun, provider);
          // What holds secrets outside it and sends them through it would send them to the new place.
          const moved = force || found.status !== 'active' ? undefined : movedBy(body, provider, found);
          if (moved !== undefined) {
            await refuseSendingSecretsElsewhere(
              tx,
              workspaceId,
              { kind, names: new Set([found.slug, found.id]) },
              {
                doing: `Changing where the ${noun} "${shownCredential(found)}" sends its calls (its ${moved})`,
                param: moved,
              },
            );
          }
          await refuseBreakingSettingsChange(
            tx,
            found,
            noun,
            { settings, changing, provider: provider ?? found.provider },
            deps.settings,
          );
          return tx.updateCredential(workspaceId, kind, found.id, patch);
        })
      : await store.updateCredential(workspaceId, kind, current.id, patch);
    if (!updated) throw notFound(noun, slug, 'slug');
    return credentialView(updated);
  });

  app.delete(`${path}/:slug`, async (request) => {
    const slug = pathParam(request.params, 'slug');
    const workspaceId = request.gw.apiKey.workspace_id;
    await recordMissingReferences(store, workspaceId);
    const deleted = await store.transaction(async (tx) => {
      await tx.holdReferences(workspaceId);
      const current = await tx.getCredential(workspaceId, kind, slug);
      if (!current) throw notFound(noun, slug, 'slug');
      if (!forced(request)) await refuseBreakingCredentialDeletion(tx, current, noun);
      if (!(await tx.deleteCredential(workspaceId, kind, current.id))) throw notFound(noun, slug, 'slug');
      return current;
    });
    return deletedView(kind, deleted.id);
  });
}
