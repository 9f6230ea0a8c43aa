/**
 * A prompt version holding secrets outside what it sends its calls through (`parameters.user_api_key`,
 * a header of `parameters.extra_headers`), or a stored config holding secrets of its own beside a virtual key
 * or a stored guardrail it names, sends them with every call to wherever that thing sends them: moving a
 * virtual key (or catalog provider) or a stored guardrail elsewhere, or creating a config under a slug such
 * prompts still name, is refused (409 `conflict`, naming them) unless `?force=true`. Headers given as JSON
 * text are refused (400) rather than kept unredacted.
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

describe('a prompt version giving parameters.extra_headers as JSON text', () => {
  it('is refused naming the field, never stored with its secret shown', async () => {
    const headers = JSON.stringify({ authorization: 'Bearer text-header-secret' });
    const refused = await admin.post('/prompts', {
      slug: 'text-headers',
      string: template,
      parameters: { model: 'gpt-4o-mini', extra_headers: headers },
    });
    expectError(refused, 400, 'invalid_body', 'parameters.extra_headers');
    expect(refused.text).not.toContain('text-header-secret');
    expect((await admin.get('/prompts/text-headers')).status).toBe(404);

    await ok(
      admin.post('/prompts', {
        slug: 'object-headers',
        string: template,
        parameters: { model: 'gpt-4o-mini', extra_headers: { authorization: 'Bearer object-secret' } },
      }),
    );
    const again = await admin.put('/prompts/object-headers', {
      string: template,
      parameters: { model: 'gpt-4o-mini', extra_headers: headers },
    });
    expectError(again, 400, 'invalid_body', 'parameters.extra_headers');
    expect((await admin.get('/prompts/object-headers')).body.version).toBe(1);
  });
});
