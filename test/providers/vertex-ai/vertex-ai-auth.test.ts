// The service-account token exchange against the fake Vertex token endpoint (JWT-bearer grant, RS256).
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError, ProviderError } from '../../../src/core/errors.js';
import { createUpstreamClient } from '../../../src/gateway/upstream.js';
import { authenticateVertex, clearVertexTokenCache } from '../../../src/providers/vertex-ai/index.js';
import { VertexTokenCache } from '../../../src/providers/vertex-ai/vertex-ai-auth.js';
import type { ProviderTarget } from '../../../src/providers/types.js';
import { startFakeVertex, type FakeVertex } from '../../fakes/vertex-ai/server.js';

let fake: FakeVertex;
const signal = new AbortController().signal;
// The gateway's sender under the default policy, which lets the exchange reach the fake on 127.0.0.1.
const upstream = createUpstreamClient('private');
const sender = upstream.ownRequests;

function target(json: Record<string, unknown> = { ...fake.serviceAccount }): ProviderTarget {
  return {
    provider: 'vertex-ai',
    cloudb_region: 'us-central1',
    cloudb_project_id: 'p',
    cloudb_service_account_json: json,
  };
}

beforeAll(async () => {
  fake = await startFakeVertex();
});
afterAll(async () => {
  await fake?.close();
  await upstream.close();
});
beforeEach(() => {
  clearVertexTokenCache();
  fake.refuseTokens(false);
});

describe('vertex-ai authenticate', () => {
  it('obtains an access token from the token_uri of the service account', async () => {
    const before = fake.tokenRequests;
    const auth = await authenticateVertex(target(), signal, sender);
    expect(fake.tokenRequests).toBe(before + 1);
    expect(fake.issuedTokens).toContain(auth.accessToken);
  });

  it('caches the token per service account', async () => {
    const first = await authenticateVertex(target(), signal, sender);
    const before = fake.tokenRequests;
    const second = await authenticateVertex(target(), signal, sender);
    expect(second.accessToken).toBe(first.accessToken);
    expect(fake.tokenRequests).toBe(before);
  });

  it('shares one in-flight exchange among concurrent callers', async () => {
    const before = fake.tokenRequests;
    const results = await Promise.all(
      Array.from({ length: 5 }, () => authenticateVertex(target(), signal, sender)),
    );
    expect(new Set(results.map((r) => r.accessToken)).size).toBe(1);
    expect(fake.tokenRequests).toBe(before + 1);
  });

  it('renews a token that is about to expire', async () => {
    const shortLived = await startFakeVertex({ tokenLifetimeSeconds: 1 });
    try {
      const json = { ...shortLived.serviceAccount };
      const a = await authenticateVertex(target(json), signal, sender);
      await new Promise((resolve) => setTimeout(resolve, 600));
      const b = await authenticateVertex(target(json), signal, sender);
      expect(b.accessToken).not.toBe(a.accessToken);
      expect(shortLived.tokenRequests).toBe(2);
    } finally {
      await shortLived.close();
    }
  });

  it('keeps the tokens of a bounded number of service accounts, the least recently used dropped first', async () => {
    // Another token_uri is another account to the cache, as a new inline service account is: the fake
    // answers its token endpoint whatever the query.
    const account = (n: number) =>
      target({ ...fake.serviceAccount, token_uri: `${fake.serviceAccount.token_uri}?account=${n}` });
    const cache = new VertexTokenCache({ maxAccounts: 3 });
    const exchanges = async (n: number) => {
      const before = fake.tokenRequests;
      await authenticateVertex(account(n), signal, sender, cache);
      return fake.tokenRequests - before;
    };
    for (const n of [0, 1, 2]) expect(await exchanges(n)).toBe(1);
    // Account 0, the first in, is used again: account 1 is now the least recently used.
    expect(await exchanges(0)).toBe(0);
    expect(await exchanges(3)).toBe(1);
    expect(await exchanges(0)).toBe(0);
    expect(await exchanges(2)).toBe(0);
    expect(await exchanges(3)).toBe(0);
    // Account 1's token was dropped for account 3's: it is exchanged again.
    expect(await exchanges(1)).toBe(1);
    // The shared cache was not touched.
    const before = fake.tokenRequests;
    await authenticateVertex(account(0), signal, sender);
    expect(fake.tokenRequests).toBe(before + 1);
  });

  it('refuses credentials without private_key or client_email, naming the key', async () => {
    for (const json of [
      { ...fake.serviceAccount, private_key: undefined },
      { ...fake.serviceAccount, client_email: '' },
      { ...fake.serviceAccount, private_key: 'not a key' },
    ]) {
      const error = await authenticateVertex(target(json), signal, sender).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).status).toBe(400);
      expect((error as GatewayError).param).toBe('cloudb_service_account_json');
    }
  });

  it('reports a refusal of the token endpoint as a 401', async () => {
    fake.refuseTokens(true);
    const error = await authenticateVertex(target(), signal, sender).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(401);
    expect((error as ProviderError).message).toContain('invalid_grant');
  });

  it('is refused when the key is not the one the endpoint trusts (signature check)', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = {
      ...fake.serviceAccount,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    const error = await authenticateVertex(target(forged), signal, sender).catch((e: unknown) => e);
    expect((error as ProviderError).status).toBe(401);
    expect((error as ProviderError).message).toContain('Invalid JWT Signature');
  });

  it('uses api_key as the bearer token when no service account is given', async () => {
    const auth = await authenticateVertex({ provider: 'vertex-ai', api_key: 'ya29.given' }, signal, sender);
    expect(auth.accessToken).toBe('ya29.given');
    const error = await authenticateVertex({ provider: 'vertex-ai' }, signal, sender).catch(
      (e: unknown) => e,
    );
    expect((error as GatewayError).param).toBe('cloudb_service_account_json');
  });

  it('calls a custom_host without credentials when none are given', async () => {
    const target = { provider: 'vertex-ai', custom_host: 'http://127.0.0.1:9' };
    expect(await authenticateVertex(target, signal, sender)).toEqual({});
  });
});
