/**
 * A model call's `model` may be written as a Vertex resource name, which names a project
 * (`projects/{project}/locations/{location}/publishers/google/models/{id}`, an endpoint's
 * `projects/{project}/locations/{location}/endpoints/{id}`). The call is made in the target's project (a
 * stored credential's own): a model naming another project is refused, naming `model`, and nothing reaches
 * Vertex; the forms users write (`gemini-2.0-flash`, `publishers/google/models/…`, `anthropic.claude-…`,
 * `claude-…`, the target's own project) keep working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVertex, type FakeVertex } from '../../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { client } from '../../management/http.js';

let gateway: TestGateway;
let vertex: FakeVertex;

/** The fake's service account names `test-project` as its project_id. */
const OWN_PROJECT = 'test-project';
const CLAUDE = 'claude-3-5-sonnet-v2@20241022';
/** As the URL writes it. */
const CLAUDE_IN_PATH = encodeURIComponent(CLAUDE);

function post(path: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      'x-gateway-api-key': gateway.adminKey,
      'content-type': 'application/json',
      'x-gateway-virtual-key': 'vx-model-project',
    },
    body: JSON.stringify(body),
  });
}

const chat = (model: string) =>
  post('/chat/completions', { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
const embed = (model: string) => post('/embeddings', { model, input: 'hi' });
const messages = (model: string) =>
  post('/messages', { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });

async function expectError(response: Response, status: number, code: string, param: string) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  const { error } = JSON.parse(text) as { error: Record<string, unknown> };
  expect(error).toMatchObject({ code, param });
  return error;
}

beforeAll(async () => {
  vertex = await startFakeVertex();
  gateway = await startGateway();
  const created = await client(gateway.url, gateway.adminKey).post('/virtual-keys', {
    slug: 'vx-model-project',
    provider: 'vertex-ai',
    cloudb_project_id: OWN_PROJECT,
    cloudb_region: 'us-central1',
    cloudb_service_account_json: vertex.serviceAccount,
    custom_host: vertex.url,
  });
  expect(created.status, created.text).toBe(200);
});
afterAll(async () => {
  await gateway?.close();
  await vertex?.close();
});

describe('a model named as a resource of another project', () => {
  const other = 'projects/other-project/locations/us-central1';
  it.each([
    ['a Gemini chat', () => chat(`${other}/publishers/google/models/gemini-2.0-flash`)],
    ['a Claude chat', () => chat(`${other}/publishers/anthropic/models/${CLAUDE}`)],
    ['a chat on an endpoint', () => chat(`${other}/endpoints/1234567890`)],
    ['a model whose id climbs out', () => chat(`../../../../../${other}/publishers/google/models/m`)],
    ['an embedding', () => embed(`${other}/publishers/google/models/text-embedding-005`)],
  ])('is refused on %s with 403 naming model, before Vertex is called', async (_, send) => {
    const before = vertex.requests.length;
    const error = await expectError(await send(), 403, 'forbidden', 'model');
    expect(error.type).toBe('permission_error');
    expect(error.message).toContain('"other-project"');
    expect(error.message).toContain(`"${OWN_PROJECT}"`);
    expect(vertex.requests.length).toBe(before);
  });

  it("is refused on a Messages call with 403 in Anthropic's error shape, before Vertex is called", async () => {
    const before = vertex.requests.length;
    const response = await messages(`${other}/publishers/anthropic/models/${CLAUDE}`);
    const text = await response.text();
    expect(response.status, text).toBe(403);
    const { type, error } = JSON.parse(text) as { type: string; error: Record<string, unknown> };
    expect(type).toBe('error');
    expect(error.type).toBe('permission_error');
    expect(error.message).toContain('model');
    expect(error.message).toContain('"other-project"');
    expect(error.message).toContain(`"${OWN_PROJECT}"`);
    expect(vertex.requests.length).toBe(before);
  });
});

describe('a model id that is not one', () => {
  it.each(['gemini-2.0-flash/../../x', 'google/gemini-2.0-flash', '..', 'gemini\\..\\x'])(
    '%s is refused with 400 naming model, before Vertex is called',
    async (model) => {
      const before = vertex.requests.length;
      await expectError(await chat(model), 400, 'invalid_body', 'model');
      expect(vertex.requests.length).toBe(before);
    },
  );
});

describe('the forms users write', () => {
  const own = `projects/${OWN_PROJECT}/locations/us-central1`;
  it.each([
    ['gemini-2.0-flash', 'google/models/gemini-2.0-flash:generateContent'],
    ['models/gemini-2.0-flash', 'google/models/gemini-2.0-flash:generateContent'],
    ['publishers/google/models/gemini-2.0-flash', 'google/models/gemini-2.0-flash:generateContent'],
    [`${own}/publishers/google/models/gemini-2.0-flash`, 'google/models/gemini-2.0-flash:generateContent'],
    [CLAUDE, `anthropic/models/${CLAUDE_IN_PATH}:rawPredict`],
    [`anthropic.${CLAUDE}`, `anthropic/models/${CLAUDE_IN_PATH}:rawPredict`],
    [`publishers/anthropic/models/${CLAUDE}`, `anthropic/models/${CLAUDE_IN_PATH}:rawPredict`],
  ])('%s is sent to the target project', async (model, tail) => {
    const response = await chat(model);
    expect(response.status, await response.text()).toBe(200);
    expect(vertex.requests.at(-1)?.path).toBe(`/v1/${own}/publishers/${tail}`);
  });

  it('embeddings and Messages calls too', async () => {
    const own = `projects/${OWN_PROJECT}/locations/us-central1`;
    const embedded = await embed(`${own}/publishers/google/models/text-embedding-005`);
    expect(embedded.status, await embedded.text()).toBe(200);
    const relayed = await messages(`anthropic.${CLAUDE}`);
    expect(relayed.status, await relayed.text()).toBe(200);
    expect(vertex.requests.at(-1)?.path).toBe(
      `/v1/${own}/publishers/anthropic/models/${CLAUDE_IN_PATH}:rawPredict`,
    );
  });
});
