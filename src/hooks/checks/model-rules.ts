/**
 * `default.modelRules` {rules: {defaults, metadata}}: the reference gateway's model access rules. Passes when
 * the model (model-access.ts) is allowed: the models every value of the request's metadata maps to under
 * `rules.metadata` (`{"tier": {"enterprise": ["gpt-4o"]}}`), all of them together; when none maps, the
 * `rules.defaults`. Where that leaves no model the check fails, as `modelWhitelist` does.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';
import { judgedModel, modelAccessVerdict } from './model-access.js';

const Names = Type.Array(Type.String({ minLength: 1 }), { minItems: 1 });

export const modelRules = defineCheck({
  id: 'modelRules',
  parameters: Type.Object(
    {
      rules: Type.Object(
        {
          defaults: Type.Optional(Names),
          metadata: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Names))),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
  refine({ rules }) {
    if (rules.defaults === undefined && Object.keys(rules.metadata ?? {}).length === 0) {
      return { param: 'parameters.rules', message: 'must give defaults or metadata' };
    }
    return null;
  },
  run(ctx, { rules }) {
    const allowed = new Set<string>();
    const matched: string[] = [];
    for (const [key, byValue] of Object.entries(rules.metadata ?? {})) {
      const value = ctx.metadata[key];
      if (value === undefined || !Object.hasOwn(byValue, value)) continue;
      matched.push(`${key}:${value}`);
      for (const model of byValue[value]!) allowed.add(model);
    }
    return modelAccessVerdict(
      judgedModel(ctx),
      matched.length > 0 ? [...allowed] : (rules.defaults ?? []),
      matched,
    );
  },
});
