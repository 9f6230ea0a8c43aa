/**
 * default.metadata: whether the request's metadata holds all, any or none of the configured key-value
 * pairs (values matched exactly), before the request only; pairs checked at validation.
 */
import { describe, expect, it } from 'vitest';
import { checkParameterError } from '../../src/hooks/registry.js';
import { onRequest, runCheck } from './support.js';

const pairs = { team: 'search', env: 'prod' };
const on = (metadata: Record<string, string>) => onRequest('hi', { metadata });

describe('default.metadata', () => {
  it('passes by default when every pair matches exactly, and says which matched', async () => {
    const all = await runCheck('metadata', on({ team: 'search', env: 'prod', user: 'u1' }), { pairs });
    expect(all).toMatchObject({
      verdict: true,
      data: { operator: 'all', found: ['team', 'env'], missing: [] },
    });
    const wrongValue = await runCheck('metadata', on({ team: 'search', env: 'Prod' }), { pairs });
    expect(wrongValue).toMatchObject({ verdict: false, data: { found: ['team'], missing: ['env'] } });
    expect(wrongValue.explanation).toBe("1 of 2 metadata pairs match; operator 'all' does not hold.");
  });

  it('reads any and none', async () => {
    const one = on({ env: 'prod' });
    expect((await runCheck('metadata', one, { pairs, operator: 'any' })).verdict).toBe(true);
    expect((await runCheck('metadata', one, { pairs, operator: 'none' })).verdict).toBe(false);
    expect((await runCheck('metadata', on({}), { pairs, operator: 'none' })).verdict).toBe(true);
    expect((await runCheck('metadata', on({}), { pairs, operator: 'any' })).verdict).toBe(false);
  });

  it('does not take a key the metadata lacks for one inherited by every object', async () => {
    const result = await runCheck('metadata', on({}), { pairs: { toString: 'x' }, operator: 'any' });
    expect(result.verdict).toBe(false);
  });

  it('is refused on the answer, and without pairs or with a non-string value, naming the field', () => {
    const problem = (
      parameters: unknown,
      event: 'beforeRequestHook' | 'afterRequestHook' = 'beforeRequestHook',
    ) => checkParameterError('default.metadata', parameters, event);
    expect(problem({ pairs }, 'afterRequestHook')?.param).toBe('id');
    expect(problem({})?.message).toBe('default.metadata: parameters.pairs is required');
    expect(problem({ pairs: {} })?.param).toBe('parameters.pairs');
    expect(problem({ pairs: { tier: 1 } })?.param).toMatch(/^parameters\.pairs/);
    expect(problem({ pairs, operator: 'some' })?.param).toBe('parameters.operator');
    expect(problem({ pairs, operator: 'none', not: true })).toBeNull();
  });
});
