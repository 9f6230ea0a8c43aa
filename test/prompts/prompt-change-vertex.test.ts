/**
 * Vertex AI's cloudb_shared_request_type (Priority or Flex PayGo) is served on the global endpoint only. A
 * config whose prompt_id target asks for it is refused when stored if the version its reference selects
 * sends its calls to a Vertex credential in another region (named-documents.ts). A change made through
 * what the target takes its calls' settings from — its prompt's next or published version, the stored
 * config that version sends its calls to, or a version sending them with the target's parent's credential
 * — is judged by that same check: a 409 conflict naming the config at the target's setting, unless
 * ?force=true.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeVertex, type FakeVertex } from '../fakes/vertex-ai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, expectError, type Client } from '../management/http.js';

const template = JSON.stringify([{ role: 'user', content: 'hi' }]);
const parameters = { model: 'gemini-2.0-flash' };
const PRIORITY = { cloudb_shared_request_type: 'priority' };

describe("a prompt change moving a prompt_id target's Vertex AI calls off the global endpoint", () => {
  let gateway: TestGateway;
  let admin: Client;
  let vertex: FakeVertex;

  beforeAll(async () => {
    vertex = await startFakeVertex();
    gateway = await startGateway();
    admin = client(gateway.url, gateway.adminKey);
    const vertexKey = (slug: string, region: string) => ({
      slug,
      provider: 'vertex-ai',
      cloudb_project_id: 'test-project',
      cloudb_service_account_json: vertex.serviceAccount,
      custom_host: vertex.url,
      cloudb_region: region,
    });
    for (const [path, body] of [
      ['/virtual-keys', vertexKey('vx-global', 'global')],
      ['/virtual-keys', vertexKey('vx-eu', 'europe-west4')],
    ] as const) {
      const created = await admin.post(path, body);
      expect(created.status, created.text).toBe(200);
    }
  });
  afterAll(async () => {
    await gateway?.close();
    await vertex?.close();
  });

  const create = async (path: string, body: Record<string, unknown>) => {
    const created = await admin.post(path, body);
    expect(created.status, created.text).toBe(200);
  };

  it("is refused when the prompt's next version sends its calls to a regional key, unless forced", async () => {
    await create('/prompts', { slug: 'to-vx', string: template, parameters, virtual_key: 'vx-global' });
    await create('/configs', { slug: 'priority-latest', config: { prompt_id: 'to-vx@latest', ...PRIORITY } });
    const version = { string: template, parameters, virtual_key: 'vx-eu' };
    const refused = await admin.put('/prompts/to-vx', version);
    const error = expectError(refused, 409, 'conflict', 'virtual_key');
    const { configs } = refused.body.error.dependents as {
      configs: Array<{ slug: string; param: string; reason: string }>;
    };
    expect(configs.map(({ slug, param }) => ({ slug, param }))).toEqual([
      { slug: 'priority-latest', param: 'config.cloudb_shared_request_type' },
    ]);
    // The words of the check a config is stored by.
    expect(configs[0].reason).toContain(
      'the prompt "to-vx" (version 2) sends its calls to virtual key "vx-eu"',
    );
    expect(configs[0].reason).toContain("(got 'europe-west4')");
    expect(error.message).toContain(
      `"priority-latest" (config.cloudb_shared_request_type): ${configs[0].reason}`,
    );
    expect((await admin.get('/prompts/to-vx')).body.version).toBe(1);
    // So a config stored now against version 2 is refused alike.
    const forced = await admin.put('/prompts/to-vx?force=true', version);
    expect(forced.status, forced.text).toBe(200);
    expectError(
      await admin.post('/configs', {
        slug: 'priority-after',
        config: { prompt_id: 'to-vx@latest', ...PRIORITY },
      }),
      400,
      'invalid_config',
      'config.cloudb_shared_request_type',
    );
  });

  it('is refused when the stored config the version sends its calls to moves to a regional key', async () => {
    await create('/configs', { slug: 'vx-route', config: { virtual_key: 'vx-global' } });
    await create('/prompts', { slug: 'via-route', string: template, parameters, config: 'vx-route' });
    await create('/configs', { slug: 'priority-route', config: { prompt_id: 'via-route', ...PRIORITY } });
    const refused = await admin.patch('/configs/vx-route', { config: { virtual_key: 'vx-eu' } });
    expectError(refused, 409, 'conflict', 'config');
    const { configs } = refused.body.error.dependents as {
      configs: Array<{ slug: string; param: string; reason: string }>;
    };
    expect(configs.map(({ slug, param }) => ({ slug, param }))).toEqual([
      { slug: 'priority-route', param: 'config.cloudb_shared_request_type' },
    ]);
    expect(configs[0].reason).toContain('through config "vx-route" to virtual key "vx-eu"');
    expect((await admin.get('/configs/vx-route')).body.version).toBe(1);
  });

  it("is refused when the prompt's version sends its calls with the target's parent's regional key", async () => {
    await create('/prompts', { slug: 'to-parent', string: template, parameters, virtual_key: 'vx-global' });
    await create('/configs', {
      slug: 'priority-under-eu',
      config: {
        virtual_key: 'vx-eu',
        strategy: { mode: 'fallback' },
        targets: [{ prompt_id: 'to-parent@latest', ...PRIORITY }],
      },
    });
    // Version 2 names no credential: its calls go with the parent's key, in europe-west4.
    const tree = {
      strategy: { mode: 'fallback' },
      targets: [{ retry: { attempts: 1 }, override_params: { model: 'gemini-2.0-flash' } }],
    };
    const refused = await admin.put('/prompts/to-parent', { string: template, parameters, config: tree });
    expectError(refused, 409, 'conflict', 'config');
    const { configs } = refused.body.error.dependents as {
      configs: Array<{ slug: string; param: string; reason: string }>;
    };
    expect(configs.map(({ slug, param }) => ({ slug, param }))).toEqual([
      { slug: 'priority-under-eu', param: 'config.targets[0].cloudb_shared_request_type' },
    ]);
    expect(configs[0].reason).toContain('virtual key "vx-eu"');
    expect((await admin.get('/prompts/to-parent')).body.version).toBe(1);
  });

  it('names every refusal of one target: its host and its Vertex AI settings', async () => {
    // Another regional key, stored with another host.
    await create('/virtual-keys', {
      slug: 'vx-eu-other',
      provider: 'vertex-ai',
      cloudb_project_id: 'test-project',
      cloudb_service_account_json: vertex.serviceAccount,
      custom_host: 'http://127.0.0.1:9',
      cloudb_region: 'europe-west4',
    });
    await create('/prompts', { slug: 'two-reasons', string: template, parameters, virtual_key: 'vx-global' });
    await create('/configs', {
      slug: 'host-and-priority',
      config: { prompt_id: 'two-reasons@latest', custom_host: vertex.url, ...PRIORITY },
    });
    const refused = await admin.put('/prompts/two-reasons', {
      string: template,
      parameters,
      virtual_key: 'vx-eu-other',
    });
    const error = expectError(refused, 409, 'conflict', 'virtual_key');
    const { configs } = refused.body.error.dependents as {
      configs: Array<{ slug: string; param: string; reason: string }>;
    };
    expect(configs.map(({ slug, param }) => ({ slug, param }))).toEqual([
      { slug: 'host-and-priority', param: 'config.custom_host' },
      { slug: 'host-and-priority', param: 'config.cloudb_shared_request_type' },
    ]);
    expect(configs[1].reason).toContain("(got 'europe-west4')");
    expect(error.message).toContain('to a stored credential beside a host of their own');
    expect(error.message).toContain('to a Vertex AI credential whose settings');
    expect((await admin.get('/prompts/two-reasons')).body.version).toBe(1);
  });
});
