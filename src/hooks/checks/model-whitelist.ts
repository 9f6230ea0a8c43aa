/**
 * `default.modelWhitelist` {models}: passes when the model is one of the list (exact match). The model is the
 * one the target will call (after a virtual key or `override_params` set it), else the request's `model`:
 * the seed reads the request alone, which a config's override would slip past. No model at all fails.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';

export const modelWhitelist = defineCheck({
  id: 'modelWhitelist',
  parameters: Type.Object(
    { models: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }) },
    { additionalProperties: false },
  ),
  run(ctx, { models }) {
    const requested = ctx.request.json.model;
    const model = ctx.model ?? (typeof requested === 'string' ? requested : undefined);
    if (model === undefined) {
      return { verdict: false, explanation: 'The call names no model.', data: { model: null } };
    }
    const verdict = models.includes(model);
    return {
      verdict,
      explanation: verdict ? `Model "${model}" is allowed.` : `Model "${model}" is not in the allowed list.`,
      data: { model },
    };
  },
});
