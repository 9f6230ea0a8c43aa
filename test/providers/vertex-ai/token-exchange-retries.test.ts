// How often one token exchange calls its endpoint: a refusal by the gateway's address policy is final (no
// second DNS lookup, no wait before the 400); an endpoint that fails (5xx) or drops the connection is tried
// once more, and never past the exchange's time bound.
import { generateKeyPairSync } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { GatewayError, ProviderError } from '../../../src/core/errors.js';
import type { OwnRequestAnswer, OwnRequestSender } from '../../../src/providers/types.js';
import { authenticateVertex, clearVertexTokenCache } from '../../../src/providers/vertex-ai/index.js';

const key = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

const target = {
  provider: 'vertex-ai',
  cloudb_project_id: 'p',
  cloudb_region: 'us-central1',
  cloudb_service_account_json: {
    client_email: 'sa@p.iam.gserviceaccount.com',
    private_key: key,
    token_uri: 'https://tokens.example/token',
  },
};

const answer = (statusCode: number, body: unknown): OwnRequestAnswer => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: { text: () => Promise.resolve(JSON.stringify(body)) },
});

/** A sender that answers each attempt with `attempt(n)` and counts the attempts. */
function fakeSender(attempt: (n: number) => Promise<OwnRequestAnswer>) {
  const sender = { attempts: 0, send: () => attempt(++sender.attempts) };
  return sender satisfies OwnRequestSender;
}

beforeEach(() => clearVertexTokenCache());

describe('vertex-ai token exchange retries', () => {
  it('does not try again an exchange the address policy refused', async () => {
    const sender = fakeSender(() => {
      const lookup = Object.assign(new Error('10.0.0.1 is refused'), { code: 'EADDRREFUSEDBYPOLICY' });
      return Promise.reject(new GatewayError('custom_host_refused', lookup.message, { cause: lookup }));
    });
    const error = await authenticateVertex(target, AbortSignal.timeout(5000), sender).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'custom_host_refused' });
    expect(sender.attempts).toBe(1);
  });

  it('tries a failing (5xx) endpoint twice at most, then answers 502', async () => {
    const sender = fakeSender(() => Promise.resolve(answer(503, { error: 'temporarily_unavailable' })));
    const error = await authenticateVertex(target, AbortSignal.timeout(5000), sender).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 502 });
    expect(sender.attempts).toBe(2);
  });

  it('tries once more after a dropped connection, and takes the token then', async () => {
    const sender = fakeSender((n) =>
      n === 1
        ? Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))
        : Promise.resolve(answer(200, { access_token: 'ya29.second', expires_in: 3600 })),
    );
    await expect(authenticateVertex(target, AbortSignal.timeout(5000), sender)).resolves.toEqual({
      accessToken: 'ya29.second',
    });
    expect(sender.attempts).toBe(2);
  });

  it('does not try a third time after two dropped connections', async () => {
    const sender = fakeSender(() =>
      Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })),
    );
    const error = await authenticateVertex(target, AbortSignal.timeout(5000), sender).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ status: 502 });
    expect(sender.attempts).toBe(2);
  });

  it('is not tried again once the answer is a refusal of the credentials (4xx)', async () => {
    const sender = fakeSender(() => Promise.resolve(answer(400, { error: 'invalid_grant' })));
    const error = await authenticateVertex(target, AbortSignal.timeout(5000), sender).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ status: 401 });
    expect(sender.attempts).toBe(1);
  });
});
