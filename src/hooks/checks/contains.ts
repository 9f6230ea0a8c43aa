/**
 * `default.contains` {words, operator}: whether the text contains any (default), all or none of the words or
 * phrases. Matching is a case-sensitive substring search, as the seed's users expect: "cat" is found in
 * "concatenate"; list the case variants you mean to catch.
 */
import { Type } from '@sinclair/typebox';
import { checkedText, defineCheck } from '../built-in-check.js';
import { OperatorSchema, operatorHolds } from './operator.js';

export const contains = defineCheck({
  id: 'contains',
  parameters: Type.Object(
    {
      words: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
      operator: Type.Optional(OperatorSchema),
    },
    { additionalProperties: false },
  ),
  run(ctx, parameters) {
    const operator = parameters.operator ?? 'any';
    const text = checkedText(ctx);
    const found: string[] = [];
    const missing: string[] = [];
    for (const word of parameters.words) (text.includes(word) ? found : missing).push(word);
    const verdict = operatorHolds(operator, found.length, parameters.words.length);
    return {
      verdict,
      explanation: `${found.length} of ${parameters.words.length} listed words found; operator '${operator}' ${verdict ? 'holds' : 'does not hold'}.`,
      data: { operator, found, missing },
    };
  },
});
