/**
 * The request front answers at once from the caches: a key the lookup cache holds is checked with no
 * promise, a header or inline config is resolved with no promise, a target that names its provider too,
 * and only what must be read from the store comes as a promise. Errors found at once are thrown at once;
 * those found after a read reject.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import { callContextFromRequest } from '../../src/gateway/call-context.js';
import type { RequestContext } from '../../src/gateway/context.js';
import { createLookups } from '../../src/gateway/lookups.js';
import { bearerToken, resolveRequestConfig } from '../../src/gateway/request-config.js';
import { resolveTarget } from '../../src/gateway/resolve-target.js';
import { authenticate } from '../../src/server/auth.js';
import type { ApiKey, Store, StoredConfig } from '../../src/store/types.js';

const key = {
  id: 'key_1',
  organisation_id: 'org_1',
  workspace_id: 'ws_1',
  status: 'active',
  expires_at: null,
  role: 'member',
} as unknown as ApiKey;

const stored = {
  id: 'cfg_1',
  slug: 'direct',
  workspace_id: 'ws_1',
  status: 'active',
  config: { provider: 'openai', api_key: 'sk-stored' },
} as unknown as StoredConfig;

/** A store that answers the two reads the front makes, and counts them (and the writes of a key's use). */
function fakeStore() {
  const reads = { keys: 0, configs: 0, credentials: 0, touches: 0 };
  const store = {
    async touchApiKey() {
      reads.touches += 1;
    },
    async findApiKeyByValue(value: string) {
      reads.keys += 1;
      return value === 'gw-good' ? key : value === 'gw-revoked' ? { ...key, status: 'revoked' } : undefined;
    },
    async getConfig(_workspace: string, slug: string) {
      reads.configs += 1;
      return slug === 'direct' ? stored : undefined;
    },
    async getCredential(_workspace: string, kind: string, slug: string) {
      reads.credentials += 1;
      return kind === 'virtual_key' && slug === 'vk-openai'
        ? {
            status: 'active',
            provider: 'openai',
            secret: {
              api_key: 'sk-virtual',
              vendora_organization: 'org-stored',
              vendora_project: 'proj-stored',
            },
          }
        : undefined;
    },
  } as unknown as Store;
  return { store, reads };
}

const headers = (value: string, more: Record<string, string> = {}) => ({
  'x-gateway-api-key': value,
  ...more,
});

describe('authenticate', () => {
  it('loads a key once (a promise), then checks it from the cache with no promise', async () => {
    const { store, reads } = fakeStore();
    const lookups = createLookups(store, 60_000);
    const first = authenticate(headers('gw-good'), lookups);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBe(key);
    const second = authenticate(headers('gw-good'), lookups);
    expect(second).toBe(key);
    expect(reads.keys).toBe(1);
    // Its use is written once, not at every request.
    expect(reads.touches).toBe(1);
  });

  it('refuses an unknown or revoked key: by rejection when read, by a throw once cached', async () => {
    const { store } = fakeStore();
    const lookups = createLookups(store, 60_000);
    for (const value of ['gw-unknown', 'gw-revoked']) {
      await expect(authenticate(headers(value), lookups)).rejects.toMatchObject({ code: 'invalid_api_key' });
      expect(() => authenticate(headers(value), lookups)).toThrow(GatewayError);
    }
  });

  it('throws at once for a missing key, with no read', () => {
    const { store, reads } = fakeStore();
    expect(() => authenticate({}, createLookups(store, 60_000))).toThrow(/x-gateway-api-key/);
    expect(reads.keys).toBe(0);
  });
});

describe('resolveRequestConfig and callContextFromRequest', () => {
  const request = {
    requestId: 'req_1',
    traceId: 'trace',
    spanId: 'span',
    parentSpanId: null,
    spanName: null,
    cacheNamespace: null,
    cacheForceRefresh: false,
    metadata: {},
    apiKey: key,
    startedAtMs: 0,
    startedAt: 0,
  } as unknown as RequestContext;
  const how = { method: 'POST', url: '/v1/chat/completions' };

  it('resolves provider headers and an inline config with no promise', () => {
    const { store, reads } = fakeStore();
    const lookups = createLookups(store, 60_000);
    const fromHeaders = resolveRequestConfig(
      { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-client' },
      'ws_1',
      lookups,
    );
    expect(fromHeaders).not.toBeInstanceOf(Promise);
    expect(fromHeaders).toMatchObject({ config: { provider: 'openai' }, stored: undefined });
    const inline = { 'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'sk-inline' }) };
    expect(resolveRequestConfig(inline, 'ws_1', lookups)).not.toBeInstanceOf(Promise);
    const ctx = callContextFromRequest(lookups, { ...request, headers: inline }, how);
    expect(ctx).not.toBeInstanceOf(Promise);
    expect(ctx).toMatchObject({ config: { provider: 'openai' }, url: '/v1/chat/completions' });
    expect(reads.configs).toBe(0);
  });

  it('looks a stored config up (a promise), and rejects one the workspace does not have', async () => {
    const { store } = fakeStore();
    const lookups = createLookups(store, 60_000);
    const resolved = resolveRequestConfig({ 'x-gateway-config': 'direct' }, 'ws_1', lookups);
    expect(resolved).toBeInstanceOf(Promise);
    expect(await resolved).toMatchObject({ stored: { id: 'cfg_1', slug: 'direct' } });
    const ctx = callContextFromRequest(
      lookups,
      { ...request, headers: { 'x-gateway-config': 'direct' } },
      how,
    );
    expect(ctx).toBeInstanceOf(Promise);
    expect(await ctx).toMatchObject({ storedConfig: { id: 'cfg_1' } });
    await expect(
      resolveRequestConfig({ 'x-gateway-config': 'missing' }, 'ws_1', lookups),
    ).rejects.toMatchObject({ code: 'config_not_found' });
  });

  it('throws at once when no provider is named', () => {
    const { store } = fakeStore();
    expect(() => resolveRequestConfig({}, 'ws_1', createLookups(store, 60_000))).toThrow(
      expect.objectContaining({ code: 'missing_provider' }),
    );
  });
});

describe('bearerToken', () => {
  it("reads an Authorization header's bearer token as `^Bearer\\s+(.+)$`, case-insensitive, on the value trimmed", () => {
    const asWritten = (value: string) => /^Bearer\s+(.+)$/i.exec(value.trim())?.[1].trim();
    const values = [
      'Bearer sk-123',
      'bearer sk-123',
      'BEARER \t sk 1 2 3 ',
      '  Bearer  sk-123  ',
      'Bearer\u00a0sk-123',
      'Bearer \n sk-123',
      'Bearer sk-1\n23',
      'Bearer sk-1\u2028x',
      'Bearer',
      'Bearer   ',
      'Bearersk-123',
      'Basic dXNlcjpwYXNz',
      'xBearer sk-123',
      'Bearer Bearer sk',
    ];
    for (const value of values) {
      expect(bearerToken({ authorization: value }), JSON.stringify(value)).toBe(asWritten(value));
    }
    expect(bearerToken({ authorization: 'Bearer sk-123' })).toBe('sk-123');
    expect(bearerToken({ authorization: 'Bearer \n sk-123' })).toBe('sk-123');
    expect(bearerToken({ authorization: 'Bearer sk-1\n23' })).toBeUndefined();
    expect(bearerToken({ authorization: ['Bearer first', 'Bearer second'] as never })).toBe('first');
    expect(bearerToken({})).toBeUndefined();
    expect(bearerToken({ authorization: '' })).toBeUndefined();
  });
});

describe('resolveTarget', () => {
  const resolve = (node: Record<string, unknown>, lookups: ReturnType<typeof createLookups>) =>
    resolveTarget(node as never, '', 'ws_1', 'sk-client', lookups, 'public');

  it('resolves a target that names its provider with no promise', () => {
    const { store, reads } = fakeStore();
    const resolved = resolve({ provider: 'openai' }, createLookups(store, 60_000));
    expect(resolved).not.toBeInstanceOf(Promise);
    expect(resolved).toMatchObject({ target: { provider: 'openai', api_key: 'sk-client' } });
    expect(() => resolve({ provider: 'nobody' }, createLookups(store, 60_000))).toThrow(
      expect.objectContaining({ code: 'unknown_provider' }),
    );
    expect(reads.credentials).toBe(0);
  });

  it('looks a virtual key up (a promise), and rejects one the workspace does not have', async () => {
    const { store } = fakeStore();
    const lookups = createLookups(store, 60_000);
    const resolved = resolve({ virtual_key: 'vk-openai' }, lookups);
    expect(resolved).toBeInstanceOf(Promise);
    expect(await resolved).toMatchObject({ target: { provider: 'openai', api_key: 'sk-virtual' } });
    await expect(resolve({ virtual_key: 'vk-missing' }, lookups)).rejects.toMatchObject({
      code: 'virtual_key_not_found',
    });
  });

  it('takes each provider setting from the node, else from the credential, and nothing else', async () => {
    const { store } = fakeStore();
    const lookups = createLookups(store, 60_000);
    const resolved = await resolve(
      {
        virtual_key: 'vk-openai',
        vendora_project: 'proj-node',
        vendora_organization: null,
        retry: { attempts: 2 },
      },
      lookups,
    );
    expect(resolved.target).toEqual({
      provider: 'openai',
      api_key: 'sk-virtual',
      vendora_organization: 'org-stored',
      vendora_project: 'proj-node',
    });
  });
});
