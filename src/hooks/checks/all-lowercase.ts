/**
 * `default.alllowercase` (no parameters): passes when the text has no uppercase letter, i.e. it reads the same
 * lower-cased. Text without letters passes.
 */
import { Type } from '@sinclair/typebox';
import { checkedText, defineCheck } from '../built-in-check.js';

export const allLowercase = defineCheck({
  id: 'alllowercase',
  parameters: Type.Object({}, { additionalProperties: false }),
  run(ctx) {
    const text = checkedText(ctx);
    const verdict = text === text.toLowerCase();
    return {
      verdict,
      explanation: verdict ? 'The text is all lowercase.' : 'The text has uppercase letters.',
    };
  },
});
