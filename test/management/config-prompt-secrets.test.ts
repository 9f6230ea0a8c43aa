/**
 * A prompt version holding secrets outside its config (`parameters.user_api_key`, `extra_headers`) sends
 * them with every call to wherever the stored config it names sends its calls: a PATCH of that config
 * changing its destinations would send them elsewhere, so it is refused (409 `conflict`, naming the
 * prompts) unless `?force=true`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, expectError, ok, type Client } from './http.js';

const template = JSON.stringify([{ role: 'user', content: 'hi' }]);

let gateway: TestGateway;
let home: FakeUpstream;
let evil: FakeUpstream;
let admin: Client;

beforeAll(async () => {
  home = await startFakeOpenAI({ name: 'home' });
  evil = await startFakeOpenAI({ name: 'evil' });
  gateway = await startGateway();
  admin = client(gateway.url, gateway.adminKey);
});

afterAll(async () => {
  await gateway?.close();
  await home?.close();
  await evil?.close();
});

describe('a stored config named by prompt versions holding secrets of their own', () => {
  const at = (host: string, key = 'sk-cfg') => ({ provider: 'openai', api_key: key, custom_host: host });

  it('refuses a change of its destinations, naming the prompts, unless forced', async () => {
    await ok(admin.post('/configs', { slug: 'q-cfg', config: at(home.url) }));
    await ok(admin.post('/configs', { slug: 'plain-cfg', config: at(home.url) }));
    await ok(
      admin.post('/prompts', {
        slug: 'q',
        string: template,
        parameters: { model: 'gpt-4o-mini', user_api_key: 'user-secret' },
        config: 'q-cfg',
      }),
    );
    await ok(
      admin.post('/prompts', {
        slug: 'no-secrets',
        string: template,
        parameters: { model: 'gpt-4o-mini' },
        config: 'plain-cfg',
      }),
    );

    // Real values, no [REDACTED]: the prompt's kept secret would still go to the new host.
    const refused = await admin.patch('/configs/q-cfg', { config: at(evil.url, 'sk-new') });
    const error = expectError(refused, 409, 'conflict', 'config');
    expect(error.message).toContain('"q" (version 1)');
    expect(error.message).toContain('?force=true');
    expect(refused.body.error.dependents.prompts).toEqual([
      expect.objectContaining({ slug: 'q', versions: [1] }),
    ]);
    expect(refused.text).not.toContain('user-secret');
    expect((await admin.get('/configs/q-cfg')).body.config.custom_host).toBe(home.url);

    // Another secret at the same destinations is no move; a prompt without secrets of its own is no concern.
    await ok(admin.patch('/configs/q-cfg', { config: at(home.url, 'sk-rotated') }));
    await ok(admin.patch('/configs/plain-cfg', { config: at(evil.url) }));

    // The same values at other places: the host swapped with a log check's URL is a move.
    const withLog = (host: string, logURL: string) => ({
      ...at(host, 'sk-rotated'),
      input_guardrails: [{ 'default.log': { logURL } }],
    });
    await ok(admin.patch('/configs/q-cfg?force=true', { config: withLog(home.url, evil.url) }));
    expectError(
      await admin.patch('/configs/q-cfg', { config: withLog(evil.url, home.url) }),
      409,
      'conflict',
      'config',
    );
    expect((await admin.get('/configs/q-cfg')).body.config.custom_host).toBe(home.url);
    await ok(admin.patch('/configs/q-cfg', { config: withLog(home.url, evil.url) }));

    const forced = await admin.patch('/configs/q-cfg?force=true', { config: at(evil.url, 'sk-new') });
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body.config.custom_host).toBe(evil.url);
  });
});
