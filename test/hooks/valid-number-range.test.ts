/**
 * default.validNumberRange: whether the number the text is (or the config's `target`, as the reference
 * gateway reads it) lies within lowerLimit and upperLimit, both included; limits checked at validation.
 */
import { describe, expect, it } from 'vitest';
import { checkParameterError } from '../../src/hooks/registry.js';
import { context, onAnswer, onRequest, runCheck } from './support.js';

const range = { lowerLimit: 1, upperLimit: 10 };

describe('default.validNumberRange', () => {
  it('passes a text that is a number within the limits, both included', async () => {
    for (const text of ['1', ' 7 \n', '10', '2.5', '+3', '1e0']) {
      expect((await runCheck('validNumberRange', onAnswer(text), range)).verdict, text).toBe(true);
    }
    const result = await runCheck('validNumberRange', onAnswer('7'), range);
    expect(result.data).toEqual({ value: 7, lowerLimit: 1, upperLimit: 10 });
    expect(result.explanation).toBe('The number of the answer (7) is within the limits.');
  });

  it('fails a number outside them, and a text that is not a number', async () => {
    expect((await runCheck('validNumberRange', onAnswer('0.99'), range)).explanation).toBe(
      'The number of the answer (0.99) is below lowerLimit.',
    );
    expect((await runCheck('validNumberRange', onRequest('11'), range)).explanation).toBe(
      'The number of the request (11) is above upperLimit.',
    );
    for (const text of ['seven', '7 apples', '1,000', 'NaN', 'Infinity', '0x10', '.']) {
      const result = await runCheck('validNumberRange', onAnswer(text), range);
      expect(result.verdict, text).toBe(false);
      expect(result.data).toEqual({ value: null, lowerLimit: 1, upperLimit: 10 });
    }
  });

  it('takes one limit alone as unbounded on the other side', async () => {
    expect((await runCheck('validNumberRange', onAnswer('-1e9'), { upperLimit: 0 })).verdict).toBe(true);
    expect((await runCheck('validNumberRange', onAnswer('-1'), { lowerLimit: 0 })).verdict).toBe(false);
  });

  it("judges the config's target when given, as the reference gateway does", async () => {
    const ctx = context({ response: { choices: [] } });
    expect((await runCheck('validNumberRange', ctx, { ...range, target: 5 })).verdict).toBe(true);
    expect((await runCheck('validNumberRange', ctx, { ...range, target: 50 })).verdict).toBe(false);
  });

  it('refuses missing, crossed or non-numeric limits at validation, naming the field', () => {
    const problem = (parameters: unknown) =>
      checkParameterError('default.validNumberRange', parameters, 'afterRequestHook');
    expect(problem({})?.message).toBe(
      'default.validNumberRange: parameters.lowerLimit is required (or upperLimit)',
    );
    expect(problem({ lowerLimit: 5, upperLimit: 1 })?.message).toBe(
      'default.validNumberRange: parameters.upperLimit must be at least lowerLimit (5)',
    );
    expect(problem({ lowerLimit: '1', upperLimit: 2 })?.param).toBe('parameters.lowerLimit');
    expect(problem({ lowerLimit: 1, target: 'x' })?.param).toBe('parameters.target');
    expect(problem({ lowerLimit: 1, upperLimit: 1 })).toBeNull();
  });
});
