/**
 * What `modelWhitelist` and `modelRules` share: the model a call is judged by, and the verdict once the
 * allowed models are resolved. The model is the one the target will call (after a virtual key or
 * `override_params` set it), else the request's `model`: the request alone would let a config's override
 * slip past.
 */
import type { CheckContext, CheckVerdict } from '../check-types.js';

export function judgedModel(ctx: CheckContext): string | undefined {
  const requested = ctx.request.json.model;
  return ctx.model ?? (typeof requested === 'string' ? requested : undefined);
}

/**
 * Passes when the model is allowed. `rules` names the metadata rules that gave `allowed` (none: the
 * default list). No model, or no allowed model at all, fails: the reference gateway errs there, which its
 * engine counts as a pass, and an allow-list letting every model through is the opposite of its purpose.
 *
 * The explanation says what is listed, not what is allowed: with `not: true` (the engine's) the list is of
 * blocked models, as the reference gateway reads it, and the same sentence must stay true of the verdict.
 */
export function modelAccessVerdict(
  model: string | undefined,
  allowed: readonly string[],
  rules: readonly string[],
): CheckVerdict {
  if (model === undefined) {
    return { verdict: false, explanation: 'The call names no model.', data: { model: null, rules } };
  }
  if (allowed.length === 0) {
    return {
      verdict: false,
      explanation: 'No metadata rule matches the request and no default list is given: no model is listed.',
      data: { model, rules },
    };
  }
  const verdict = allowed.includes(model);
  return {
    verdict,
    explanation: verdict
      ? `Model "${model}" is one of the listed models.`
      : `Model "${model}" is not one of the listed models.`,
    data: { model, rules },
  };
}
