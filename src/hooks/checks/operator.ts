/** The `operator` of `contains`, `jsonKeys` and `requiredMetadataKeys`: how many of the listed items must be present. */
import { Type } from '@sinclair/typebox';

export const OperatorSchema = Type.Union([Type.Literal('any'), Type.Literal('all'), Type.Literal('none')]);
export type Operator = 'any' | 'all' | 'none';

/** any: at least one found; all: none missing; none: none found. */
export function operatorHolds(operator: Operator, found: number, total: number): boolean {
  switch (operator) {
    case 'any':
      return found > 0;
    case 'all':
      return found === total;
    case 'none':
      return found === 0;
  }
}
