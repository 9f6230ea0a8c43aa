/**
 * default.regexMatch: a config's rule runs on the linear-time engine, so a rule that backtracks
 * catastrophically in JavaScript finishes on 100 KB of adversarial text, and a rule the engine cannot run
 * safely is refused at config validation, naming the field.
 */
import { describe, expect, it } from 'vitest';
import { checkParameterError } from '../../src/hooks/registry.js';
import { onAnswer, onRequest, runCheck } from './support.js';

describe('default.regexMatch', () => {
  it('passes when the rule matches, and says where without copying the match', async () => {
    const result = await runCheck('regexMatch', onRequest('order #12345 shipped'), { rule: '#\\d{5}' });
    expect(result.verdict).toBe(true);
    expect(result.data).toEqual({ rule: '#\\d{5}', match: { index: 6, length: 6 } });
    expect(JSON.stringify(result)).not.toContain('#12345');
    expect((await runCheck('regexMatch', onAnswer('no digits'), { rule: '\\d' })).verdict).toBe(false);
  });

  it('takes JavaScript syntax as the seed users write it: named groups, classes, (?i)', async () => {
    expect(
      (await runCheck('regexMatch', onRequest('Key: AB-12'), { rule: '(?<k>[A-Z]{2})-\\d+' })).verdict,
    ).toBe(true);
    expect((await runCheck('regexMatch', onRequest('HELLO'), { rule: '(?i)hello' })).verdict).toBe(true);
    expect((await runCheck('regexMatch', onRequest('HELLO'), { rule: '^hello$' })).verdict).toBe(false);
  });

  it('refuses lookaround, backreferences and broken patterns at validation, naming the field', () => {
    for (const rule of ['(?=x)a', '(a)\\1', '(unclosed']) {
      const problem = checkParameterError('default.regexMatch', { rule }, 'beforeRequestHook');
      expect(problem?.param).toBe('parameters.rule');
      expect(problem?.message).toMatch(
        /^default\.regexMatch: parameters\.rule is not a supported regular expression/,
      );
    }
    expect(checkParameterError('default.regexMatch', { rule: '' }, 'beforeRequestHook')?.param).toBe(
      'parameters.rule',
    );
    expect(checkParameterError('default.regexMatch', {}, 'beforeRequestHook')?.message).toBe(
      'default.regexMatch: parameters.rule is required',
    );
    expect(
      checkParameterError('default.regexMatch', { rule: 'a'.repeat(5000) }, 'beforeRequestHook')?.message,
    ).toBe('default.regexMatch: parameters.rule is longer than 4096 characters');
  });

  // In V8 each of these rules takes exponential (or quadratic) time on this input: minutes to forever at
  // 100 KB. On the linear engine each finishes well within the test's timeout; no clock is read.
  it('runs catastrophic rules on 100 KB of adversarial text', { timeout: 10_000 }, async () => {
    const text = `${'a'.repeat(100_000)}!`;
    for (const rule of ['^(a+)+$', '(a|aa)+$', '(a*)*b', '^(\\w+\\s?)*$', '[a-z]+@x']) {
      expect(checkParameterError('default.regexMatch', { rule }, 'beforeRequestHook')).toBeNull();
      expect((await runCheck('regexMatch', onRequest(text), { rule })).verdict).toBe(false);
    }
  });
});
