/**
 * `default.jsonKeys` {keys, operator}: whether the JSON object the text carries (json-in-text.ts) has any
 * (default), all or none of the keys at its top level. With several candidate objects, the first one for
 * which the operator holds passes. No JSON object in the text fails, whatever the operator.
 */
import { Type } from '@sinclair/typebox';
import { checkedText, defineCheck } from '../built-in-check.js';
import { jsonValuesIn } from './json-in-text.js';
import { OperatorSchema, operatorHolds } from './operator.js';

export const jsonKeys = defineCheck({
  id: 'jsonKeys',
  parameters: Type.Object(
    {
      keys: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
      operator: Type.Optional(OperatorSchema),
    },
    { additionalProperties: false },
  ),
  run(ctx, parameters) {
    const operator = parameters.operator ?? 'any';
    const objects = jsonValuesIn(checkedText(ctx)).filter(
      (value): value is Record<string, unknown> =>
        typeof value === 'object' && value !== null && !Array.isArray(value),
    );
    if (objects.length === 0) {
      return {
        verdict: false,
        explanation: 'The text holds no JSON object.',
        data: { operator, found: null },
      };
    }
    let best: { present: string[]; missing: string[] } | null = null;
    for (const object of objects) {
      const present = parameters.keys.filter((key) => Object.hasOwn(object, key));
      const missing = parameters.keys.filter((key) => !Object.hasOwn(object, key));
      if (operatorHolds(operator, present.length, parameters.keys.length)) {
        return {
          verdict: true,
          explanation: `Operator '${operator}' holds: ${present.length} of ${parameters.keys.length} keys present.`,
          data: { operator, present, missing },
        };
      }
      best ??= { present, missing };
    }
    return {
      verdict: false,
      explanation: `Operator '${operator}' does not hold: ${best!.present.length} of ${parameters.keys.length} keys present.`,
      data: { operator, ...best },
    };
  },
});
