/**
 * A change of the version a prompt's references select is refused (409 conflict) for every reason it
 * would refuse the calls of the configs whose targets name the prompt, not only the first found: a host
 * setting of a target's own beside the stored credential the version sends its calls to, and a parent's
 * override_params.metadata the version no longer replaces, each named with its config, its setting and
 * why — in the message and in error.dependents — when both are met at once, in one config or in several.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../fakes/openai/server.js';
import { startGateway } from '../helpers/gateway.js';
import { parameters, promptHostFixture, template } from '../helpers/prompt-host.js';
import { expectError, type Client } from '../management/http.js';

const pairs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 'v']));

describe('a prompt change refused for several reasons at once', () => {
  const fixture = promptHostFixture(() => startGateway());
  let admin: Client;
  let home: FakeUpstream;
  let elsewhere: FakeUpstream;

  beforeAll(async () => {
    ({ admin, home, elsewhere } = fixture);
    // Version 1 sends its calls to a key of its own, and sets its own metadata.
    const ownKey = { provider: 'openai', api_key: 'sk-its-own', custom_host: home.url };
    const withMetadata = { ...parameters, metadata: { team: 'prompt' } };
    const underMetadata = (target: Record<string, unknown>) => ({
      strategy: { mode: 'fallback' },
      override_params: { metadata: pairs(17) },
      targets: [target],
    });
    for (const [path, body] of [
      ['/prompts', { slug: 'twice', string: template, parameters: withMetadata, config: ownKey }],
      ['/configs', { slug: 'host-only', config: { prompt_id: 'twice@latest', custom_host: elsewhere.url } }],
      ['/configs', { slug: 'metadata-only', config: underMetadata({ prompt_id: 'twice@latest' }) }],
      [
        '/configs',
        {
          slug: 'both-ways',
          config: underMetadata({ prompt_id: 'twice@latest', custom_host: elsewhere.url }),
        },
      ],
    ] as const) {
      const created = await admin.post(path, body);
      expect(created.status, created.text).toBe(200);
    }
  });

  it('names every reason, each with the config and setting it concerns', async () => {
    // Version 2 sends its calls to the stored key, and sets no metadata of its own.
    const refused = await admin.put('/prompts/twice', {
      string: template,
      parameters,
      virtual_key: 'vk-home',
    });
    const error = expectError(refused, 409, 'conflict', 'virtual_key');
    const { configs } = refused.body.error.dependents as {
      configs: Array<{ slug: string; param: string; reason: string }>;
    };
    expect(configs.map(({ slug, param }) => ({ slug, param }))).toEqual([
      { slug: 'host-only', param: 'config.custom_host' },
      { slug: 'metadata-only', param: 'config.override_params.metadata' },
      { slug: 'both-ways', param: 'config.targets[0].custom_host' },
      { slug: 'both-ways', param: 'config.override_params.metadata' },
    ]);
    const host =
      'the prompt "twice" (version 2) sends its calls to virtual key "vk-home": ' +
      'stored credentials are sent only to the host stored with them';
    const metadata = 'version 2 of the prompt "twice" sets no parameters.metadata of its own to replace it';
    expect(configs.map(({ reason }) => reason.includes(host) || reason.includes(metadata))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    // Both kinds of refusal are said, and each config is named with each of its reasons.
    expect(error.message).toContain('to a stored credential beside a host of their own');
    expect(error.message).toContain("with an override_params.metadata over OpenAI's limits");
    for (const { slug, param, reason } of configs) {
      expect(error.message).toContain(`"${slug}" (${param}): ${reason}`);
    }
    expect(error.message).toContain('send ?force=true');
    expect((await admin.get('/prompts/twice')).body.version).toBe(1);
  });
});
