/**
 * `default.endsWith` {suffix}: passes when the text ends with the suffix, trailing white space ignored (models
 * often end with a newline). As in the seed, the suffix followed by a full stop also counts, so "Regards"
 * matches "… Regards.".
 */
import { Type } from '@sinclair/typebox';
import { checkedText, defineCheck } from '../built-in-check.js';

export const endsWith = defineCheck({
  id: 'endsWith',
  parameters: Type.Object({ suffix: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  run(ctx, { suffix }) {
    const text = checkedText(ctx).trimEnd();
    const verdict = text.endsWith(suffix) || text.endsWith(`${suffix}.`);
    return {
      verdict,
      explanation: verdict ? `The text ends with "${suffix}".` : `The text does not end with "${suffix}".`,
      data: { suffix },
    };
  },
});
