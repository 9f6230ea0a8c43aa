/**
 * `default.requiredMetadataKeys` {metadataKeys, operator}: whether the request's metadata (x-gateway-metadata)
 * has all (default), any or none of the keys. Before the request only, as in the seed: it gates the call, and
 * after the call the metadata is the same while the call has been paid for.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../built-in-check.js';
import { OperatorSchema, operatorHolds } from './operator.js';

export const requiredMetadataKeys = defineCheck({
  id: 'requiredMetadataKeys',
  events: ['beforeRequestHook'],
  parameters: Type.Object(
    {
      metadataKeys: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
      operator: Type.Optional(OperatorSchema),
    },
    { additionalProperties: false },
  ),
  run(ctx, parameters) {
    const operator = parameters.operator ?? 'all';
    const found = parameters.metadataKeys.filter((key) => Object.hasOwn(ctx.metadata, key));
    const missing = parameters.metadataKeys.filter((key) => !Object.hasOwn(ctx.metadata, key));
    const verdict = operatorHolds(operator, found.length, parameters.metadataKeys.length);
    return {
      verdict,
      explanation: `${found.length} of ${parameters.metadataKeys.length} metadata keys present; operator '${operator}' ${verdict ? 'holds' : 'does not hold'}.`,
      data: { operator, found, missing },
    };
  },
});
