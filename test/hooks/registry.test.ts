/**
 * The registry: every check the issue names is there under `default.<id>` and its bare id, and a config's
 * check is refused, naming the check and the field, for an unknown id, bad parameters or the wrong event.
 */
import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_CHECKS,
  canonicalCheckId,
  checkParameterError,
  findCheck,
} from '../../src/hooks/registry.js';

describe('findCheck', () => {
  it('finds a check by default.<id> and by its bare id, and nothing else', () => {
    expect(findCheck('default.contains')?.id).toBe('contains');
    expect(findCheck('contains')).toBe(findCheck('default.contains'));
    expect(findCheck('default.nope')).toBeUndefined();
    expect(findCheck('portkey.contains')).toBeUndefined();
    expect(findCheck('default.Contains')).toBeUndefined();
    expect(canonicalCheckId('contains')).toBe('default.contains');
    expect(canonicalCheckId('default.contains')).toBe('default.contains');
  });

  // The reference gateway's current releases name the model allow-list `modelwhitelist` (earlier ones
  // `modelWhitelist`): a config written for either is refused by neither.
  it("takes the reference gateway's default.modelwhitelist for default.modelWhitelist", () => {
    expect(findCheck('default.modelwhitelist')).toBe(findCheck('default.modelWhitelist'));
    expect(findCheck('modelwhitelist')).toBe(findCheck('modelWhitelist'));
    expect(canonicalCheckId('default.modelwhitelist')).toBe('default.modelWhitelist');
    expect(
      checkParameterError('default.modelwhitelist', { models: ['gpt-4o-mini'] }, 'beforeRequestHook'),
    ).toBeNull();
    expect(findCheck('default.ModelWhitelist')).toBeUndefined();
  });

  it('has unique ids', () => {
    const ids = BUILT_IN_CHECKS.map((check) => check.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('checkParameterError', () => {
  it('accepts good parameters, `not` included, and missing parameters where none are required', () => {
    expect(
      checkParameterError('default.wordCount', { minWords: 1, maxWords: 5 }, 'beforeRequestHook'),
    ).toBeNull();
    expect(checkParameterError('wordCount', { minWords: 1, not: true }, 'afterRequestHook')).toBeNull();
    expect(checkParameterError('default.alluppercase', undefined, 'afterRequestHook')).toBeNull();
    expect(checkParameterError('default.alluppercase', { not: false }, 'afterRequestHook')).toBeNull();
  });

  it('names the check and the field of a bad parameter', () => {
    expect(checkParameterError('default.wordCount', { minWords: -1 }, 'beforeRequestHook')).toEqual({
      message: 'default.wordCount: parameters.minWords must be at least 0',
      param: 'parameters.minWords',
    });
    expect(checkParameterError('wordCount', { minWords: 1.5 }, 'beforeRequestHook')).toEqual({
      message: 'default.wordCount: parameters.minWords must be an integer',
      param: 'parameters.minWords',
    });
    expect(checkParameterError('default.contains', { words: 'x' }, 'beforeRequestHook')?.message).toBe(
      'default.contains: parameters.words must be an array',
    );
    expect(
      checkParameterError('default.contains', { words: ['x'], operator: 'some' }, 'beforeRequestHook'),
    ).toEqual({
      message: "default.contains: parameters.operator must be one of 'any', 'all', 'none'",
      param: 'parameters.operator',
    });
  });

  it('refuses unknown keys, naming them', () => {
    const problem = checkParameterError(
      'default.contains',
      { words: ['x'], oprator: 'all' },
      'beforeRequestHook',
    );
    expect(problem?.param).toBe('parameters.oprator');
    expect(problem?.message).toMatch(
      /^default\.contains: parameters\.oprator is not a known key \(allowed: words, operator\)$/,
    );
  });

  it('refuses a `not` that is not a boolean, and parameters that are not an object', () => {
    expect(checkParameterError('default.alluppercase', { not: 'yes' }, 'beforeRequestHook')).toEqual({
      message: 'default.alluppercase: parameters.not must be a boolean',
      param: 'parameters.not',
    });
    expect(checkParameterError('default.contains', ['x'], 'beforeRequestHook')).toEqual({
      message: 'default.contains: parameters must be an object',
      param: 'parameters',
    });
  });

  it('applies the rules a schema cannot say: a minimum above the maximum', () => {
    expect(
      checkParameterError('default.wordCount', { minWords: 5, maxWords: 2 }, 'beforeRequestHook'),
    ).toEqual({
      message: 'default.wordCount: parameters.maxWords must be at least minWords (5)',
      param: 'parameters.maxWords',
    });
  });

  it('refuses an unknown id, suggesting the id a wrong case meant', () => {
    expect(checkParameterError('default.nope', {}, 'beforeRequestHook')).toEqual({
      message: 'default.nope: is not a known check (see docs/guardrails.md for the built-in checks)',
      param: 'id',
    });
    expect(checkParameterError('default.allUppercase', {}, 'beforeRequestHook')?.message).toBe(
      'default.allUppercase: is not a known check (did you mean default.alluppercase?)',
    );
    expect(checkParameterError('acme.scan', {}, 'beforeRequestHook')?.message).toMatch(
      /^acme\.scan: is not a known check: only the built-in checks/,
    );
  });
});
