// A token endpoint that hangs once must not wedge the service account: a request that gives up on the
// shared exchange takes it out of the way, so the next request starts its own.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateVertex, clearVertexTokenCache } from '../../../src/providers/vertex-ai/index.js';

let url = '';
let calls = 0;
const hung: ServerResponse[] = [];
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    calls++;
    if (calls === 1) {
      hung.push(res); // the first exchange never gets an answer (an overloaded / black-holed endpoint)
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: 'ya29.recovered', expires_in: 3600, token_type: 'Bearer' }));
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  clearVertexTokenCache();
});
afterAll(async () => {
  for (const res of hung) res.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('vertex-ai token exchange that hangs once', () => {
  it('a later request (endpoint healthy again) gets a token instead of joining the stuck exchange', async () => {
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
        token_uri: url,
      },
    };
    // request 1: its deadline passes while the token endpoint hangs
    await expect(authenticateVertex(target, AbortSignal.timeout(500))).rejects.toBeDefined();
    // request 2, well after: the endpoint now answers at once
    const second = await authenticateVertex(target, AbortSignal.timeout(3000)).catch((e: unknown) => e);
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(second).toEqual({ accessToken: 'ya29.recovered' });
  });
});
