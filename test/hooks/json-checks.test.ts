/**
 * default.jsonSchema and default.jsonKeys: the JSON is found in the whole text, a fenced block or the
 * braces' span; the schema is validated with Ajv at config time (unknown keywords refused) and its patterns
 * run on the linear-time engine.
 */
import { describe, expect, it } from 'vitest';
import { checkParameterError } from '../../src/hooks/registry.js';
import { jsonValuesIn } from '../../src/hooks/checks/json-in-text.js';
import { onAnswer, runCheck } from './support.js';

const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
  required: ['name', 'age'],
};

describe('jsonValuesIn', () => {
  it('finds the whole text, then fenced blocks, then the braces span', () => {
    expect(jsonValuesIn(' {"a":1} ')).toEqual([{ a: 1 }]);
    expect(jsonValuesIn('Here:\n```json\n{"a":1}\n```\nand\n```\n[2]\n```')).toEqual([{ a: 1 }, [2]]);
    expect(jsonValuesIn('Sure! {"a": {"b": 2}} Hope it helps.')).toEqual([{ a: { b: 2 } }]);
    expect(jsonValuesIn('no json here')).toEqual([]);
    expect(jsonValuesIn('"just a string"')).toEqual([]);
    expect(jsonValuesIn('```json\n{broken\n```')).toEqual([]);
  });

  it('is linear on 100 KB of unbalanced braces and fences', { timeout: 10_000 }, () => {
    expect(jsonValuesIn('{'.repeat(50_000) + '}'.repeat(50_000))).toEqual([]);
    expect(jsonValuesIn('```\n'.repeat(25_000))).toEqual([]);
  });
});

describe('default.jsonSchema', () => {
  it('passes valid JSON, fails invalid JSON with the first error, fails text without JSON', async () => {
    expect((await runCheck('jsonSchema', onAnswer('{"name":"Ann","age":3}'), { schema })).verdict).toBe(true);
    expect(
      (await runCheck('jsonSchema', onAnswer('```json\n{"name":"Ann","age":3}\n```'), { schema })).verdict,
    ).toBe(true);
    const bad = await runCheck('jsonSchema', onAnswer('{"name":"Ann","age":-1}'), { schema });
    expect(bad.verdict).toBe(false);
    expect(bad.data).toEqual({ found: true, error: { path: '/age', message: 'must be >= 0' } });
    const none = await runCheck('jsonSchema', onAnswer('I cannot do that.'), { schema });
    expect(none).toMatchObject({ verdict: false, data: { found: false } });
  });

  it('accepts a draft-07 schema and checks formats', async () => {
    const draft07 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required: ['x'] };
    expect(checkParameterError('jsonSchema', { schema: draft07 }, 'afterRequestHook')).toBeNull();
    expect((await runCheck('jsonSchema', onAnswer('{"x":1}'), { schema: draft07 })).verdict).toBe(true);
    const email = { type: 'object', properties: { e: { type: 'string', format: 'email' } } };
    expect((await runCheck('jsonSchema', onAnswer('{"e":"a@b.co"}'), { schema: email })).verdict).toBe(true);
    expect((await runCheck('jsonSchema', onAnswer('{"e":"nope"}'), { schema: email })).verdict).toBe(false);
  });

  it('reads a schema without $schema written for draft-07 (as Portkey reads it) as draft-07', async () => {
    const pair = { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false };
    expect(checkParameterError('jsonSchema', { schema: pair }, 'afterRequestHook')).toBeNull();
    expect((await runCheck('jsonSchema', onAnswer('["a", 1]'), { schema: pair })).verdict).toBe(true);
    expect((await runCheck('jsonSchema', onAnswer('["a", 1, 2]'), { schema: pair })).verdict).toBe(false);
    const dependent = { type: 'object', dependencies: { card: ['billing'] } };
    expect((await runCheck('jsonSchema', onAnswer('{"card":1}'), { schema: dependent })).verdict).toBe(false);
    expect(
      (await runCheck('jsonSchema', onAnswer('{"card":1,"billing":2}'), { schema: dependent })).verdict,
    ).toBe(true);
    // Draft 2020-12's own keywords still read as 2020-12.
    const tuple = { type: 'array', prefixItems: [{ type: 'string' }], items: false };
    expect((await runCheck('jsonSchema', onAnswer('["a"]'), { schema: tuple })).verdict).toBe(true);
    expect((await runCheck('jsonSchema', onAnswer('["a", 1]'), { schema: tuple })).verdict).toBe(false);
  });

  it('refuses a schema Ajv cannot use, a misspelt keyword, and an unsafe pattern, naming the field', () => {
    const problem = (s: unknown) =>
      checkParameterError('default.jsonSchema', { schema: s }, 'afterRequestHook');
    expect(problem({ type: 'object', requried: ['a'] })).toMatchObject({
      param: 'parameters.schema',
      message: expect.stringMatching(
        /^default\.jsonSchema: parameters\.schema is not a usable JSON Schema: .*requried/,
      ),
    });
    expect(problem({ type: 'strin' })?.param).toBe('parameters.schema');
    expect(problem({ type: 'string', pattern: '(?=a)' })?.message).toMatch(
      /not a supported regular expression/,
    );
    expect(problem('x')?.message).toBe('default.jsonSchema: parameters.schema must be an object');
  });

  it('keeps the patterns of one schema apart', async () => {
    const twoPatterns = {
      type: 'object',
      properties: { a: { type: 'string', pattern: '^a+$' }, b: { type: 'string', pattern: '^b+$' } },
    };
    expect(
      (await runCheck('jsonSchema', onAnswer('{"a":"aa","b":"bb"}'), { schema: twoPatterns })).verdict,
    ).toBe(true);
    expect(
      (await runCheck('jsonSchema', onAnswer('{"a":"aa","b":"aa"}'), { schema: twoPatterns })).verdict,
    ).toBe(false);
  });

  it('runs a catastrophic schema pattern on 100 KB in linear time', { timeout: 10_000 }, async () => {
    const evil = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
    const text = JSON.stringify({ s: `${'a'.repeat(100_000)}!` });
    expect((await runCheck('jsonSchema', onAnswer(text), { schema: evil })).verdict).toBe(false);
  });
});

describe('default.jsonKeys', () => {
  it('any / all / none over the top-level keys', async () => {
    const text = 'Result: {"id": 1, "name": "x"}';
    expect((await runCheck('jsonKeys', onAnswer(text), { keys: ['id', 'other'] })).verdict).toBe(true);
    const all = await runCheck('jsonKeys', onAnswer(text), { keys: ['id', 'other'], operator: 'all' });
    expect(all).toMatchObject({
      verdict: false,
      data: { operator: 'all', present: ['id'], missing: ['other'] },
    });
    expect((await runCheck('jsonKeys', onAnswer(text), { keys: ['secret'], operator: 'none' })).verdict).toBe(
      true,
    );
    expect((await runCheck('jsonKeys', onAnswer('{"a":{"id":1}}'), { keys: ['id'] })).verdict).toBe(false);
  });

  it('fails text with no JSON object, whatever the operator', async () => {
    expect((await runCheck('jsonKeys', onAnswer('[1,2]'), { keys: ['a'], operator: 'none' })).verdict).toBe(
      false,
    );
    expect((await runCheck('jsonKeys', onAnswer('plain'), { keys: ['a'], operator: 'none' })).verdict).toBe(
      false,
    );
  });

  it('refuses an empty key list', () => {
    expect(checkParameterError('jsonKeys', { keys: [] }, 'afterRequestHook')).toEqual({
      message: 'default.jsonKeys: parameters.keys must have at least 1 item',
      param: 'parameters.keys',
    });
  });
});
