/**
 * The config's four hook lists as the engine runs them: `before_request_hooks` and `input_guardrails`
 * are the hooks before the call, `after_request_hooks` and `output_guardrails` those after it. A
 * guardrail is shorthand for a hook of type `guardrail` (its extra keys are its checks, its `deny` the
 * hook's `on_fail.deny`), so both forms become the same HookSpec and behave alike.
 *
 * Every check id and its parameters are checked here, when the config is validated: an unknown id or a
 * bad parameter is a 400 naming the check and the field, never a surprise mid-request. The engine's own
 * parameters (`not`, `timeout`, `on_error`, `is_enabled`) are taken out before the check's schema sees the
 * rest; a check with `is_enabled: false` is left out of its hook, unread.
 *
 * A string item names a stored guardrail; it is kept as a reference and resolved per call
 * (hooks/stored-guardrail.ts), since only the call knows its workspace.
 */
import type { CheckDefinition, HookEvent } from '../../hooks/check-types.js';
import { GatewayError } from '../../core/errors.js';
import { fieldError } from '../../core/validator/compile-validator.js';
import { canonicalCheckId, checkParameterError, findCheck } from '../../hooks/registry.js';
import type { GatewayConfig } from './config-schema.js';
import type { AfterRequestHook, BeforeRequestHook, InputGuardrail, OutputGuardrail } from './hook-schemas.js';

/** How long a check may take when its parameters set no `timeout`. */
export const DEFAULT_CHECK_TIMEOUT_MS = 5_000;
const MAX_CHECK_TIMEOUT_MS = 300_000;

/**
 * Why the engine cannot use a check's `timeout` (milliseconds) or fail mode (`on_error`), null when it
 * can: the one rule for both, inline in a config and in a stored guardrail.
 */
export function engineParameterProblem(
  timeout: unknown,
  onError: unknown,
): { field: 'timeout' | 'on_error'; message: string } | null {
  if (
    timeout !== undefined &&
    (typeof timeout !== 'number' ||
      !Number.isInteger(timeout) ||
      timeout < 1 ||
      timeout > MAX_CHECK_TIMEOUT_MS)
  ) {
    return {
      field: 'timeout',
      message: `must be an integer of milliseconds from 1 to ${MAX_CHECK_TIMEOUT_MS}`,
    };
  }
  if (onError !== undefined && onError !== 'pass' && onError !== 'fail') {
    return { field: 'on_error', message: "must be 'pass' or 'fail'" };
  }
  return null;
}

export interface Feedback {
  value?: number;
  weight?: number;
  metadata?: Record<string, unknown>;
}

export interface HookOutcomeSpec {
  deny: boolean;
  feedback: Feedback | undefined;
}

export interface CheckSpec {
  /** As results name it: `default.contains`, whichever form the config used. */
  id: string;
  definition: CheckDefinition;
  /** The check's own parameters (the engine's `not`, `timeout`, `on_error` taken out). */
  parameters: Record<string, unknown>;
  not: boolean;
  timeoutMs: number;
  /** What a check that errs or times out counts as. */
  onError: 'pass' | 'fail';
}

export interface HookSpec {
  id: string;
  event: HookEvent;
  type: 'guardrail' | 'mutator';
  async: boolean;
  sequential: boolean;
  onFail: HookOutcomeSpec;
  onSuccess: HookOutcomeSpec;
  checks: CheckSpec[];
}

/** A string item of a guardrail list: a stored guardrail, resolved per call. */
export interface StoredGuardrailRef {
  stored: string;
  event: HookEvent;
  /** Where the item is in the config, e.g. `config.input_guardrails[1]`. */
  param: string;
}

export type HookItem = HookSpec | StoredGuardrailRef;

export function isStoredRef(item: HookItem): item is StoredGuardrailRef {
  return 'stored' in item;
}

/** The hooks of one config node, before and after the call, in the order they are listed. */
export interface NodeHooks {
  before: readonly HookItem[];
  after: readonly HookItem[];
}

type HookList = readonly (BeforeRequestHook | AfterRequestHook)[];
type GuardrailList = readonly (InputGuardrail | OutputGuardrail)[];

// Lists are inherited by reference (routing/inherit.ts), and a parsed config keeps them: each is read once.
const specsOfList = new WeakMap<object, readonly HookItem[]>();
const EMPTY: readonly HookItem[] = [];

/** The stored guardrails a config tree names (string items of its guardrail lists), in every node. */
export function storedGuardrailRefs(node: GatewayConfig, path: string): StoredGuardrailRef[] {
  const { before, after } = hooksOf(node, path);
  const refs = [...before, ...after].filter(isStoredRef);
  node.targets?.forEach((target, i) => refs.push(...storedGuardrailRefs(target, `${path}.targets[${i}]`)));
  return refs;
}

/** Whether a node has any hook at all: the one test a call without hooks pays. An empty list (a config
 * whose last guardrail was taken out) holds none. */
export function hasHooks(node: GatewayConfig): boolean {
  return (
    holdsAny(node.before_request_hooks) ||
    holdsAny(node.after_request_hooks) ||
    holdsAny(node.input_guardrails) ||
    holdsAny(node.output_guardrails)
  );
}

function holdsAny(list: readonly unknown[] | undefined): boolean {
  return list !== undefined && list.length > 0;
}

/** The node's hooks; throws `invalid_config` naming the field for any bad check. */
export function hooksOf(node: GatewayConfig, path: string): NodeHooks {
  return {
    before: concat(
      hookList(node.before_request_hooks, 'beforeRequestHook', path, 'before_request_hooks'),
      guardrailList(node.input_guardrails, 'beforeRequestHook', path, 'input_guardrails'),
    ),
    after: concat(
      hookList(node.after_request_hooks, 'afterRequestHook', path, 'after_request_hooks'),
      guardrailList(node.output_guardrails, 'afterRequestHook', path, 'output_guardrails'),
    ),
  };
}

/** Checks every hook of a node and its targets (config validation). */
export function checkHooks(node: GatewayConfig, path: string): void {
  if (hasHooks(node)) hooksOf(node, path);
  node.targets?.forEach((target, i) => checkHooks(target, `${path}.targets[${i}]`));
}

function concat(a: readonly HookItem[], b: readonly HookItem[]): readonly HookItem[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  return [...a, ...b];
}

// The list's path (`<node>.<key>`) names a bad check at config validation; a call reading the kept specs
// never builds it.
function hookList(
  list: HookList | undefined,
  event: HookEvent,
  node: string,
  key: string,
): readonly HookItem[] {
  if (list === undefined) return EMPTY;
  let specs = specsOfList.get(list);
  if (specs === undefined) {
    const path = `${node}.${key}`;
    specs = list.map((hook, i) => hookSpec(hook, event, `${path}[${i}]`));
    specsOfList.set(list, specs);
  }
  return specs;
}

function guardrailList(
  list: GuardrailList | undefined,
  event: HookEvent,
  node: string,
  key: string,
): readonly HookItem[] {
  if (list === undefined) return EMPTY;
  let specs = specsOfList.get(list);
  if (specs === undefined) {
    specs = list.map((item, i): HookItem => {
      const param = `${node}.${key}[${i}]`;
      return typeof item === 'string'
        ? { stored: item, event, param }
        : guardrailSpec(item, event, param, `${key}[${i}]`);
    });
    specsOfList.set(list, specs);
  }
  return specs;
}

function hookSpec(hook: BeforeRequestHook | AfterRequestHook, event: HookEvent, path: string): HookSpec {
  const checks = (hook.checks ?? []).flatMap((check, i) =>
    // A disabled check is left out unread, as the reference gateway skips it.
    check.is_enabled === false || (check.parameters as { is_enabled?: unknown }).is_enabled === false
      ? []
      : [
          checkSpec(
            check.id,
            check.parameters,
            event,
            `${path}.checks[${i}]`,
            `${path}.checks[${i}].parameters`,
          ),
        ],
  );
  const type = hook.type ?? 'guardrail';
  const onFail = outcomeOf(hook.on_fail);
  // Where the reference gateway reads it; as a guardrail's, it is the hook's on_fail.deny.
  if (hook.deny !== undefined) onFail.deny = hook.deny;
  return {
    id: hook.id,
    event,
    type,
    async: hook.async === true,
    // A mutator's checks each rewrite what the one before left, as the reference gateway runs them: run
    // side by side, each would rewrite the original and only the last rewrite would stand.
    sequential: hook.sequential === true || type === 'mutator',
    onFail,
    onSuccess: outcomeOf(hook.on_success),
    checks,
  };
}

/** A guardrail item's own keys; each other key names a check. */
const GUARDRAIL_KEYS: ReadonlySet<string> = new Set([
  'id',
  'type',
  'deny',
  'async',
  'sequential',
  'on_fail',
  'on_success',
]);

/**
 * A guardrail as the hook it is shorthand for: `{id, type, deny, async, on_fail, on_success, "<check>": {…}}`
 * is `{id, type (default "guardrail"), async, on_fail: {…on_fail, deny}, on_success, checks: [{id,
 * parameters}]}`.
 * Exported so that a stored guardrail, once loaded, becomes a hook the same way.
 */
export function guardrailSpec(
  guardrail: Exclude<InputGuardrail | OutputGuardrail, string>,
  event: HookEvent,
  path: string,
  defaultId: string,
): HookSpec {
  const checks: CheckSpec[] = [];
  let named = 0;
  for (const [key, value] of Object.entries(guardrail)) {
    if (GUARDRAIL_KEYS.has(key)) continue;
    named += 1;
    // `is_enabled: false` among a check's parameters leaves it out unread, as the reference gateway does.
    if ((value as Record<string, unknown>).is_enabled === false) continue;
    checks.push(checkSpec(key, value as Record<string, unknown>, event, `${path}.${key}`, `${path}.${key}`));
  }
  if (named === 0) {
    throw fieldError('invalid_config', path, 'names no check (add a key such as "default.contains")');
  }
  const onFail = outcomeOf(guardrail.on_fail);
  if (guardrail.deny !== undefined) onFail.deny = guardrail.deny;
  const type = guardrail.type ?? 'guardrail';
  return {
    id: typeof guardrail.id === 'string' && guardrail.id.length > 0 ? guardrail.id : defaultId,
    event,
    type,
    async: guardrail.async === true,
    // As a hook's: a mutator's checks each rewrite what the one before left.
    sequential: guardrail.sequential === true || type === 'mutator',
    onFail,
    onSuccess: outcomeOf(guardrail.on_success),
    checks,
  };
}

function outcomeOf(outcome: { deny?: boolean; feedback?: Feedback } | undefined): HookOutcomeSpec {
  return { deny: outcome?.deny === true, feedback: outcome?.feedback };
}

function checkSpec(
  id: string,
  raw: Record<string, unknown>,
  event: HookEvent,
  idPath: string,
  parametersPath: string,
): CheckSpec {
  // The engine's own parameters; the check's schema sees the rest (and `not`, which it knows too).
  const { timeout, on_error: onError, is_enabled: enabled, ...parameters } = raw;
  if (enabled !== undefined && typeof enabled !== 'boolean') {
    throw fieldError('invalid_config', `${parametersPath}.is_enabled`, 'must be a boolean');
  }
  const problem = checkParameterError(id, parameters, event);
  if (problem !== null) {
    // The registry names the field relative to the check entry (`id`, `parameters.minWords`).
    const param =
      problem.param === 'id' ? idPath : `${parametersPath}${problem.param.replace(/^parameters/, '')}`;
    throw new GatewayError('invalid_config', `${param}: ${problem.message}`, { param });
  }
  const name = canonicalCheckId(id);
  const engineProblem = engineParameterProblem(timeout, onError);
  if (engineProblem !== null) {
    throw checkFieldError(name, `${parametersPath}.${engineProblem.field}`, engineProblem.message);
  }
  const { not, ...own } = parameters;
  return {
    id: name,
    definition: findCheck(id) as CheckDefinition,
    parameters: own,
    not: not === true,
    timeoutMs: typeof timeout === 'number' ? timeout : DEFAULT_CHECK_TIMEOUT_MS,
    onError: onError === 'fail' ? 'fail' : 'pass',
  };
}

function checkFieldError(check: string, path: string, message: string): GatewayError {
  return new GatewayError('invalid_config', `${path} ${message} (check '${check}')`, { param: path });
}
