/**
 * A string item of `input_guardrails` / `output_guardrails` names a guardrail stored in the caller's
 * workspace. This is the one place it is resolved: the stored guardrail (its checks and outcomes, the
 * same object as an inline guardrail) becomes a hook through `guardrailSpec`, like the inline form.
 *
 * Until the store holds guardrails, every name is refused with a 400 rather than skipped: a guardrail
 * that silently let everything through would be a security hole. Wired to a lookup, the body becomes:
 *
 *   const stored = await deps.lookups.guardrailBySlug(workspaceId, ref.stored);
 *   if (!stored) throw <this 400>;
 *   return guardrailSpec(stored.guardrail, ref.event, ref.param, ref.stored);
 *
 * (`guardrailSpec` checks its checks and parameters like an inline guardrail's, naming `ref.param`.)
 */
import { GatewayError } from '../../core/errors.js';
import type { HookSpec, StoredGuardrailRef } from '../config/index.js';
import type { GatewayDeps } from '../pipeline-types.js';

export function resolveStoredGuardrail(
  _deps: GatewayDeps,
  _workspaceId: string,
  ref: StoredGuardrailRef,
): Promise<HookSpec> {
  return Promise.reject(
    new GatewayError('invalid_config', `${ref.param}: stored guardrail '${ref.stored}' not found`, {
      param: ref.param,
    }),
  );
}
