/**
 * A Vertex AI pass-through path names the project the call is made in (`/projects/{project}/locations/…`).
 * A stored service account (a virtual key's, a catalog provider's, a stored config's) goes only to its
 * target's project — its cloudb_project_id, else the service account's own project_id — so a caller who may
 * use it cannot write another project it reaches into the path; the caller's own credentials go anywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client } from '../management/http.js';

let gateway: TestGateway;
let vertex: FakeVertex;

/** The fake's service account names `test-project` as its project_id. */
const OWN_PROJECT = 'test-project';
const generate = (project: string) =>
  `/projects/${project}/locations/us-central1/publishers/google/models/gemini-2.0-flash:generateContent`;
const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });

function vertexKey(slug: string, extra: Record<string, unknown> = {}) {
  return {
    slug,
    provider: 'vertex-ai',
    cloudb_region: 'us-central1',
    cloudb_service_account_json: vertex.serviceAccount,
    custom_host: vertex.url,
    ...extra,
  };
}

function passThrough(path: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json', ...headers },
    body,
  });
}

/** Asserts a 403 in the OpenAI error shape naming the project asked for and the one allowed, and that
 * nothing reached Vertex (not even a token exchange). */
async function expectRefused(response: Response, asked: string, allowed: string, before: Counts) {
  const text = await response.text();
  expect(response.status, text).toBe(403);
  const { error } = JSON.parse(text) as { error: Record<string, unknown> };
  expect(error).toMatchObject({ type: 'permission_error', code: 'forbidden' });
  expect(error.message).toContain(`"${asked}"`);
  expect(error.message).toContain(`"${allowed}"`);
  expect(counts()).toEqual(before);
}

interface Counts {
  calls: number;
  tokens: number;
}
const counts = (): Counts => ({ calls: vertex.requests.length, tokens: vertex.tokenRequests });

beforeAll(async () => {
  vertex = await startFakeVertex();
  gateway = await startGateway();
  const admin = client(gateway.url, gateway.adminKey);
  for (const created of [
    await admin.post('/virtual-keys', vertexKey('vx-project', { cloudb_project_id: OWN_PROJECT })),
    await admin.post('/virtual-keys', vertexKey('vx-no-project')),
    await admin.post('/providers', vertexKey('vx-catalog', { cloudb_project_id: OWN_PROJECT })),
    await admin.post('/configs', {
      slug: 'vx-stored-config',
      config: { ...vertexKey('', { cloudb_project_id: OWN_PROJECT }), slug: undefined },
    }),
  ]) {
    expect(created.status, created.text).toBe(200);
  }
});
afterAll(async () => {
  await gateway?.close();
  await vertex?.close();
});

describe('a stored service account', () => {
  it.each([
    ['a virtual key', { 'x-gateway-virtual-key': 'vx-project' }],
    ['a catalog provider', { 'x-gateway-provider': '@vx-catalog' }],
    ['a stored config', { 'x-gateway-config': 'vx-stored-config' }],
    [
      'a virtual key, whatever Authorization says',
      { 'x-gateway-virtual-key': 'vx-project', authorization: 'Bearer mine' },
    ],
  ])('behind %s goes to its own project only', async (_, headers) => {
    const before = counts();
    await expectRefused(
      await passThrough(generate('other-project'), headers),
      'other-project',
      OWN_PROJECT,
      before,
    );

    const own = await passThrough(generate(OWN_PROJECT), headers);
    expect(own.status, await own.clone().text()).toBe(200);
    expect(vertex.requests.at(-1)?.path).toBe(`/v1${generate(OWN_PROJECT)}`);
  });

  it("with no cloudb_project_id goes to its service account's project_id only", async () => {
    const headers = { 'x-gateway-virtual-key': 'vx-no-project' };
    const before = counts();
    await expectRefused(
      await passThrough(generate('other-project'), headers),
      'other-project',
      OWN_PROJECT,
      before,
    );
    expect((await passThrough(generate(OWN_PROJECT), headers)).status).toBe(200);
  });

  it('is not sent to another project written however the path spells it', async () => {
    const headers = { 'x-gateway-virtual-key': 'vx-project' };
    for (const [path, asked] of [
      [generate('other%2Dproject'), 'other-project'],
      [
        `/projects%2Fother-project%2Flocations/us-central1/publishers/google/models/gemini-2.0-flash:generateContent`,
        'other-project',
      ],
      [`/PROJECTS/other-project/locations/us-central1/publishers/google/models/m:x`, 'other-project'],
      [
        `/projects/${OWN_PROJECT}/locations/us-central1/publishers/google/models/m/projects/other-project`,
        'other-project',
      ],
      [`/projects/other-project:generateContent`, 'other-project:generateContent'],
      // Its number is not compared with its id: named so, even the credential's own project is refused.
      [generate('123456789012'), '123456789012'],
      [
        `/projects/${OWN_PROJECT}-evil/locations/us-central1/publishers/google/models/m:x`,
        `${OWN_PROJECT}-evil`,
      ],
    ]) {
      const before = counts();
      await expectRefused(await passThrough(path, headers), asked, OWN_PROJECT, before);
    }
  });
});

describe("the caller's own credentials", () => {
  it('go to any project: a service account sent in the config with the request', async () => {
    const config = JSON.stringify({
      provider: 'vertex-ai',
      cloudb_region: 'us-central1',
      cloudb_project_id: OWN_PROJECT,
      cloudb_service_account_json: vertex.serviceAccount,
      custom_host: vertex.url,
    });
    const response = await passThrough(generate('other-project'), { 'x-gateway-config': config });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(vertex.requests.at(-1)?.path).toBe(`/v1${generate('other-project')}`);
  });

  it('go to any project: an access token as Authorization', async () => {
    const [token] = vertex.issuedTokens;
    const response = await passThrough(generate('other-project'), {
      'x-gateway-provider': 'vertex-ai',
      'x-gateway-custom-host': vertex.url,
      authorization: `Bearer ${token}`,
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(vertex.requests.at(-1)?.path).toBe(`/v1${generate('other-project')}`);
  });
});

describe('a project set beside a stored credential', () => {
  /** Asserts a 403 naming the config's cloudb_project_id, the project asked for and the credential's, with
   * nothing sent to Vertex. */
  async function expectProjectRefused(response: Response, asked: string, own: string, before: Counts) {
    const text = await response.text();
    expect(response.status, text).toBe(403);
    const { error } = JSON.parse(text) as { error: Record<string, unknown> };
    expect(error).toMatchObject({
      type: 'permission_error',
      code: 'forbidden',
      param: 'config.cloudb_project_id',
    });
    expect(error.message).toContain(`"${asked}"`);
    expect(error.message).toContain(`"${own}"`);
    expect(counts()).toEqual(before);
  }

  const chat = (config: Record<string, unknown>) =>
    fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'content-type': 'application/json',
        'x-gateway-config': JSON.stringify(config),
      },
      body: JSON.stringify({ model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'hi' }] }),
    });

  it.each([
    ['a virtual key', { virtual_key: 'vx-project' }],
    ['a catalog provider', { provider: '@vx-catalog' }],
    [
      "a virtual key with no cloudb_project_id (its service account's project_id)",
      { virtual_key: 'vx-no-project' },
    ],
  ])(
    'is refused beside %s when it is another project, on a pass-through and a model call',
    async (_, named) => {
      const config = { ...named, cloudb_project_id: 'other-project' };
      let before = counts();
      await expectProjectRefused(
        await passThrough(generate('other-project'), { 'x-gateway-config': JSON.stringify(config) }),
        'other-project',
        OWN_PROJECT,
        before,
      );
      before = counts();
      await expectProjectRefused(await chat(config), 'other-project', OWN_PROJECT, before);
    },
  );

  it("is taken beside a stored credential when it is the credential's own, and a region may be chosen", async () => {
    for (const config of [
      { virtual_key: 'vx-project', cloudb_project_id: OWN_PROJECT },
      { virtual_key: 'vx-no-project', cloudb_project_id: OWN_PROJECT },
      { virtual_key: 'vx-project', cloudb_region: 'europe-west4' },
    ]) {
      const response = await chat(config);
      expect(response.status, `${await response.clone().text()} ${vertex.requests.at(-1)?.path}`).toBe(200);
      expect(vertex.requests.at(-1)?.path).toContain(`/projects/${OWN_PROJECT}/locations/`);
    }
  });

  it('is refused in a config stored beside a virtual key or catalog provider when it is another project', async () => {
    const admin = client(gateway.url, gateway.adminKey);
    for (const config of [
      { virtual_key: 'vx-project', cloudb_project_id: 'other-project' },
      { provider: '@vx-catalog', cloudb_project_id: 'other-project' },
      { virtual_key: 'vx-no-project', cloudb_project_id: 'other-project' },
    ]) {
      const stored = await admin.post('/configs', { slug: 'vx-moved-project', config });
      expect(stored.status, stored.text).toBe(400);
      expect(stored.body).toMatchObject({
        error: { code: 'invalid_config', param: 'config.cloudb_project_id' },
      });
    }
    const own = await admin.post('/configs', {
      slug: 'vx-own-project',
      config: { virtual_key: 'vx-no-project', cloudb_project_id: OWN_PROJECT },
    });
    expect(own.status, own.text).toBe(200);
  });
});

describe('a path a stored credential signs', () => {
  const model = 'locations/us-central1/publishers/google/models/gemini-2.0-flash:generateContent';
  const hidden = [
    `/projects/${OWN_PROJECT}%2F..%2Fother-project/${model}`,
    `/projects/${OWN_PROJECT}%2f..%2fother-project/${model}`,
    `/projects/${OWN_PROJECT}%5C..%5Cother-project/${model}`,
    `/projects/${OWN_PROJECT}/locations/us-central1%2F..%2F..%2Fx/publishers/google/models/gemini-2.0-flash:generateContent`,
    `/projects/${OWN_PROJECT}/locations/us-central1/publishers%2Fgoogle/models/gemini-2.0-flash:generateContent`,
  ];

  it.each(hidden)(
    'is refused when its decoded form holds dot segments or a separator is encoded: %s',
    async (path) => {
      const before = counts();
      const response = await passThrough(path, { 'x-gateway-virtual-key': 'vx-project' });
      const text = await response.text();
      expect(response.status, text).toBe(400);
      const { error } = JSON.parse(text) as { error: Record<string, unknown> };
      expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_path', param: 'path' });
      expect(error.message).toContain(path);
      expect(counts()).toEqual(before);
    },
  );

  it("is sent as written with the caller's own service account", async () => {
    const config = JSON.stringify({
      provider: 'vertex-ai',
      cloudb_region: 'us-central1',
      cloudb_project_id: OWN_PROJECT,
      cloudb_service_account_json: vertex.serviceAccount,
      custom_host: vertex.url,
    });
    const sent = vertex.requests.length;
    await passThrough(hidden[0], { 'x-gateway-config': config });
    expect(vertex.requests.length).toBe(sent + 1);
  });
});

describe('the quota project header (x-goog-user-project)', () => {
  const inline = () =>
    JSON.stringify({
      provider: 'vertex-ai',
      cloudb_region: 'us-central1',
      cloudb_project_id: OWN_PROJECT,
      cloudb_service_account_json: vertex.serviceAccount,
      custom_host: vertex.url,
    });

  it("is sent with a service account in the config the request sends: the caller's own, as for the project", async () => {
    const response = await passThrough(generate('other-project'), {
      'x-gateway-config': inline(),
      'x-goog-user-project': 'other-project',
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(vertex.requests.at(-1)?.headers['x-goog-user-project']).toBe('other-project');
  });

  it('stays behind with a stored service account', async () => {
    for (const headers of [
      { 'x-gateway-virtual-key': 'vx-project' } as Record<string, string>,
      { 'x-gateway-config': 'vx-stored-config' },
    ]) {
      const response = await passThrough(generate(OWN_PROJECT), {
        ...headers,
        'x-goog-user-project': 'other-project',
      });
      expect(response.status, await response.clone().text()).toBe(200);
      expect(vertex.requests.at(-1)?.headers['x-goog-user-project']).toBeUndefined();
    }
  });
});
