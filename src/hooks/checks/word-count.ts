/**
 * `default.wordCount` {minWords, maxWords}: passes when the text's word count is within the range. A word is
 * a run of non-space characters holding at least one letter or digit, so a lone dash or emoji is not one.
 */
import { checkedText, defineCheck } from '../built-in-check.js';
import { countRange, countRangeRuleBreak, countRangeSchema, describeCount } from './count-range.js';

const WORD_LIKE = /[\p{L}\p{N}]/u;

export function countWords(text: string): number {
  let count = 0;
  for (const token of text.split(/\s+/)) if (WORD_LIKE.test(token)) count++;
  return count;
}

export const wordCount = defineCheck({
  id: 'wordCount',
  parameters: countRangeSchema('minWords', 'maxWords'),
  refine: (p) => countRangeRuleBreak(p, 'minWords', 'maxWords'),
  run(ctx, parameters) {
    const range = countRange(parameters, 'minWords', 'maxWords');
    const count = countWords(checkedText(ctx));
    return {
      verdict: count >= range.min && count <= range.max,
      explanation: `The text has ${describeCount(count, 'word', range)}.`,
      data: { wordCount: count, minWords: range.min, maxWords: parameters.maxWords ?? null },
    };
  },
});
