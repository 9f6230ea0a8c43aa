/**
 * `default.modelWhitelist` {models, metadataRules}: passes when the model (model-access.ts) is one of the
 * allowed models (exact match).
 *
 * The allowed models are, as the reference gateway resolves them, those of every `metadataRules` entry
 * whose `metadataKey` the request's metadata holds with one of its `values`; when none matches, `models`.
 * Where that leaves no model (rules only, none matched) the check fails.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';
import { judgedModel, modelAccessVerdict } from './model-access.js';

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
    const matched = (metadataRules ?? []).filter((rule) => {
      const value = ctx.metadata[rule.metadataKey];
      return value !== undefined && rule.values.includes(value);
    });
    const allowed = matched.length > 0 ? matched.flatMap((rule) => rule.models) : (models ?? []);
    return modelAccessVerdict(
      judgedModel(ctx),
      allowed,
      matched.map((rule) => rule.metadataKey),
    );
  },
});
