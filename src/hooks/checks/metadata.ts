/**
 * `default.metadata` {pairs, operator}: whether the request's metadata (x-gateway-metadata) holds all
 * (default), any or none of the key-value pairs, each value matched exactly. Before the request only, as
 * `requiredMetadataKeys`: it gates the call, and after the call the metadata is the same while the call has
 * been paid for. The reference gateway reads `not` itself; here the engine applies it, to the same effect.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';
import { OperatorSchema, operatorHolds } from './operator.js';

export const metadata = defineCheck({
  id: 'metadata',
  events: ['beforeRequestHook'],
  parameters: Type.Object(
    {
      // Metadata values are strings: a pair of another type would never match, so it is refused.
      pairs: Type.Record(Type.String({ minLength: 1 }), Type.String(), { minProperties: 1 }),
      operator: Type.Optional(OperatorSchema),
    },
    { additionalProperties: false },
  ),
  run(ctx, { pairs, operator = 'all' }) {
    const entries = Object.entries(pairs);
    const matches = ([key, value]: [string, string]) =>
      Object.hasOwn(ctx.metadata, key) && ctx.metadata[key] === value;
    const found = entries.filter(matches).map(([key]) => key);
    const missing = entries.filter((pair) => !matches(pair)).map(([key]) => key);
    const verdict = operatorHolds(operator, found.length, entries.length);
    return {
      verdict,
      explanation: `${found.length} of ${entries.length} metadata pairs match; operator '${operator}' ${verdict ? 'holds' : 'does not hold'}.`,
      data: { operator, found, missing },
    };
  },
});
