// Token endpoints that misbehave (a service account's token_uri may name any host). One that hangs once
// must not wedge the service account: a request that gives up on the shared exchange takes it out of the
// way, so the next request starts its own. One that answers without end must not be read into memory until
// the exchange's timeout: past 1 MiB, far above any token answer, the exchange fails and its connection is
// closed.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/core/errors.js';
import { createUpstreamClient } from '../../../src/gateway/upstream.js';
import { authenticateVertex, clearVertexTokenCache } from '../../../src/providers/vertex-ai/index.js';

const ANSWER_BOUND = 1024 * 1024;
let origin = '';
let hangCalls = 0;
let endlessClosedEarly = false;
const held: ServerResponse[] = [];
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url === '/endless') {
      // A token, padded to one byte past the bound, then held open: only the gateway closing it ends it.
      held.push(res);
      res.on('close', () => (endlessClosedEarly = !res.writableEnded));
      res.writeHead(200, { 'content-type': 'application/json' });
      const head = '{"access_token":"ya29.padded","token_type":"Bearer","expires_in":3600,"pad":"';
      res.write(head + 'x'.repeat(ANSWER_BOUND - head.length - 2) + '"} ');
      return;
    }
    hangCalls++;
    if (hangCalls === 1) {
      held.push(res); // the first exchange never gets an answer (an overloaded / black-holed endpoint)
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: 'ya29.recovered', expires_in: 3600, token_type: 'Bearer' }));
  });
});

// The gateway's sender under the default policy, which lets the exchange reach the server on 127.0.0.1.
const upstream = createUpstreamClient('private');
const sender = upstream.ownRequests;

const key = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

/** A target whose service account's token_uri is `path` on the test's endpoint (one account per path). */
const target = (path: string) => ({
  provider: 'vertex-ai',
  cloudb_project_id: 'p',
  cloudb_region: 'us-central1',
  cloudb_service_account_json: {
    client_email: `sa${path.replace('/', '-')}@p.iam.gserviceaccount.com`,
    private_key: key,
    token_uri: `${origin}${path}`,
  },
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  clearVertexTokenCache();
});
afterAll(async () => {
  await upstream.close(0);
  for (const res of held) res.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('vertex-ai token exchange that hangs once', () => {
  it('a later request (endpoint healthy again) gets a token instead of joining the stuck exchange', async () => {
    // request 1: its deadline passes while the token endpoint hangs
    await expect(
      authenticateVertex(target('/token'), AbortSignal.timeout(500), sender),
    ).rejects.toBeDefined();
    // request 2, well after: the endpoint now answers at once
    const second = await authenticateVertex(target('/token'), AbortSignal.timeout(3000), sender).catch(
      (e: unknown) => e,
    );
    expect(hangCalls).toBeGreaterThanOrEqual(2);
    expect(second).toEqual({ accessToken: 'ya29.recovered' });
  });
});

describe('vertex-ai token exchange whose answer has no end', () => {
  it('fails with 502 once past 1 MiB, and closes the connection', async () => {
    const error = await authenticateVertex(target('/endless'), AbortSignal.timeout(5000), sender).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 502, code: 'token_exchange_failed' });
    expect((error as Error).message).toMatch(/larger than 1048576 bytes/);
    await expect.poll(() => endlessClosedEarly).toBe(true);
  });
});
