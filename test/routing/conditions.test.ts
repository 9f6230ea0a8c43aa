import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import {
  evaluateCondition,
  validateConditionQuery,
  type ConditionInput,
} from '../../src/gateway/routing/conditions.js';

const input: ConditionInput = {
  metadata: { user_tier: 'pro', region: 'eu', 'team.name': 'search', age: '42' },
  params: {
    model: 'gpt-4o',
    temperature: 0.2,
    max_tokens: 512,
    stream: false,
    stop: null,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hello there' },
    ],
    response_format: { type: 'json_object' },
  },
  url: '/v1/chat/completions',
};

/** Validates (as a config would be) and evaluates. */
function matches(query: Record<string, unknown>, on: ConditionInput = input): boolean {
  validateConditionQuery(query, 'q');
  return evaluateCondition(query, on);
}

function rejection(query: unknown, param = 'config.strategy.conditions[0].query'): GatewayError {
  try {
    validateConditionQuery(query, param);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error(`query was accepted: ${JSON.stringify(query)}`);
}

describe('condition operators', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['bare value', { 'metadata.user_tier': 'pro' }, { 'metadata.user_tier': 'free' }],
    ['$eq', { 'metadata.user_tier': { $eq: 'pro' } }, { 'metadata.user_tier': { $eq: 'Pro' } }],
    ['$ne', { 'metadata.user_tier': { $ne: 'free' } }, { 'metadata.user_tier': { $ne: 'pro' } }],
    ['$gt number', { 'params.temperature': { $gt: 0.1 } }, { 'params.temperature': { $gt: 0.2 } }],
    ['$gte number', { 'params.temperature': { $gte: 0.2 } }, { 'params.temperature': { $gte: 0.3 } }],
    ['$lt number', { 'params.max_tokens': { $lt: 1000 } }, { 'params.max_tokens': { $lt: 512 } }],
    ['$lte number', { 'params.max_tokens': { $lte: 512 } }, { 'params.max_tokens': { $lte: 511 } }],
    ['$gt string', { 'metadata.region': { $gt: 'de' } }, { 'metadata.region': { $gt: 'fr' } }],
    ['$lte string', { 'metadata.region': { $lte: 'eu' } }, { 'metadata.region': { $lte: 'et' } }],
    ['$in', { 'params.model': { $in: ['gpt-4o', 'gpt-4.1'] } }, { 'params.model': { $in: ['o3'] } }],
    ['$nin', { 'params.model': { $nin: ['o3'] } }, { 'params.model': { $nin: ['o3', 'gpt-4o'] } }],
    ['$regex', { 'params.model': { $regex: '^gpt-4' } }, { 'params.model': { $regex: '^gpt-5' } }],
    [
      '$regex with $options',
      { 'params.messages.1.content': { $regex: 'HELLO', $options: 'i' } },
      { 'params.messages.1.content': { $regex: 'HELLO' } },
    ],
    ['$exists true', { 'params.temperature': { $exists: true } }, { 'params.seed': { $exists: true } }],
    ['$exists false', { 'params.seed': { $exists: false } }, { 'params.model': { $exists: false } }],
    [
      '$not with operators',
      { 'params.model': { $not: { $in: ['o3'] } } },
      { 'params.model': { $not: { $regex: 'gpt' } } },
    ],
    [
      '$not with a query',
      { $not: { 'metadata.user_tier': 'free' } },
      { $not: { 'metadata.user_tier': 'pro' } },
    ],
    [
      '$and',
      { $and: [{ 'metadata.user_tier': 'pro' }, { 'metadata.region': 'eu' }] },
      { $and: [{ 'metadata.user_tier': 'pro' }, { 'metadata.region': 'us' }] },
    ],
    [
      '$or',
      { $or: [{ 'metadata.user_tier': 'free' }, { 'metadata.region': 'eu' }] },
      { $or: [{ 'metadata.user_tier': 'free' }, { 'metadata.region': 'us' }] },
    ],
    [
      'several keys are ANDed',
      { 'metadata.user_tier': 'pro', 'params.model': 'gpt-4o' },
      { 'metadata.user_tier': 'pro', 'params.model': 'o3' },
    ],
    [
      'several operators on one path are ANDed',
      { 'params.max_tokens': { $gt: 100, $lt: 1000 } },
      { 'params.max_tokens': { $gt: 100, $lt: 500 } },
    ],
    ['url', { url: '/v1/chat/completions' }, { url: '/v1/completions' }],
    ['url $regex', { url: { $regex: '/chat/' } }, { url: { $regex: '/embeddings$' } }],
  ];

  for (const [name, match, noMatch] of cases) {
    it(`${name}: matches`, () => expect(matches(match)).toBe(true));
    it(`${name}: does not match`, () => expect(matches(noMatch)).toBe(false));
  }

  it('an empty query matches everything', () => {
    expect(matches({})).toBe(true);
  });
});

describe('condition values and types', () => {
  it('compares numbers numerically, not lexically', () => {
    expect(matches({ 'params.max_tokens': { $gt: 99 } })).toBe(true); // "512" < "99" lexically
  });

  it('compares a string that writes a number (metadata values are strings) with a number operand', () => {
    expect(matches({ 'metadata.age': { $gt: 10 } })).toBe(true);
    expect(matches({ 'metadata.age': { $gte: 42, $lte: 42 } })).toBe(true);
    expect(matches({ 'metadata.age': { $lt: 9 } })).toBe(false); // "42" < "9" by code unit
    expect(matches({ 'metadata.region': { $gt: 0 } })).toBe(false);
    expect(matches({ 'metadata.age': 42 })).toBe(false); // equality never converts
  });

  it('never matches across types', () => {
    expect(matches({ 'metadata.age': { $gt: '10' } })).toBe(true);
    expect(matches({ 'params.max_tokens': '512' })).toBe(false);
    expect(matches({ 'params.max_tokens': { $lt: 'zzz' } })).toBe(false);
    expect(matches({ 'params.max_tokens': { $in: ['512'] } })).toBe(false);
    expect(matches({ 'params.max_tokens': { $regex: '512' } })).toBe(false);
  });

  it('missing paths: $eq and $in fail, $ne and $nin pass, null is only null', () => {
    expect(matches({ 'params.seed': 1 })).toBe(false);
    expect(matches({ 'params.seed': { $in: [1] } })).toBe(false);
    expect(matches({ 'params.seed': { $ne: 1 } })).toBe(true);
    expect(matches({ 'params.seed': { $nin: [1] } })).toBe(true);
    expect(matches({ 'params.seed': null })).toBe(false);
    expect(matches({ 'params.stop': null })).toBe(true);
    expect(matches({ 'params.stop': { $exists: true } })).toBe(true);
    expect(matches({ 'params.seed': { $gt: 0 } })).toBe(false);
  });

  it('compares objects and arrays as wholes', () => {
    expect(matches({ 'params.response_format': { type: 'json_object' } })).toBe(true);
    expect(matches({ 'params.response_format': { type: 'text' } })).toBe(false);
    expect(matches({ 'params.response_format': { $eq: { type: 'json_object', extra: 1 } } })).toBe(false);
    expect(matches({ 'params.response_format': { $in: [{ type: 'json_object' }] } })).toBe(true);
    expect(matches({ 'params.messages.0': { $eq: { role: 'system', content: 'You are terse.' } } })).toBe(
      true,
    );
  });

  it('booleans', () => {
    expect(matches({ 'params.stream': false })).toBe(true);
    expect(matches({ 'params.stream': { $ne: true } })).toBe(true);
    expect(matches({ 'params.stream': true })).toBe(false);
  });
});

describe('condition paths', () => {
  it('follows dotted paths into arrays', () => {
    expect(matches({ 'params.messages.0.role': 'system' })).toBe(true);
    expect(matches({ 'params.messages.1.role': 'system' })).toBe(false);
    expect(matches({ 'params.messages.1.content': { $regex: '^Hello' } })).toBe(true);
    expect(matches({ 'params.messages.5.role': { $exists: false } })).toBe(true);
    expect(matches({ 'params.messages.01.role': { $exists: true } })).toBe(false);
  });

  it('reads deep paths of any depth', () => {
    const deep: ConditionInput = { ...input, params: { a: { b: [{ c: { d: [0, { e: 'deep' }] } }] } } };
    expect(matches({ 'params.a.b.0.c.d.1.e': 'deep' }, deep)).toBe(true);
    expect(matches({ 'params.a.b.0.c.d.0.e': { $exists: true } }, deep)).toBe(false);
  });

  it('takes everything after metadata. as one key', () => {
    expect(matches({ 'metadata.team.name': 'search' })).toBe(true);
  });

  it('reaches own properties only', () => {
    expect(matches({ 'params.constructor': { $exists: true } })).toBe(false);
    expect(matches({ 'params.__proto__': { $exists: true } })).toBe(false);
    expect(matches({ 'params.messages.length': { $exists: true } })).toBe(false);
    expect(matches({ 'params.model.length': { $exists: true } })).toBe(false);
    expect(matches({ 'metadata.toString': { $exists: true } })).toBe(false);
  });

  it('nests logic', () => {
    const query = {
      $or: [
        { $and: [{ 'metadata.user_tier': 'pro' }, { $not: { 'params.model': { $regex: '^o' } } }] },
        { 'metadata.region': 'us' },
      ],
    };
    expect(matches(query)).toBe(true);
    expect(matches(query, { ...input, params: { ...input.params, model: 'o3' } })).toBe(false);
    expect(matches(query, { ...input, metadata: { region: 'us' }, params: { model: 'o3' } })).toBe(true);
  });
});

describe('evaluateCondition never throws', () => {
  const junkInputs: unknown[] = [
    null,
    undefined,
    42,
    'text',
    [],
    { metadata: null, params: null, url: null },
    { metadata: 'x', params: [1, 2], url: 5 },
    { params: { messages: 'not an array' } },
  ];
  const queries: Record<string, unknown>[] = [
    { 'metadata.user_tier': 'pro' },
    { 'params.messages.0.role': { $in: ['system'] } },
    { url: { $regex: 'chat' } },
    { $or: [{ 'params.a': { $gt: 1 } }, { $not: { 'metadata.b': { $exists: true } } }] },
  ];

  it('on junk inputs', () => {
    for (const query of queries) {
      for (const junk of junkInputs) {
        expect(() => evaluateCondition(query, junk as ConditionInput)).not.toThrow();
      }
    }
    expect(evaluateCondition({ 'params.seed': { $exists: false } }, null as unknown as ConditionInput)).toBe(
      true,
    );
    expect(evaluateCondition({ url: 'x' }, { url: 5 } as unknown as ConditionInput)).toBe(false);
  });

  it('on invalid queries, which never match', () => {
    expect(evaluateCondition({ 'params.model': { $bogus: 1 } }, input)).toBe(false);
    expect(evaluateCondition({ 'body.model': 'gpt-4o' }, input)).toBe(false);
    expect(evaluateCondition({ 'params.model': { $regex: '(' } }, input)).toBe(false);
    expect(evaluateCondition(null, input)).toBe(false);
    expect(evaluateCondition([{ 'params.model': 'gpt-4o' }], input)).toBe(false);
  });

  it('on inputs whose getters throw', () => {
    const hostile = {
      metadata: {},
      get params(): Record<string, unknown> {
        throw new Error('boom');
      },
      url: '/',
    };
    expect(evaluateCondition({ 'params.model': { $exists: false } }, hostile)).toBe(false);
  });

  it('a query first evaluated while invalid still fails validation', () => {
    const query = { 'params.model': { $in: 'gpt-4o' } };
    expect(evaluateCondition(query, input)).toBe(false);
    expect(rejection(query).param).toBe('config.strategy.conditions[0].query["params.model"].$in');
  });
});

describe('$regex runs in time linear in the value', () => {
  // On a backtracking engine `^(a+)+$` takes time doubling with each 'a' before the '!': seconds here.
  const value = `${'a'.repeat(27)}!`;
  const generousMs = 1000;

  it('answers a pathological pattern at once, validated first or not', () => {
    for (const validated of [true, false]) {
      const query = { 'metadata.x': { $regex: '^(a+)+$' } };
      if (validated) validateConditionQuery(query, 'q');
      const started = performance.now();
      expect(evaluateCondition(query, { metadata: { x: value }, params: {}, url: '/' })).toBe(false);
      expect(evaluateCondition(query, { metadata: { x: 'aaaa' }, params: {}, url: '/' })).toBe(true);
      expect(performance.now() - started).toBeLessThan(generousMs);
    }
  });

  it('keeps the meaning of the i, m, s and u flags', () => {
    const at = (query: Record<string, unknown>, x: string): boolean =>
      evaluateCondition(query, { metadata: { x }, params: {}, url: '/' });
    expect(at({ 'metadata.x': { $regex: '^b$' } }, 'a\nb')).toBe(false);
    expect(at({ 'metadata.x': { $regex: '^b$', $options: 'm' } }, 'a\nb')).toBe(true);
    expect(at({ 'metadata.x': { $regex: 'a.b' } }, 'a\nb')).toBe(false);
    expect(at({ 'metadata.x': { $regex: 'a.b', $options: 's' } }, 'a\nb')).toBe(true);
    expect(at({ 'metadata.x': { $regex: 'PRO' } }, 'pro')).toBe(false);
    expect(at({ 'metadata.x': { $regex: 'PRO', $options: 'iu' } }, 'pro')).toBe(true);
    expect(at({ 'metadata.x': { $regex: '^\\p{L}+$', $options: 'u' } }, 'été')).toBe(true);
    expect(at({ 'metadata.x': { $regex: '^(?<tier>pro|team)$' } }, 'team')).toBe(true);
  });
});

describe('validateConditionQuery names the exact place', () => {
  const root = 'config.strategy.conditions[0].query';
  const cases: Array<[string, unknown, string]> = [
    ['query not an object', ['x'], root],
    ['unknown field operator', { 'params.model': { $like: 'gpt' } }, `${root}["params.model"].$like`],
    ['unknown logical operator', { $xor: [] }, `${root}.$xor`],
    ['field operator at the top level', { $eq: 1 }, `${root}.$eq`],
    ['$in not an array', { 'params.model': { $in: 'gpt-4o' } }, `${root}["params.model"].$in`],
    ['$nin not an array', { 'params.model': { $nin: { a: 1 } } }, `${root}["params.model"].$nin`],
    ['$regex not a string', { 'params.model': { $regex: 5 } }, `${root}["params.model"].$regex`],
    ['$regex invalid', { 'params.model': { $regex: '([a-z]' } }, `${root}["params.model"].$regex`],
    ['$regex too long', { 'params.model': { $regex: 'a'.repeat(513) } }, `${root}["params.model"].$regex`],
    [
      '$regex with a lookahead',
      { 'params.model': { $regex: 'gpt(?=-4)' } },
      `${root}["params.model"].$regex`,
    ],
    ['$regex with a lookbehind', { 'metadata.x': { $regex: '(?<=a)b' } }, `${root}["metadata.x"].$regex`],
    ['$regex with a backreference', { url: { $regex: '(a)\\1' } }, `${root}["url"].$regex`],
    ['$regex with a named backreference', { url: { $regex: '(?<n>a)\\k<n>' } }, `${root}["url"].$regex`],
    ['$options bad flag', { url: { $regex: 'x', $options: 'g' } }, `${root}["url"].$options`],
    ['$options without $regex', { url: { $options: 'i' } }, `${root}["url"].$options`],
    ['$exists not boolean', { 'params.seed': { $exists: 1 } }, `${root}["params.seed"].$exists`],
    ['$gt object', { 'params.seed': { $gt: { a: 1 } } }, `${root}["params.seed"].$gt`],
    ['$lte boolean', { 'params.seed': { $lte: true } }, `${root}["params.seed"].$lte`],
    ['$lt NaN-like', { 'params.seed': { $lt: null } }, `${root}["params.seed"].$lt`],
    ['path not rooted', { 'body.model': 'x' }, `${root}["body.model"]`],
    ['bare root', { params: 'x' }, `${root}["params"]`],
    ['bare metadata root', { 'metadata.': 'x' }, `${root}["metadata."]`],
    ['url with a sub-path', { 'url.path': 'x' }, `${root}["url.path"]`],
    ['empty path segment', { 'params.a..b': 1 }, `${root}["params.a..b"]`],
    ['mixed operators and keys', { 'params.a': { $eq: 1, b: 2 } }, `${root}["params.a"]`],
    ['$or not an array', { $or: { 'params.a': 1 } }, `${root}.$or`],
    ['$and empty', { $and: [] }, `${root}.$and`],
    [
      'bad item inside $or',
      { $or: [{ 'params.a': 1 }, { 'params.b': { $in: 3 } }] },
      `${root}.$or[1]["params.b"].$in`,
    ],
    ['non-object item inside $or', { $or: [{ 'params.a': 1 }, 'x'] }, `${root}.$or[1]`],
    [
      'deeply nested',
      { $and: [{ $or: [{ $not: { 'params.a': { $not: { $bogus: 1 } } } }] }] },
      `${root}.$and[0].$or[0].$not["params.a"].$not.$bogus`,
    ],
    ['$not on a field with a value', { 'params.a': { $not: 3 } }, `${root}["params.a"].$not`],
    ['$not on a field with keys', { 'params.a': { $not: { b: 3 } } }, `${root}["params.a"].$not`],
    ['$not at the top with a non-object', { $not: [1] }, `${root}.$not`],
  ];

  for (const [name, query, param] of cases) {
    it(name, () => {
      const error = rejection(query);
      expect(error.code).toBe('invalid_config');
      expect(error.status).toBe(400);
      expect(error.param).toBe(param);
      expect(error.message.startsWith(param)).toBe(true);
    });
  }

  it('refuses queries nested past the depth bound', () => {
    let query: Record<string, unknown> = { 'params.a': 1 };
    for (let i = 0; i < 40; i++) query = { $not: query };
    expect(rejection(query).message).toMatch(/nested more than/);
  });

  it('says why a pattern the linear-time engine cannot run is refused', () => {
    expect(rejection({ 'metadata.x': { $regex: '(?<=a)b' } }).message).toMatch(
      /lookaround and backreferences/,
    );
  });

  it('accepts a regex of exactly the length bound', () => {
    expect(() => validateConditionQuery({ url: { $regex: 'a'.repeat(512) } }, 'q')).not.toThrow();
  });
});

describe('docs/conditions.md', () => {
  it('every example query validates', () => {
    const docPath = path.resolve(
      path.dirname(fileURLToPath(import.meta.url)),
      '..',
      '..',
      'docs',
      'conditions.md',
    );
    const examples = readFileSync(docPath, 'utf8')
      .split('## Examples')[1]
      .split('## Evaluation')[0]
      .match(/```json\n([\s\S]*?)```/g)!
      .map((block) => JSON.parse(block.slice('```json\n'.length, -3)) as Record<string, unknown>);
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const query of examples) expect(() => validateConditionQuery(query, 'doc')).not.toThrow();
    const [tier, systemAndTools, longGpt4, europe] = examples;
    expect(evaluateCondition(tier, input)).toBe(true);
    expect(evaluateCondition(systemAndTools, input)).toBe(false); // no tools
    expect(evaluateCondition(systemAndTools, { ...input, params: { ...input.params, tools: [] } })).toBe(
      true,
    );
    expect(evaluateCondition(longGpt4, input)).toBe(false); // max_tokens 512
    expect(evaluateCondition(europe, { ...input, metadata: { region: 'eu-west' }, params: {} })).toBe(true);
    expect(evaluateCondition(europe, { ...input, metadata: { region: 'eu-west' } })).toBe(false); // json_object
  });
});
