/**
 * Where a config names the stored config or virtual key a model-judged check (`default.modelJudge`) asks
 * its judge through: the checks of a node's hook lists and of its inline guardrails, and those of a stored
 * guardrail's definition, each with its place. The index of what configs name
 * (prompts/destination-dependents.ts) and the check of those names when a config is stored
 * (named-documents.ts) both read them from here.
 */
import { canonicalCheckId } from '../../hooks/registry.js';

export const GUARDRAIL_LISTS = ['input_guardrails', 'output_guardrails'] as const;
const HOOK_LISTS = ['before_request_hooks', 'after_request_hooks'] as const;

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What a model-judged check names: the stored config or the virtual key it asks its judge through. */
export const JUDGE_KEYS = { config: 'config', virtual_key: 'virtual_key' } as const;

/** The model-judged checks of a guardrail definition (an inline guardrail item, or a stored guardrail's),
 * each with its key there (`default.modelJudge`): the keys naming a check hold its parameters. */
export function* guardrailJudges(
  item: Record<string, unknown>,
): Generator<{ at: string; parameters: Record<string, unknown> }> {
  for (const [key, value] of Object.entries(item)) {
    if (isRecord(value) && canonicalCheckId(key) === 'default.modelJudge')
      yield { at: key, parameters: value };
  }
}

/** The model-judged checks of a config node's hook and guardrail lists, each with its place in the node
 * (`input_guardrails[0].default.modelJudge`, `after_request_hooks[1].checks[0].parameters`). */
export function* nodeJudges(
  node: Record<string, unknown>,
): Generator<{ at: string; parameters: Record<string, unknown> }> {
  for (const list of HOOK_LISTS) {
    const hooks = node[list];
    if (!Array.isArray(hooks)) continue;
    for (const [i, hook] of hooks.entries()) {
      if (!isRecord(hook) || !Array.isArray(hook.checks)) continue;
      for (const [j, check] of hook.checks.entries()) {
        if (!isRecord(check) || typeof check.id !== 'string' || !isRecord(check.parameters)) continue;
        if (canonicalCheckId(check.id) !== 'default.modelJudge') continue;
        yield { at: `${list}[${i}].checks[${j}].parameters`, parameters: check.parameters };
      }
    }
  }
  for (const list of GUARDRAIL_LISTS) {
    const items = node[list];
    if (!Array.isArray(items)) continue;
    for (const [i, item] of items.entries()) {
      if (!isRecord(item)) continue;
      for (const judge of guardrailJudges(item)) yield { ...judge, at: `${list}[${i}].${judge.at}` };
    }
  }
}
