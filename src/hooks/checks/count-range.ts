/**
 * The shape shared by the counting checks (`wordCount`, `sentenceCount`, `characterCount`): an optional
 * minimum and maximum, both integers ≥ 0, the minimum not above the maximum. Either may be left out:
 * no minimum is 0, no maximum is unbounded.
 */
import { Type } from '@sinclair/typebox';
import type { ParameterRuleBreak } from '../built-in-check.js';

export function countRangeSchema<Min extends string, Max extends string>(min: Min, max: Max) {
  const bound = Type.Optional(Type.Integer({ minimum: 0 }));
  return Type.Object({ [min]: bound, [max]: bound } as Record<Min | Max, typeof bound>, {
    additionalProperties: false,
  });
}

export interface CountRange {
  min: number;
  max: number;
}

export function countRange(parameters: Record<string, number | undefined>, min: string, max: string) {
  return { min: parameters[min] ?? 0, max: parameters[max] ?? Infinity } satisfies CountRange;
}

export function countRangeRuleBreak(
  parameters: Record<string, number | undefined>,
  min: string,
  max: string,
): ParameterRuleBreak | null {
  const low = parameters[min];
  const high = parameters[max];
  if (low !== undefined && high !== undefined && low > high) {
    return { param: `parameters.${max}`, message: `must be at least ${min} (${low})` };
  }
  return null;
}

/**
 * "12 words, within 10 to 20" / "3 sentences, above the maximum of 2". ASCII only: the explanation is
 * spliced into every answer's `hook_results`, and one non-Latin-1 character would make V8 hold the whole
 * answer text at two bytes a character.
 */
export function describeCount(count: number, unit: string, range: CountRange): string {
  const counted = `${count} ${unit}${count === 1 ? '' : 's'}`;
  const bounds = range.max === Infinity ? `at least ${range.min}` : `${range.min} to ${range.max}`;
  if (count < range.min) return `${counted}, below the minimum of ${range.min}`;
  if (count > range.max) return `${counted}, above the maximum of ${range.max}`;
  return `${counted}, ${range.max === Infinity ? '' : 'within '}${bounds}`;
}
