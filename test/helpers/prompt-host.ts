/**
 * What the tests of a `prompt_id` target's host beside its prompt's stored credential start: a server the
 * stored credential is sent to (`home`, its stored custom_host), one a target names as a host of its own
 * (`elsewhere`), the gateway with its admin client, and the stored credential as a virtual key
 * (`vk-home`), a catalog provider (`@openai-home`) and a stored config naming the key (`home-config`).
 * Started by the suite's first beforeAll (a later one of the suite's own finds them) and closed after it.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { call, client, type Client, type Reply } from '../management/http.js';
import type { TestGateway } from './gateway.js';

/** The stored credential's secret. */
export const SECRET = 'sk-home-SECRET-0123456789';
export const template = JSON.stringify([{ role: 'user', content: 'hi' }]);
export const parameters = { model: 'gpt-4o-mini' };

export interface PromptHostFixture {
  gateway: TestGateway;
  admin: Client;
  home: FakeUpstream;
  elsewhere: FakeUpstream;
  /** A completion of the prompt `prompt` under the stored config `config`. */
  complete(prompt: string, config: string): Promise<Reply>;
}

export function promptHostFixture(start: () => Promise<TestGateway>): PromptHostFixture {
  const fixture = {
    complete: (prompt: string, config: string) =>
      call(
        fixture.gateway.url,
        fixture.gateway.adminKey,
        'POST',
        `/prompts/${prompt}/completions`,
        { variables: {} },
        { 'x-gateway-config': config },
      ),
  } as PromptHostFixture;
  beforeAll(async () => {
    fixture.home = await startFakeOpenAI({ name: 'home' });
    fixture.elsewhere = await startFakeOpenAI({ name: 'elsewhere' });
    fixture.gateway = await start();
    fixture.admin = client(fixture.gateway.url, fixture.gateway.adminKey);
    const stored = { provider: 'openai', api_key: SECRET, custom_host: fixture.home.url };
    for (const [path, body] of [
      ['/virtual-keys', { slug: 'vk-home', ...stored }],
      ['/providers', { slug: 'openai-home', ...stored }],
      ['/configs', { slug: 'home-config', config: { virtual_key: 'vk-home' } }],
    ] as const) {
      const created = await fixture.admin.post(path, body);
      expect(created.status, created.text).toBe(200);
    }
  });
  afterAll(async () => {
    await fixture.gateway?.close();
    await fixture.home?.close();
    await fixture.elsewhere?.close();
  });
  return fixture;
}
