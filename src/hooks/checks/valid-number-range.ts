/**
 * `default.validNumberRange` {lowerLimit, upperLimit, target}: passes when a number lies within the limits,
 * both included.
 *
 * The number is `target` when the config gives one, as the reference gateway reads it (a verdict fixed by
 * the config, whatever the call); else the text, which must be a number and nothing else (white space
 * around it aside): an answer to "rate this from 1 to 10, the number only". A text that is not one fails.
 * A limit left out is unbounded on its side (the reference gateway fails every call without one: nothing
 * compares with a missing limit), but one of the two is required.
 */
import { Type } from '@sinclair/typebox';
import { checkedSubject, checkedText, defineCheck } from '../built-in-check.js';

/** A decimal number as written in text: sign, digits, a fraction, an exponent; no thousands separators. */
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function numberIn(text: string): number | null {
  const trimmed = text.trim();
  if (!NUMBER.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : null;
}

export const validNumberRange = defineCheck({
  id: 'validNumberRange',
  parameters: Type.Object(
    {
      lowerLimit: Type.Optional(Type.Number()),
      upperLimit: Type.Optional(Type.Number()),
      target: Type.Optional(Type.Number()),
    },
    { additionalProperties: false },
  ),
  refine({ lowerLimit, upperLimit }) {
    if (lowerLimit === undefined && upperLimit === undefined) {
      return { param: 'parameters.lowerLimit', message: 'is required (or upperLimit)' };
    }
    if (lowerLimit !== undefined && upperLimit !== undefined && lowerLimit > upperLimit) {
      return { param: 'parameters.upperLimit', message: `must be at least lowerLimit (${lowerLimit})` };
    }
    return null;
  },
  run(ctx, { lowerLimit, upperLimit, target }) {
    const value = target ?? numberIn(checkedText(ctx));
    const limits = { lowerLimit: lowerLimit ?? null, upperLimit: upperLimit ?? null };
    const from = target === undefined ? checkedSubject(ctx) : 'target';
    if (value === null) {
      return {
        verdict: false,
        explanation: `The text of ${from} is not a number.`,
        data: { value, ...limits },
      };
    }
    const low = lowerLimit ?? -Infinity;
    const high = upperLimit ?? Infinity;
    const verdict = value >= low && value <= high;
    const where = value < low ? 'below lowerLimit' : value > high ? 'above upperLimit' : 'within the limits';
    return {
      verdict,
      explanation: `The number of ${from} (${value}) is ${where}.`,
      data: { value, ...limits },
    };
  },
});
