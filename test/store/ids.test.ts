import { describe, expect, it } from 'vitest';
import { apiKeyDisplayPrefix, generateApiKeyValue } from '../../src/store/api-key-value.js';
import { newId, newOrganisationId } from '../../src/store/ids.js';

describe('newId', () => {
  it('is prefix + 26 Crockford base32 characters, sorting by creation time', () => {
    const early = newId('log', 1_700_000_000_000);
    const late = newId('log', 1_700_000_000_001);
    expect(early).toMatch(/^log_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(early < late).toBe(true);
    expect(newId('cfg')).not.toBe(newId('cfg'));
    expect(newOrganisationId()).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('uses all 80 random bits', () => {
    const tails = new Set(Array.from({ length: 2000 }, () => newId('key', 0).slice(14)));
    expect(tails.size).toBe(2000);
    // Every position of the random part takes many values, so no bits are stuck.
    for (let position = 0; position < 16; position++) {
      const values = new Set([...tails].map((tail) => tail[position]));
      expect(values.size).toBeGreaterThan(20);
    }
  });
});

describe('API key values', () => {
  it('are gw- + 43 base64url characters, shown by their first 8 after the prefix', () => {
    const value = generateApiKeyValue();
    expect(value).toMatch(/^gw-[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(value.slice(3), 'base64url')).toHaveLength(32);
    expect(apiKeyDisplayPrefix(value)).toBe(value.slice(3, 11));
    expect(apiKeyDisplayPrefix('my-admin-key-0123456789-abcdefgh')).toBe('my-admin');
    // A foreign value shows a quarter of itself at most: 5 of these 23 characters.
    expect(apiKeyDisplayPrefix('my-admin-key-0123456789')).toBe('my-ad');
  });
});
