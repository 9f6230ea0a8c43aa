/**
 * `default.sentenceCount` {minSentences, maxSentences}: passes when the text's sentence count is within the
 * range. Sentences are found by Unicode sentence segmentation (Intl.Segmenter, UAX #29) rather than by
 * counting full stops as the seed does, so "Hello" is one sentence, "Wait... what?!" is two, and a
 * decimal point is none; segments with no letter or digit (a lone "..." or emoji line) are not counted.
 */
import { checkedText, defineCheck } from '../built-in-check.js';
import { countRange, countRangeRuleBreak, countRangeSchema, describeCount } from './count-range.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
const HAS_CONTENT = /[\p{L}\p{N}]/u;

export function countSentences(text: string): number {
  let count = 0;
  for (const { segment } of segmenter.segment(text)) if (HAS_CONTENT.test(segment)) count++;
  return count;
}

export const sentenceCount = defineCheck({
  id: 'sentenceCount',
  parameters: countRangeSchema('minSentences', 'maxSentences'),
  refine: (p) => countRangeRuleBreak(p, 'minSentences', 'maxSentences'),
  run(ctx, parameters) {
    const range = countRange(parameters, 'minSentences', 'maxSentences');
    const count = countSentences(checkedText(ctx));
    return {
      verdict: count >= range.min && count <= range.max,
      explanation: `The text has ${describeCount(count, 'sentence', range)}.`,
      data: { sentenceCount: count, minSentences: range.min, maxSentences: parameters.maxSentences ?? null },
    };
  },
});
