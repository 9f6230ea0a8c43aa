/**
 * `default.characterCount` {minCharacters, maxCharacters}: passes when the text's length in characters
 * (Unicode code points, so an emoji counts once, not as its two UTF-16 units) is within the range.
 */
import { checkedText, defineCheck } from '../built-in-check.js';
import { countRange, countRangeRuleBreak, countRangeSchema, describeCount } from './count-range.js';

export function countCharacters(text: string): number {
  let count = 0;
  // for…of walks code points; counting surrogate pairs by hand would be the same thing, less clearly.
  for (const _ of text) count++;
  return count;
}

export const characterCount = defineCheck({
  id: 'characterCount',
  parameters: countRangeSchema('minCharacters', 'maxCharacters'),
  refine: (p) => countRangeRuleBreak(p, 'minCharacters', 'maxCharacters'),
  run(ctx, parameters) {
    const range = countRange(parameters, 'minCharacters', 'maxCharacters');
    const count = countCharacters(checkedText(ctx));
    return {
      verdict: count >= range.min && count <= range.max,
      explanation: `The text has ${describeCount(count, 'character', range)}.`,
      data: {
        characterCount: count,
        minCharacters: range.min,
        maxCharacters: parameters.maxCharacters ?? null,
      },
    };
  },
});
