/**
 * A stored config is judged by the config rules when it is written (create, PATCH), not again when a call
 * reads it: one stored before a rule was added keeps answering after an upgrade. A config a request
 * carries itself is judged as it comes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatWithConfig, client, expectError } from '../management/http.js';

let gateway: TestGateway;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'stored-before-rules' });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
});

describe('a config stored before a rule', () => {
  it('answers calls with strategy.conditions left on a fallback node, which a write of it is refused for', async () => {
    const admin = client(gateway.url, gateway.adminKey);
    const target = { provider: 'openai', api_key: 'sk-stored', custom_host: fake.url };
    const created = await admin.post('/configs', {
      slug: 'switched-to-fallback',
      config: { strategy: { mode: 'fallback' }, targets: [target] },
    });
    expect(created.status, created.text).toBe(200);
    // Switched from conditional to fallback before strategy.conditions was refused there.
    const switched = {
      strategy: {
        mode: 'fallback',
        conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'main' }],
        default: 'main',
      },
      targets: [{ ...target, name: 'main' }],
    };
    await gateway.server.deps.store.updateConfig(created.body.workspace_id, 'switched-to-fallback', {
      config: switched,
    });

    const answered = await chatWithConfig(gateway, 'switched-to-fallback');
    expect(answered.status, answered.text).toBe(200);
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-stored');

    // Written again, or carried by the request, it is refused.
    expectError(
      await admin.patch('/configs/switched-to-fallback', { config: switched }),
      400,
      'invalid_config',
      'config.strategy.conditions',
    );
    expectError(
      await chatWithConfig(gateway, JSON.stringify(switched)),
      400,
      'invalid_config',
      'config.strategy.conditions',
    );
  });
});
