/**
 * A stored job (a managed batch, a background response) runs its calls as the API key that created it,
 * which may since have been revoked, deleted or passed its expiry: such a key makes no more calls, as it
 * could make no request. Read from the store by the key's id (the job holds no key value, which is what
 * the lookups' cache is keyed by), before each background response's run, and before a batch's lines'
 * calls at most once a second a batch (BATCH_KEY_CHECK_MS, batch-worker.ts).
 */
import { GatewayError } from '../core/errors.js';
import type { ApiKeyRepository } from '../store/types.js';
import type { CallerKey } from './call-context.js';

/** The caller's key still exists, is active and unexpired. */
export async function callerKeyUsable(
  store: Pick<ApiKeyRepository, 'getApiKey'>,
  caller: CallerKey,
): Promise<boolean> {
  const key = await store.getApiKey(caller.workspace_id, caller.id);
  if (!key || key.status !== 'active') return false;
  return key.expires_at === null || key.expires_at * 1000 > Date.now();
}

export function callerKeyRevoked(what: string): GatewayError {
  return new GatewayError(
    'api_key_revoked',
    `The API key that created this ${what} has been revoked, deleted or has expired`,
  );
}
