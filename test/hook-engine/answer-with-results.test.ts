/**
 * `hook_results` spliced into an upstream answer's text: the result is the answer with the key added, for
 * any JSON object's text, and the results' text it carries is exactly the one given.
 */
import { describe, expect, it } from 'vitest';
import { spliceResults } from '../../src/gateway/hooks/answer-with-results.js';

const results = { before_request_hooks: [{ id: 'in', verdict: true }], after_request_hooks: [] };
const resultsText = JSON.stringify(results);

describe('spliceResults', () => {
  it.each([
    ['an answer with keys', '{"id":"x","choices":[{"index":0}]}'],
    ['an answer ending with white space', '{"id":"x"}\n  \r\n\t'],
    ['an empty object', '{}'],
    ['an empty object with white space inside', '{ \n }\n'],
    ['an answer whose last value is an object', '{"usage":{"total_tokens":3}}'],
  ])('adds hook_results as the last key of %s', (_name, answerText) => {
    const spliced = spliceResults(answerText, resultsText);
    const parsed = JSON.parse(spliced?.text ?? 'null') as Record<string, unknown>;
    expect(parsed).toEqual({ ...(JSON.parse(answerText) as object), hook_results: results });
    expect(Object.keys(parsed).at(-1)).toBe('hook_results');
    expect(spliced?.resultsText).toBe(resultsText);
  });

  it.each([
    ['an array', '[{"id":"x"}]'],
    ['text after the object', '{"id":"x"} trailing'],
    ['white space only', ' \n'],
  ])('leaves %s alone', (_name, answerText) => {
    expect(spliceResults(answerText, resultsText)).toBeUndefined();
  });
});
