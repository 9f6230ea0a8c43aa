import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/gateway/config/index.js';
import { GatewayError } from '../../src/core/errors.js';
import { evaluateCondition } from '../../src/gateway/routing/conditions.js';

function conditional(conditions: unknown[]): unknown {
  return {
    strategy: { mode: 'conditional', conditions, default: 'cheap' },
    targets: [
      { name: 'cheap', provider: 'openai', api_key: 'sk-a' },
      {
        name: 'nested',
        strategy: {
          mode: 'conditional',
          conditions: [{ query: { url: { $regex: '/chat/' } }, then: 'inner' }],
          default: 'inner',
        },
        targets: [{ name: 'inner', provider: 'openai', api_key: 'sk-b' }],
      },
    ],
  };
}

function parseError(raw: unknown): GatewayError {
  try {
    parseConfig(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('config was accepted');
}

describe('condition queries in the config rules', () => {
  it('accepts a valid conditional config, and the parsed query evaluates', () => {
    const config = parseConfig(
      conditional([{ query: { 'metadata.user_tier': { $in: ['pro'] } }, then: 'cheap' }]),
    );
    const query = config.strategy?.conditions?.[0].query;
    expect(evaluateCondition(query, { metadata: { user_tier: 'pro' }, params: {}, url: '/' })).toBe(true);
    expect(evaluateCondition(query, { metadata: { user_tier: 'free' }, params: {}, url: '/' })).toBe(false);
  });

  it('names the bad query of the root strategy', () => {
    const error = parseError(
      conditional([
        { query: { 'metadata.user_tier': 'pro' }, then: 'cheap' },
        { query: { $or: [{ 'params.model': 'a' }, { 'params.model': { $matches: 'b' } }] }, then: 'cheap' },
      ]),
    );
    expect(error.code).toBe('invalid_config');
    expect(error.param).toBe('config.strategy.conditions[1].query.$or[1]["params.model"].$matches');
  });

  it('names the bad query of a nested strategy', () => {
    const raw = conditional([{ query: { 'metadata.user_tier': 'pro' }, then: 'cheap' }]) as {
      targets: Array<{ strategy?: { conditions: unknown[] } }>;
    };
    raw.targets[1].strategy!.conditions = [{ query: { 'headers.x': 'y' }, then: 'inner' }];
    expect(parseError(raw).param).toBe('config.targets[1].strategy.conditions[0].query["headers.x"]');
  });
});
