/**
 * `default.alluppercase` (no parameters): passes when the text has no lowercase letter, i.e. it reads the same
 * upper-cased. Text without letters (digits, punctuation, empty) passes, as in the seed.
 */
import { Type } from '@sinclair/typebox';
import { checkedText, defineCheck } from '../built-in-check.js';

export const allUppercase = defineCheck({
  id: 'alluppercase',
  parameters: Type.Object({}, { additionalProperties: false }),
  run(ctx) {
    const text = checkedText(ctx);
    const verdict = text === text.toUpperCase();
    return {
      verdict,
      explanation: verdict ? 'The text is all uppercase.' : 'The text has lowercase letters.',
    };
  },
});
