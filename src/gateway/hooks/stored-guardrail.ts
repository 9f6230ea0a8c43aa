/**
 * A string item of `input_guardrails` / `output_guardrails` names a guardrail stored in the caller's
 * workspace (docs/management-api.md, "Guardrails"). This is the one place it is resolved: the stored
 * definition (the same object as an inline guardrail) becomes a hook through `guardrailSpec`, which checks
 * its checks and parameters like an inline guardrail's, naming the config item.
 *
 * The lookup goes through the node's cache, which every node drops when the guardrail changes (the
 * invalidation path configs use), so an update is enforced everywhere at once. A name the workspace does
 * not hold is a 400, never a skipped guardrail.
 */
import { GatewayError } from '../../core/errors.js';
import type { Repositories, StoredGuardrail } from '../../store/types.js';
import { guardrailSpec, type HookSpec, type StoredGuardrailRef } from '../config/index.js';
import type { GatewayDeps } from '../pipeline-types.js';

/** Specs built from a cached definition, per list and place: the lookup hands out one shared object per
 * version, so a call does not re-validate the definition each time. */
const specsOf = new WeakMap<StoredGuardrail, Map<string, HookSpec>>();

export async function resolveStoredGuardrail(
  deps: GatewayDeps,
  workspaceId: string,
  ref: StoredGuardrailRef,
): Promise<HookSpec> {
  const stored = await deps.lookups.guardrailBySlug(workspaceId, ref.stored);
  if (!stored) throw notFound(ref);
  let specs = specsOf.get(stored);
  if (!specs) specsOf.set(stored, (specs = new Map()));
  const key = `${ref.event}\u0000${ref.param}`;
  let spec = specs.get(key);
  if (!spec) {
    spec = guardrailSpec(
      stored.guardrail as Parameters<typeof guardrailSpec>[0],
      ref.event,
      ref.param,
      ref.stored,
    );
    specs.set(key, spec);
  }
  return spec;
}

function notFound(ref: StoredGuardrailRef): GatewayError {
  return new GatewayError('invalid_config', `${ref.param}: stored guardrail '${ref.stored}' not found`, {
    param: ref.param,
  });
}

/**
 * The stored guardrails a config names are still there, read from `store`: the transaction that stores
 * the config, holding the workspace's references (holdReferences), so a guardrail deleted since the
 * config was checked is not named by it once stored. The same 400 as a call's.
 */
export async function assertStoredGuardrailsExist(
  store: Pick<Repositories, 'getGuardrail'>,
  workspaceId: string,
  refs: readonly StoredGuardrailRef[],
): Promise<void> {
  for (const ref of refs) if (!(await store.getGuardrail(workspaceId, ref.stored))) throw notFound(ref);
}
