// A service account's token_uri is an address the gateway calls, as custom_host is: it is held to the same
// custom-host policy (as written, and where its name resolves to when the exchange connects), a redirect
// from it is not followed, and what it answers reaches the client only as a short reason.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError, ProviderError } from '../../../src/core/errors.js';
import { createUpstreamClient, type UpstreamClient } from '../../../src/gateway/upstream.js';
import { authenticateVertex, clearVertexTokenCache } from '../../../src/providers/vertex-ai/index.js';
import { deploymentKeys, postChat, startGateway, type TestGateway } from '../../helpers/gateway.js';
import { client } from '../../management/http.js';

interface Endpoint {
  server: Server;
  url: string;
  hits: string[];
}

/** A server on 127.0.0.1 that records each request's path and answers as `answer` says. */
async function endpoint(answer: (path: string, res: import('node:http').ServerResponse) => void) {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push(req.url ?? '/');
      answer(req.url ?? '/', res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, hits } satisfies Endpoint;
}

const key = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

const config = (tokenUri: string) => ({
  provider: 'vertex-ai',
  cloudb_region: 'us-central1',
  cloudb_project_id: 'p',
  cloudb_service_account_json: {
    client_email: `sa-${encodeURIComponent(tokenUri)}@p.iam.gserviceaccount.com`,
    private_key: key,
    token_uri: tokenUri,
  },
});

const chat = { model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'hi' }] };

let internal: Endpoint;
let tokens: Endpoint;

beforeAll(async () => {
  // Stands for a server of the gateway's own network: it answers with what a client must not read.
  internal = await endpoint((_path, res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 400, message: 'internal-only detail hunter2' } }));
  });
  tokens = await endpoint((path, res) => {
    if (path === '/redirect') {
      res.writeHead(307, { location: `${internal.url}/admin` });
      res.end();
      return;
    }
    // OAuth's error shape, which google-auth-library copies into its message whatever it holds.
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'db_password_is_hunter2', error_description: 'hunter2 again' }));
  });
});
afterAll(async () => {
  for (const { server } of [internal, tokens]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
beforeEach(() => {
  clearVertexTokenCache();
  internal.hits.length = 0;
  tokens.hits.length = 0;
});

describe('token_uri under the public policy', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway({ env: { GATEWAY_CUSTOM_HOST_POLICY: 'public' } });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it.each(['/token', '/redirect'])(
    'refuses a loopback token_uri (%s) with a 400 naming it, and never calls it',
    async (path) => {
      const response = await postChat(gateway, config(`${tokens.url}${path}`), chat);
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as { error: { param: string; code: string } };
      expect(error).toMatchObject({
        code: 'custom_host_refused',
        param: 'config.cloudb_service_account_json.token_uri',
      });
      expect(tokens.hits).toHaveLength(0);
      expect(internal.hits).toHaveLength(0);
    },
  );
});

describe('token_uri under the default policy', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('refuses a metadata token_uri with a 400 naming it', async () => {
    const response = await postChat(gateway, config('http://169.254.169.254/token'), chat);
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { param: string; code: string } };
    expect(error).toMatchObject({
      code: 'custom_host_refused',
      param: 'config.cloudb_service_account_json.token_uri',
    });
  });

  it('does not follow a redirect from the token endpoint', async () => {
    const response = await postChat(gateway, config(`${tokens.url}/redirect`), chat);
    expect(response.status).toBe(502);
    const { error } = (await response.json()) as { error: { message: string } };
    expect(error.message).toMatch(/HTTP 307/);
    expect(error.message).not.toContain('hunter2');
    expect(tokens.hits).toEqual(['/redirect']);
    expect(internal.hits).toHaveLength(0);
  });

  it("gives the client a short reason for a refusal, not the token endpoint's answer", async () => {
    const response = await postChat(gateway, config(`${tokens.url}/token`), chat);
    expect(response.status).toBe(401);
    const { error } = (await response.json()) as { error: { message: string } };
    expect(error.message).toMatch(/HTTP 401/);
    expect(error.message).not.toContain('hunter2');
  });
});

describe('token_uri whose name resolves to a forbidden address', () => {
  let upstream: UpstreamClient;
  beforeAll(() => {
    upstream = createUpstreamClient('public');
  });
  afterAll(async () => {
    await upstream.close();
  });

  it('is refused when the exchange connects, naming token_uri, and never called', async () => {
    const target = config(tokens.url.replace('127.0.0.1', 'localhost') + '/token');
    const error = await authenticateVertex(target, AbortSignal.timeout(5000), upstream.ownRequests).catch(
      (e: unknown) => e,
    );
    expect(error).not.toBeInstanceOf(ProviderError);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({
      code: 'custom_host_refused',
      param: 'cloudb_service_account_json.token_uri',
    });
    expect(tokens.hits).toHaveLength(0);
  });
});

describe('token_uri of a stored credential', () => {
  // Stored under the default policy, which lets it reach 127.0.0.1; called on a node of the same deployment
  // whose policy is public (a deployment that tightened its policy since): refused as it is resolved.
  let storing: TestGateway;
  let calling: TestGateway;
  const account = () => ({
    client_email: 'stored@p.iam.gserviceaccount.com',
    private_key: key,
    token_uri: `${tokens.url}/token`,
  });
  beforeAll(async () => {
    const deployment = deploymentKeys('token-uri');
    storing = await startGateway({ env: deployment });
    const admin = client(storing.url, storing.adminKey);
    const settings = { provider: 'vertex-ai', cloudb_region: 'us-central1', cloudb_project_id: 'p' };
    for (const created of [
      await admin.post('/virtual-keys', {
        slug: 'vx-token-uri',
        ...settings,
        cloudb_service_account_json: account(),
      }),
      await admin.post('/providers', {
        slug: 'vx-token-uri',
        ...settings,
        cloudb_service_account_json: account(),
      }),
      await admin.post('/virtual-keys', {
        slug: 'vx-host',
        ...settings,
        api_key: 'k',
        custom_host: tokens.url,
      }),
    ]) {
      expect(created.status, created.text).toBe(200);
    }
    calling = await startGateway({
      env: { ...deployment, GATEWAY_DATA_DIR: storing.dataDir, GATEWAY_CUSTOM_HOST_POLICY: 'public' },
    });
  });
  afterAll(async () => {
    await calling?.close();
    await storing?.close();
  });

  const refusal = async (response: Response) => {
    const text = await response.text();
    expect(response.status, text).toBe(400);
    return (JSON.parse(text) as { error: { param: string; code: string; message: string } }).error;
  };
  const headers = (extra: Record<string, string>) => ({
    'x-gateway-api-key': calling.adminKey,
    'content-type': 'application/json',
    ...extra,
  });
  const chatWith = (extra: Record<string, string>) =>
    fetch(`${calling.url}/chat/completions`, {
      method: 'POST',
      headers: headers(extra),
      body: JSON.stringify(chat),
    });

  it.each([
    ['a virtual key header', { 'x-gateway-virtual-key': 'vx-token-uri' }, 'virtual key "vx-token-uri"'],
    ['a catalog provider', { 'x-gateway-provider': '@vx-token-uri' }, 'provider "@vx-token-uri"'],
    [
      'a config target naming the virtual key',
      {
        'x-gateway-config': JSON.stringify({
          strategy: { mode: 'fallback' },
          targets: [{ virtual_key: 'vx-token-uri' }],
        }),
      },
      'virtual key "vx-token-uri"',
    ],
  ])('behind %s is named by the credential field it was written in', async (_, extra, storedOn) => {
    const error = await refusal(await chatWith(extra));
    expect(error).toMatchObject({
      code: 'custom_host_refused',
      param: 'cloudb_service_account_json.token_uri',
    });
    expect(error.message).toMatch(
      new RegExp(`^${storedOn}: cloudb_service_account_json\\.token_uri refused`),
    );
    expect(tokens.hits).toHaveLength(0);
  });

  it('is named so on a pass-through call too', async () => {
    const response = await fetch(
      `${calling.url}/projects/p/locations/us-central1/publishers/google/models/gemini-2.0-flash:generateContent`,
      { method: 'POST', headers: headers({ 'x-gateway-virtual-key': 'vx-token-uri' }), body: '{}' },
    );
    const error = await refusal(response);
    expect(error).toMatchObject({
      code: 'custom_host_refused',
      param: 'cloudb_service_account_json.token_uri',
    });
    expect(tokens.hits).toHaveLength(0);
  });

  it("names a stored custom_host by the credential's custom_host, not the header a caller never sent", async () => {
    const error = await refusal(await chatWith({ 'x-gateway-virtual-key': 'vx-host' }));
    expect(error).toMatchObject({ code: 'custom_host_refused', param: 'custom_host' });
    expect(error.message).toMatch(/^virtual key "vx-host": custom_host /);
    expect(tokens.hits).toHaveLength(0);
  });
});
