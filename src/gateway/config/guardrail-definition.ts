/**
 * The definition of a stored guardrail: exactly the object a config's `input_guardrails` /
 * `output_guardrails` item takes inline (`{id?, deny?, async?, on_fail?, on_success?, "default.<check>":
 * {parameters}…}`), checked by the config's own schema for that item. Whatever is stored is therefore a
 * guardrail a config could carry inline, and the engine turns it into a hook the same way.
 *
 * The hook form (`{id, checks: [{id, parameters}]}`) is not stored: a string item of a guardrail list
 * names a stored guardrail, so the stored thing is what that list holds.
 */
import type { Static } from '@sinclair/typebox';
import { GatewayError } from '../../core/errors.js';
import { compileValidator, fieldError } from '../../core/validator/compile-validator.js';
import type { HookEvent } from '../../hooks/check-types.js';
import { checkParameterError, findCheck } from '../../hooks/registry.js';
import { OutputGuardrailSchema } from './hook-schemas.js';
import { engineParameterProblem } from './hook-specs.js';

/**
 * The object member of the guardrail item. The output side's, because it is the wider one (`on_fail`
 * and `on_success` may also `deny`) and one stored guardrail may be listed on either side.
 */
export const GuardrailDefinitionSchema = OutputGuardrailSchema.anyOf[1];
export type GuardrailDefinition = Static<typeof GuardrailDefinitionSchema>;

/** The keys that say how the guardrail behaves; every other key names a check. */
const OWN_KEYS = new Set(Object.keys(GuardrailDefinitionSchema.properties));

const validator = compileValidator(GuardrailDefinitionSchema, {
  code: 'invalid_config',
  rootPath: 'guardrail',
  subject: 'guardrail',
  rootParam: 'guardrail',
});

/**
 * Checks a definition sent to the management API; throws `invalid_config` naming the field
 * (`guardrail.on_fail.deny`, `guardrail.default.contains`) and returns it typed otherwise.
 */
export function parseGuardrailDefinition(raw: unknown): GuardrailDefinition {
  // The schema alone would say "must be an object", which does not help someone who wrote the hook form.
  if (raw !== null && typeof raw === 'object' && Array.isArray((raw as { checks?: unknown }).checks)) {
    throw fieldError(
      'invalid_config',
      'guardrail.checks',
      'is the hook form; a stored guardrail names each check as a key: {"default.contains": {"words": […]}}',
    );
  }
  const definition = validator.assert(raw);
  const checks = Object.entries(definition).filter(([key]) => !OWN_KEYS.has(key));
  if (checks.length === 0) {
    throw fieldError('invalid_config', 'guardrail', 'names no check (add a key such as "default.contains")');
  }
  checkGuardrailChecks(checks as Array<[string, Record<string, unknown>]>);
  return definition;
}

/**
 * The one place where the checks of a stored guardrail meet the check registry: each id must name a known
 * check and its parameters must be valid for it. A stored guardrail may be listed in `input_guardrails` or
 * `output_guardrails`, so a check is validated for the first side it can run on; the list that names it
 * decides, per call, whether it may run there. `timeout`, `on_error` and `is_enabled` (false: the check is
 * not read) are the hook engine's parameters,
 * not the check's, so the registry does not see them; they are held to the engine's limits here, so that a
 * stored guardrail never fails on them at call time. Throws `invalid_config` with `param`
 * `guardrail.<check id>` or `guardrail.<check id>.<field>`.
 */
export function checkGuardrailChecks(
  checks: ReadonlyArray<[id: string, parameters: Record<string, unknown>]>,
): void {
  for (const [id, raw] of checks) {
    const { timeout, on_error: onError, is_enabled: enabled, ...parameters } = raw;
    // A disabled check is not read, as inline (config/hook-specs.ts).
    if (enabled === false) continue;
    if (enabled !== undefined && enabled !== true) {
      throw fieldError('invalid_config', `guardrail.${id}.is_enabled`, 'must be a boolean');
    }
    checkEngineParameters(id, timeout, onError);
    // A check that says nothing of where it runs runs on both sides; its parameters are judged alike.
    const side: HookEvent = findCheck(id)?.events?.[0] ?? 'beforeRequestHook';
    const problem = checkParameterError(id, parameters, side);
    if (problem === null) continue;
    // The registry names the field relative to the check entry: `id`, `parameters`, `parameters.minWords`.
    const param = `guardrail.${id}${problem.param === 'id' ? '' : problem.param.replace(/^parameters/, '')}`;
    // The registry's message already names the check and the field within it.
    throw new GatewayError('invalid_config', `guardrail: ${problem.message}`, { param });
  }
}

/**
 * The checks of a definition (`default.requiredMetadataKeys` …) that cannot run on `event`'s side, disabled
 * ones left out: listed there, the guardrail makes every call a 400.
 */
export function checksNotRunningOn(definition: Record<string, unknown>, event: HookEvent): string[] {
  return Object.entries(definition)
    .filter(([key, value]) => !OWN_KEYS.has(key) && (value as { is_enabled?: unknown }).is_enabled !== false)
    .map(([key]) => key)
    .filter((id) => findCheck(id)?.events?.includes(event) === false);
}

/** The engine's limits on a check's `timeout` and fail mode, as for a check inline in a config. */
function checkEngineParameters(id: string, timeout: unknown, onError: unknown): void {
  const problem = engineParameterProblem(timeout, onError);
  if (problem !== null)
    throw fieldError('invalid_config', `guardrail.${id}.${problem.field}`, problem.message);
}
