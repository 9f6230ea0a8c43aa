/**
 * A setting out of its range stops the start with a message naming it, before anything is written: a
 * PORT past 65535 was taken, the first start's admin key made and printed, and the start then failed on
 * Node's own RangeError.
 */
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/settings.js';

describe('settings bounds', () => {
  it('refuses a PORT that is no TCP port', () => {
    expect(() => loadSettings({ PORT: '70000' })).toThrow(
      'Setting PORT must be an integer from 0 to 65535, got "70000"',
    );
    expect(() => loadSettings({ PORT: '-1' })).toThrow(
      'Setting PORT must be an integer from 0 to 65535, got "-1"',
    );
    expect(loadSettings({ PORT: '65535' }).port).toBe(65535);
    expect(loadSettings({ PORT: '0' }).port).toBe(0);
  });
});

describe('response cache bound', () => {
  it('refuses a GATEWAY_CACHE_MAX_BYTES under one byte, naming it', () => {
    // 0 was taken, and the start failed later, once the first start's admin key was made, on the memory
    // cache's own RangeError: the key was never shown.
    expect(() => loadSettings({ GATEWAY_CACHE_MAX_BYTES: '0' })).toThrow(
      'Setting GATEWAY_CACHE_MAX_BYTES must be an integer ≥ 1, got "0"',
    );
    expect(loadSettings({ GATEWAY_CACHE_MAX_BYTES: '1048576' }).cacheMaxBytes).toBe(1_048_576);
  });
});

describe('service URLs', () => {
  it('refuses a DATABASE_URL or REDIS_URL of another kind, without echoing it', () => {
    expect(() => loadSettings({ DATABASE_URL: 'mysql://root:s3cret@db/app' })).toThrow(
      'Setting DATABASE_URL must be a postgres:// or postgresql:// URL, got a mysql:// URL',
    );
    expect(() => loadSettings({ REDIS_URL: 'cache-host:6379' })).toThrow(
      'Setting REDIS_URL must be a redis:// or rediss:// URL, got a cache-host:// URL',
    );
    expect(() => loadSettings({ REDIS_URL: 'not a url with p4ss' })).toThrow(
      'Setting REDIS_URL must be a redis:// or rediss:// URL, got not a URL',
    );
    try {
      loadSettings({ DATABASE_URL: 'mysql://root:s3cret@db/app' });
    } catch (err) {
      expect((err as Error).message).not.toContain('s3cret');
    }
    expect(loadSettings({ DATABASE_URL: 'postgresql://u:p@127.0.0.1/test' }).databaseUrl).toBe(
      'postgresql://u:p@127.0.0.1/test',
    );
    expect(loadSettings({ REDIS_URL: 'rediss://:p@cache:6380/2' }).redisUrl).toBe('rediss://:p@cache:6380/2');
  });
});

describe('upstream answer bounds', () => {
  it('default to a whole answer of 256 MiB and an event of 64 MiB, within what one string holds', () => {
    // 2048 embeddings of 3072 dimensions are 90 to 150 MB of JSON.
    expect(loadSettings({}).upstreamLimits).toEqual({ answerBytes: 268_435_456, eventBytes: 67_108_864 });
    expect(
      loadSettings({ GATEWAY_UPSTREAM_ANSWER_MAX_BYTES: '4096', GATEWAY_UPSTREAM_EVENT_MAX_BYTES: '2048' })
        .upstreamLimits,
    ).toEqual({ answerBytes: 4096, eventBytes: 2048 });
    // A larger answer could not be read as one string.
    expect(() => loadSettings({ GATEWAY_UPSTREAM_ANSWER_MAX_BYTES: '1073741824' })).toThrow(
      'Setting GATEWAY_UPSTREAM_ANSWER_MAX_BYTES must be an integer from 1024 to 536870888, got "1073741824"',
    );
    expect(() => loadSettings({ GATEWAY_UPSTREAM_EVENT_MAX_BYTES: '10' })).toThrow(
      'Setting GATEWAY_UPSTREAM_EVENT_MAX_BYTES must be an integer from 1024 to 536870888, got "10"',
    );
  });

  it('judges the URLs checks probe as public unless GATEWAY_URL_CHECK_POLICY opts in', () => {
    expect(loadSettings({ GATEWAY_CUSTOM_HOST_POLICY: 'private' }).urlCheckPolicy).toBe('public');
    expect(loadSettings({ GATEWAY_URL_CHECK_POLICY: 'private' }).urlCheckPolicy).toBe('private');
    expect(() => loadSettings({ GATEWAY_URL_CHECK_POLICY: 'any' })).toThrow(
      'Setting GATEWAY_URL_CHECK_POLICY must be "private" or "public", got "any"',
    );
  });
});
