/**
 * `forward_headers` beside a stored credential. A virtual key's, a catalog provider's, a stored config's or a
 * stored prompt's credential is used by callers holding only a gateway key: the headers that authenticate a
 * provider account or choose which of a credential's accounts a call is made on and billed to
 * (`x-goog-user-project`, `openai-organization`, `authorization`…) are never sent from the client with it,
 * whatever forward_headers names; with the caller's own credential they are. A stored config naming one
 * beside a stored credential is refused when it is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { postChat, startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, expectError, type Client } from '../management/http.js';
import { chatTemplate, complete } from '../prompts/support.js';

let gateway: TestGateway;
let vertex: FakeVertex;
let openai: FakeUpstream;
let admin: Client;

const OWN_PROJECT = 'test-project';
const gemini = { model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'hi' }] };
const gpt = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
/** What a client sends to steer the call to another project of the service account's. */
const otherProject = { 'x-goog-user-project': 'other-project', 'x-team': 'team-7' };
const googleForwarded = ['x-goog-user-project', 'x-team'];

function vertexSettings(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    provider: 'vertex-ai',
    cloudb_region: 'us-central1',
    cloudb_project_id: OWN_PROJECT,
    cloudb_service_account_json: vertex.serviceAccount,
    custom_host: vertex.url,
    ...extra,
  };
}

const lastVertexHeaders = () => vertex.requests.at(-1)?.headers ?? {};
const lastOpenAIHeaders = () => openai.requests.at(-1)?.headers ?? {};

async function expectOk(response: Response | Promise<Response>): Promise<void> {
  const settled = await response;
  expect(settled.status, await settled.clone().text()).toBe(200);
}

beforeAll(async () => {
  vertex = await startFakeVertex();
  openai = await startFakeOpenAI({ name: 'forwarded' });
  gateway = await startGateway();
  admin = client(gateway.url, gateway.adminKey);
  for (const created of [
    await admin.post('/virtual-keys', { slug: 'vx', ...vertexSettings() }),
    await admin.post('/providers', { slug: 'vx-catalog', ...vertexSettings() }),
    await admin.post('/virtual-keys', {
      slug: 'oa',
      provider: 'openai',
      api_key: 'sk-stored',
      custom_host: openai.url,
      vendora_organization: 'org-own',
    }),
    await admin.post('/prompts', {
      slug: 'vx-prompt',
      string: chatTemplate('S', 'hi'),
      parameters: { model: 'gemini-2.0-flash' },
      config: vertexSettings(),
    }),
  ]) {
    expect(created.status, created.text).toBe(200);
  }
});
afterAll(async () => {
  await gateway?.close();
  await vertex?.close();
  await openai?.close();
});

describe('a model call with a stored Vertex AI service account', () => {
  it.each([
    ['a virtual key', { virtual_key: 'vx' }],
    ['a catalog provider', { provider: '@vx-catalog' }],
  ])('behind %s goes without the client’s x-goog-user-project', async (_, names) => {
    await expectOk(postChat(gateway, { ...names, forward_headers: googleForwarded }, gemini, otherProject));
    expect(lastVertexHeaders()['x-goog-user-project']).toBeUndefined();
    // Other headers forward_headers names go as before.
    expect(lastVertexHeaders()['x-team']).toBe('team-7');
  });

  it('behind a stored config stored before the rule goes without it', async () => {
    const workspace = gateway.server.bootstrap.workspace;
    await gateway.server.deps.store.createConfig({
      workspace_id: workspace.id,
      organisation_id: workspace.organisation_id,
      slug: 'vx-forwarding',
      name: 'vx-forwarding',
      config: vertexSettings({ forward_headers: googleForwarded }),
    });
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': 'vx-forwarding',
        ...otherProject,
      },
      body: JSON.stringify(gemini),
    });
    await expectOk(response);
    expect(lastVertexHeaders()['x-goog-user-project']).toBeUndefined();
    expect(lastVertexHeaders()['x-team']).toBe('team-7');
  });

  it('of a prompt_id target’s destination goes without it', async () => {
    const reply = await complete(
      gateway,
      'vx-prompt',
      { variables: {} },
      {
        'x-gateway-config': JSON.stringify({ prompt_id: 'vx-prompt', forward_headers: googleForwarded }),
        ...otherProject,
      },
    );
    expect(reply.status, reply.text).toBe(200);
    expect(lastVertexHeaders()['x-goog-user-project']).toBeUndefined();
    expect(lastVertexHeaders()['x-team']).toBe('team-7');
  });

  it('of a prompt version stored before the rule goes without it', async () => {
    const workspace = gateway.server.bootstrap.workspace;
    await gateway.server.deps.store.createPrompt({
      workspace_id: workspace.id,
      organisation_id: workspace.organisation_id,
      slug: 'vx-prompt-forwarding',
      name: 'vx-prompt-forwarding',
      prompt: {
        template_type: 'chat',
        string: chatTemplate('S', 'hi'),
        parameters: { model: 'gemini-2.0-flash' },
        config: vertexSettings({ forward_headers: googleForwarded }),
      },
    });
    const reply = await complete(gateway, 'vx-prompt-forwarding', { variables: {} }, otherProject);
    expect(reply.status, reply.text).toBe(200);
    expect(lastVertexHeaders()['x-goog-user-project']).toBeUndefined();
    expect(lastVertexHeaders()['x-team']).toBe('team-7');
  });
});

describe("a model call with the caller's own Vertex AI credential", () => {
  it('sends the x-goog-user-project of a service account in the config the request sends', async () => {
    await expectOk(
      postChat(gateway, vertexSettings({ forward_headers: googleForwarded }), gemini, otherProject),
    );
    expect(lastVertexHeaders()['x-goog-user-project']).toBe('other-project');
  });

  it('sends it with an access token given as Authorization, through a stored config holding no credential', async () => {
    const stored = await admin.post('/configs', {
      slug: 'vx-client-token',
      config: {
        provider: 'vertex-ai',
        cloudb_region: 'us-central1',
        cloudb_project_id: OWN_PROJECT,
        custom_host: vertex.url,
        forward_headers: googleForwarded,
      },
    });
    expect(stored.status, stored.text).toBe(200);
    const token = vertex.issuedTokens[0];
    expect(token).toBeDefined();
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': 'vx-client-token',
        authorization: `Bearer ${token}`,
        ...otherProject,
      },
      body: JSON.stringify(gemini),
    });
    await expectOk(response);
    expect(lastVertexHeaders()['x-goog-user-project']).toBe('other-project');
  });
});

describe('a model call with a stored OpenAI key', () => {
  const steering = {
    'openai-organization': 'org-other',
    'openai-project': 'proj-other',
    authorization: 'Bearer sk-client',
    'x-team': 'team-7',
  };
  const named = ['OpenAI-Organization', 'openai-project', 'authorization', 'x-team'];

  it('goes with the stored key and organization, not the ones the client sends', async () => {
    await expectOk(postChat(gateway, { virtual_key: 'oa', forward_headers: named }, gpt, steering));
    const headers = lastOpenAIHeaders();
    expect(headers.authorization).toBe('Bearer sk-stored');
    expect(headers['openai-organization']).toBe('org-own');
    expect(headers['openai-project']).toBeUndefined();
    expect(headers['x-team']).toBe('team-7');
  });

  it("with the caller's own key in the config it sends, passes the client's organization and project on", async () => {
    const own = { provider: 'openai', api_key: 'sk-own', custom_host: openai.url, forward_headers: named };
    await expectOk(postChat(gateway, own, gpt, steering));
    const headers = lastOpenAIHeaders();
    expect(headers['openai-organization']).toBe('org-other');
    expect(headers['openai-project']).toBe('proj-other');
  });
});

describe('a config stored with such a header beside a stored credential', () => {
  it.each([
    [
      'a virtual key',
      { virtual_key: 'vx', forward_headers: ['x-team', 'X-Goog-User-Project'] },
      'config.forward_headers[1]',
    ],
    [
      'a catalog provider',
      { provider: '@vx-catalog', forward_headers: ['x-goog-user-project'] },
      'config.forward_headers[0]',
    ],
    [
      'its own key',
      { provider: 'openai', api_key: 'sk-config', forward_headers: ['openai-project'] },
      'config.forward_headers[0]',
    ],
    [
      'its own Bedrock access keys',
      {
        provider: 'bedrock',
        cloudc_access_key_id: 'AKIA0',
        cloudc_secret_access_key: 'secret',
        cloudc_region: 'us-east-1',
        forward_headers: ['X-Amz-Security-Token'],
      },
      'config.forward_headers[0]',
    ],
    [
      'a target below the node naming it',
      {
        forward_headers: ['x-team', 'authorization'],
        strategy: { mode: 'fallback' },
        targets: [{ provider: 'openai', custom_host: 'https://example.test/v1' }, { virtual_key: 'oa' }],
      },
      'config.forward_headers[1]',
    ],
  ])('is refused with 400 naming the header: %s', async (label, config, param) => {
    const slug = `refused-${label.replace(/\W+/g, '-')}`;
    const reply = await admin.post('/configs', { slug, config });
    const error = expectError(reply, 400, 'invalid_config', param);
    expect(String(error.message)).toContain('stored credential');
    expect(reply.text).not.toContain('sk-config');
  });

  it('is refused in a prompt version’s own config', async () => {
    const reply = await admin.post('/prompts', {
      slug: 'refused-prompt',
      string: chatTemplate('S', 'hi'),
      parameters: { model: 'gemini-2.0-flash' },
      config: { virtual_key: 'vx', forward_headers: ['x-goog-user-project'] },
    });
    expectError(reply, 400, 'invalid_config', 'config.forward_headers[0]');
  });

  it('is stored when no target holds a credential of its own', async () => {
    const reply = await admin.post('/configs', {
      slug: 'forwarding-client-key',
      config: { provider: 'openai', forward_headers: ['openai-organization', 'authorization'] },
    });
    expect(reply.status, reply.text).toBe(200);
  });
});
