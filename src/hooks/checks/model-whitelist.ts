/**
 * `default.modelWhitelist` {models, metadataRules}: passes when the model is one of the allowed models
 * (exact match). The model is the one the target will call (after a virtual key or `override_params` set
 * it), else the request's `model`: the seed reads the request alone, which a config's override would slip
 * past. No model at all fails.
 *
 * The allowed models are, as the reference gateway resolves them, those of every `metadataRules` entry
 * whose `metadataKey` the request's metadata holds with one of its `values`; when none matches, `models`.
 * Where that leaves no model (rules only, none matched) the check fails: the reference gateway errs there,
 * which its engine counts as a pass, and an allow-list that lets every model through when a caller's
 * metadata matches no rule is the opposite of what it was written for.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';

const Names = Type.Array(Type.String({ minLength: 1 }), { minItems: 1 });

const MetadataRule = Type.Object(
  { metadataKey: Type.String({ minLength: 1 }), values: Names, models: Names },
  { additionalProperties: false },
);

export const modelWhitelist = defineCheck({
  id: 'modelWhitelist',
  parameters: Type.Object(
    { models: Type.Optional(Names), metadataRules: Type.Optional(Type.Array(MetadataRule)) },
    { additionalProperties: false },
  ),
  refine({ models, metadataRules }) {
    if (models === undefined && (metadataRules === undefined || metadataRules.length === 0)) {
      return { param: 'parameters.models', message: 'is required (or metadataRules)' };
    }
    return null;
  },
  run(ctx, { models, metadataRules }) {
    const requested = ctx.request.json.model;
    const model = ctx.model ?? (typeof requested === 'string' ? requested : undefined);
    if (model === undefined) {
      return { verdict: false, explanation: 'The call names no model.', data: { model: null } };
    }
    const matched = (metadataRules ?? []).filter((rule) => {
      const value = ctx.metadata[rule.metadataKey];
      return value !== undefined && rule.values.includes(value);
    });
    const allowed = matched.length > 0 ? matched.flatMap((rule) => rule.models) : (models ?? []);
    const rules = matched.map((rule) => rule.metadataKey);
    if (allowed.length === 0) {
      return {
        verdict: false,
        explanation: 'No metadata rule matches the request and no models list is given: no model is allowed.',
        data: { model, rules },
      };
    }
    const verdict = allowed.includes(model);
    return {
      verdict,
      explanation: verdict ? `Model "${model}" is allowed.` : `Model "${model}" is not in the allowed list.`,
      data: { model, rules },
    };
  },
});
