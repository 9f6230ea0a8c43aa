import { describe, expect, it } from 'vitest';
import {
  cacheKey,
  canonicalJson,
  IGNORED_BODY_FIELDS,
  type CacheKeyInput,
} from '../../src/gateway/cache/index.js';

const base: CacheKeyInput = {
  workspaceId: 'ws_1',
  endpoint: 'chat',
  provider: 'openai',
  model: 'gpt-4o-mini',
  strict: true,
  headers: { 'content-type': 'application/json', 'x-request-id': 'abc' },
  body: {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Name a colour.' },
    ],
    temperature: 0,
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'c', schema: { type: 'object', properties: { a: {}, b: {} } } },
    },
  },
};

function withBody(extra: Record<string, unknown>): CacheKeyInput {
  return { ...base, body: { ...base.body, ...extra } };
}

describe('cacheKey', () => {
  it('is a SHA-256 in hex, the same for the same request', () => {
    const key = cacheKey(base);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheKey(structuredClone(base))).toBe(key);
  });

  it('is pinned: a change of the key makeup must bump its version, not silently reuse old entries', () => {
    expect(cacheKey(base)).toBe(PINNED_KEY);
  });

  it('does not depend on key order at any depth', () => {
    const reordered: CacheKeyInput = {
      headers: base.headers,
      strict: true,
      namespace: undefined,
      model: base.model,
      body: {
        response_format: {
          json_schema: { schema: { properties: { b: {}, a: {} }, type: 'object' }, name: 'c' },
          type: 'json_schema',
        },
        temperature: 0,
        messages: [
          { content: 'Be brief.', role: 'system' },
          { content: 'Name a colour.', role: 'user' },
        ],
        model: 'gpt-4o-mini',
      },
      provider: 'openai',
      endpoint: 'chat',
      workspaceId: 'ws_1',
    };
    expect(cacheKey(reordered)).toBe(cacheKey(base));
  });

  it('ignores fields that do not change the answer', () => {
    const key = cacheKey(base);
    expect(cacheKey(withBody({ user: 'end-user-42' }))).toBe(key);
    expect(cacheKey(withBody({ safety_identifier: 'hash' }))).toBe(key);
    expect(cacheKey(withBody({ metadata: { team: 'search' } }))).toBe(key);
    expect(cacheKey(withBody({ store: true }))).toBe(key);
    expect(cacheKey(withBody({ prompt_cache_key: 'k' }))).toBe(key);
    expect(cacheKey(withBody({ stream: false }))).toBe(key);
    expect(cacheKey(withBody({ stream: true, stream_options: { include_usage: true } }))).toBe(
      cacheKey(withBody({ stream: true })),
    );
    expect(cacheKey(withBody({ absent: undefined }))).toBe(key);
    expect([...IGNORED_BODY_FIELDS].sort()).toEqual(
      [
        'metadata',
        'prompt_cache_key',
        'safety_identifier',
        'store',
        'stream',
        'stream_options',
        'user',
      ].sort(),
    );
  });

  it('changes with every field that can change the answer', () => {
    const key = cacheKey(base);
    const variants: Record<string, unknown>[] = [
      { temperature: 0.1 },
      { temperature: 1 }, // an explicit default is not normalised away
      { seed: 1 },
      { n: 2 },
      { max_tokens: 10 },
      { tools: [{ type: 'function', function: { name: 'f' } }] },
      { messages: [{ role: 'user', content: 'Name a colour.' }] },
      { messages: [...(base.body.messages as unknown[])].reverse() },
      { response_format: { type: 'json_object' } },
      { model: 'gpt-4o' },
    ];
    const keys = variants.map((extra) => cacheKey(withBody(extra)));
    for (const other of keys) expect(other).not.toBe(key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('ignores headers but those that change the answer: Anthropic version and beta features', () => {
    const key = cacheKey(base);
    expect(cacheKey({ ...base, headers: { 'x-request-id': 'other', traceparent: 't' } })).toBe(key);
    const beta = (value: string) =>
      cacheKey({ ...base, headers: { ...base.headers, 'anthropic-beta': value } });
    const keys = [
      key,
      beta('interleaved-thinking-2025-05-14'),
      beta('context-1m-2025-08-07'),
      cacheKey({ ...base, headers: { 'anthropic-version': '2023-01-01' } }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('keeps strict and non-strict answers apart (their fields differ)', () => {
    expect(cacheKey({ ...base, strict: false })).not.toBe(cacheKey(base));
  });

  it('keeps streamed and non-streamed answers apart', () => {
    expect(cacheKey(withBody({ stream: true }))).not.toBe(cacheKey(base));
  });

  it('is partitioned by the namespace; no namespace is its own partition', () => {
    const none = cacheKey(base);
    const a = cacheKey({ ...base, namespace: 'team-a' });
    const b = cacheKey({ ...base, namespace: 'team-b' });
    expect(new Set([none, a, b]).size).toBe(3);
    expect(cacheKey({ ...base, namespace: null })).toBe(none);
    expect(cacheKey({ ...base, namespace: 'team-a' })).toBe(a);
  });

  it('is partitioned by workspace, endpoint, provider, address and model', () => {
    const keys = [
      cacheKey(base),
      cacheKey({ ...base, workspaceId: 'ws_2' }),
      cacheKey({ ...base, endpoint: 'completions' }),
      cacheKey({ ...base, provider: 'azure-openai' }),
      cacheKey({ ...base, host: 'http://10.0.0.5:8000/v1' }),
      cacheKey({ ...base, model: 'gpt-4o' }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('cannot be confused by values that look like key material', () => {
    // The namespace is JSON-escaped inside the material, so it cannot fake another field.
    const tricky = cacheKey({ ...base, namespace: 'a","workspace":"ws_2' });
    expect(tricky).not.toBe(cacheKey({ ...base, namespace: 'a', workspaceId: 'ws_2' }));
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1, { z: 0, y: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,1,{"y":1,"z":0}]},"b":1}',
    );
  });

  it('leaves out undefined members, writes null for undefined array items and non-finite numbers', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, Number.NaN], c: Number.POSITIVE_INFINITY })).toBe(
      '{"b":[null,null],"c":null}',
    );
  });

  it('writes numbers and strings as JSON does', () => {
    expect(canonicalJson({ n: 1.0, m: 1e21, s: 'é"\n', t: true })).toBe(
      '{"m":1e+21,"n":1,"s":"é\\"\\n","t":true}',
    );
    expect(JSON.parse(canonicalJson(base.body))).toEqual(base.body);
  });
});

const PINNED_KEY = '06ebf1625d71c4c5d24df0a1918e74dde79986bbde8408642f8f70a849a8b00c';

describe('cacheKey and the provider credential', () => {
  const withKey = (api_key: string | undefined, extra: Record<string, unknown> = {}): CacheKeyInput => ({
    ...base,
    target: { provider: 'openai', ...(api_key !== undefined && { api_key }), ...extra },
  });

  it('partitions by the credential the call is made with: another (or a wrong) key gets no answer of it', () => {
    expect(cacheKey(withKey('sk-alice'))).not.toBe(cacheKey(withKey('sk-mallory')));
    expect(cacheKey(withKey('sk-alice'))).not.toBe(cacheKey(withKey(undefined)));
    expect(cacheKey(withKey('sk-alice'))).toBe(cacheKey(withKey('sk-alice')));
  });

  it('partitions by AWS and service-account credentials as by an API key', () => {
    const aws = (secret: string) =>
      withKey(undefined, { cloudc_access_key_id: 'AKIA1', cloudc_secret_access_key: secret });
    expect(cacheKey(aws('one'))).not.toBe(cacheKey(aws('two')));
    const account = (private_key: string) =>
      withKey(undefined, { cloudb_service_account_json: { client_email: 'a@b', private_key } });
    expect(cacheKey(account('k1'))).not.toBe(cacheKey(account('k2')));
  });
});
