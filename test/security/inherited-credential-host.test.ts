/**
 * A target that names no provider or virtual key of its own takes its parent's stored credential
 * (routing/inherit.ts), and with it the rule that the credential goes only to the host stored with it
 * (credential-host.ts): such a target giving a host setting of its own — `custom_host` of another server,
 * another Azure `resource_name` — is refused when the config is stored (a stored config, created or
 * patched, and a prompt version's inline config): 400 invalid_config naming the target's own setting
 * (`config.targets[0].custom_host`). A call under such a config (inline, or stored before the rule) is
 * refused too, and nothing reaches the other server. On an SQLite file and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { call, client, expectError, type Client } from '../management/http.js';

const SECRET = 'sk-home-SECRET-0123456789';
const AZURE_SECRET = 'azure-home-SECRET-0123456789';
const template = JSON.stringify([{ role: 'user', content: 'hi' }]);
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

function inheritedHostRules(start: () => Promise<TestGateway>): void {
  let gateway: TestGateway;
  let admin: Client;
  /** Where the stored credentials are sent (their stored custom_host). */
  let home: FakeUpstream;
  /** A server of someone else's, that a target names as its own custom_host. */
  let elsewhere: FakeUpstream;

  beforeAll(async () => {
    home = await startFakeOpenAI({ name: 'home' });
    elsewhere = await startFakeOpenAI({ name: 'elsewhere' });
    gateway = await start();
    admin = client(gateway.url, gateway.adminKey);
    for (const [path, body] of [
      ['/virtual-keys', { slug: 'vk-home', provider: 'openai', api_key: SECRET, custom_host: home.url }],
      ['/providers', { slug: 'openai-home', provider: 'openai', api_key: SECRET, custom_host: home.url }],
      [
        '/virtual-keys',
        {
          slug: 'vk-azure',
          provider: 'azure-openai',
          api_key: AZURE_SECRET,
          resource_name: 'home-resource',
          deployment_id: 'gpt-4o-mini',
          api_version: '2024-10-21',
          custom_host: home.url,
        },
      ],
    ] as const) {
      const created = await admin.post(path, body);
      expect(created.status, created.text).toBe(200);
    }
  });
  afterAll(async () => {
    await gateway?.close();
    await home?.close();
    await elsewhere?.close();
  });

  /** Configs whose target takes a stored credential from above and gives a host of its own; the param. */
  const inheriting = (): Array<[string, Record<string, unknown>, string]> => [
    [
      'custom_host',
      {
        virtual_key: 'vk-home',
        strategy: { mode: 'fallback' },
        targets: [{ custom_host: elsewhere.url, retry: { attempts: 1 } }],
      },
      'config.targets[0].custom_host',
    ],
    [
      'custom_host, two levels down from an @slug',
      {
        provider: '@openai-home',
        strategy: { mode: 'fallback' },
        targets: [
          {
            strategy: { mode: 'single' },
            override_params: { temperature: 0 },
            targets: [{ custom_host: elsewhere.url, request_timeout: 30000 }],
          },
        ],
      },
      'config.targets[0].targets[0].custom_host',
    ],
    [
      'resource_name',
      {
        virtual_key: 'vk-azure',
        strategy: { mode: 'single' },
        targets: [{ resource_name: 'someone-elses', retry: { attempts: 1 } }],
      },
      'config.targets[0].resource_name',
    ],
  ];

  const sentAway = () =>
    elsewhere.requests.length +
    home.requests.filter((request) => JSON.stringify(request.headers).includes('SECRET')).length;

  it('is refused when a config is stored, naming the target’s own setting', async () => {
    for (const [what, config, param] of inheriting()) {
      const refused = await admin.post('/configs', { slug: 'moved-inherited', config });
      expectError(refused, 400, 'invalid_config', param);
      expect(refused.body.error.message, what).toContain('stored');
    }
    expect((await admin.get('/configs/moved-inherited')).status).toBe(404);
  });

  it('is refused in a PATCH of a config', async () => {
    const created = await admin.post('/configs', {
      slug: 'patched-inherited',
      config: {
        virtual_key: 'vk-home',
        strategy: { mode: 'fallback' },
        targets: [{ retry: { attempts: 1 } }],
      },
    });
    expect(created.status, created.text).toBe(200);
    for (const [, config, param] of inheriting()) {
      expectError(await admin.patch('/configs/patched-inherited', { config }), 400, 'invalid_config', param);
    }
  });

  it("is refused in a prompt version's inline config, created or put", async () => {
    for (const [, config, param] of inheriting()) {
      expectError(
        await admin.post('/prompts', { slug: 'moved-prompt', string: template, config }),
        400,
        'invalid_config',
        param,
      );
    }
    const prompt = await admin.post('/prompts', {
      slug: 'home-prompt',
      string: template,
      config: { virtual_key: 'vk-home', strategy: { mode: 'single' }, targets: [{ retry: { attempts: 1 } }] },
    });
    expect(prompt.status, prompt.text).toBe(200);
    const [, config, param] = inheriting()[0];
    expectError(
      await admin.put('/prompts/home-prompt', { string: template, config }),
      400,
      'invalid_config',
      param,
    );
  });

  it('is stored when the target gives the stored host, or names a provider of its own', async () => {
    const same = await admin.post('/configs', {
      slug: 'same-host-inherited',
      config: {
        virtual_key: 'vk-home',
        strategy: { mode: 'single' },
        targets: [{ custom_host: home.url, retry: { attempts: 1 } }],
      },
    });
    expect(same.status, same.text).toBe(200);
    // Its own provider and key: it takes nothing of its parent's, so its host is its own to choose.
    const own = await admin.post('/configs', {
      slug: 'own-provider-below',
      config: {
        virtual_key: 'vk-home',
        strategy: { mode: 'fallback' },
        targets: [{ provider: 'openai', api_key: 'sk-its-own', custom_host: elsewhere.url }],
      },
    });
    expect(own.status, own.text).toBe(200);
  });

  it('is refused when a call runs under it, inline or stored before the rule, and nothing is sent', async () => {
    const before = sentAway();
    const workspace = gateway.server.bootstrap.workspace;
    for (const [i, [what, config, param]] of inheriting().entries()) {
      const code = param.endsWith('custom_host') ? 'custom_host_refused' : 'invalid_config';
      const inline = await call(gateway.url, gateway.adminKey, 'POST', '/chat/completions', ask, {
        'x-gateway-config': JSON.stringify(config),
      });
      expect(inline.status, `${what}: ${inline.text}`).toBe(400);
      expectError(inline, 400, code, param);
      const slug = `stored-before-${i}`;
      await gateway.server.deps.store.createConfig({
        workspace_id: workspace.id,
        organisation_id: workspace.organisation_id,
        slug,
        name: slug,
        config,
      });
      const stored = await call(gateway.url, gateway.adminKey, 'POST', '/chat/completions', ask, {
        'x-gateway-config': slug,
      });
      expectError(stored, 400, code, param);
    }
    expect(sentAway()).toBe(before);
    // The target giving the stored host is sent there, with the stored secret.
    const sent = await call(gateway.url, gateway.adminKey, 'POST', '/chat/completions', ask, {
      'x-gateway-config': 'same-host-inherited',
    });
    expect(sent.status, sent.text).toBe(200);
    expect(home.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(elsewhere.requests.length).toBe(0);
  });
}

describe('a host setting of a target inheriting stored credentials (SQLite)', () => {
  inheritedHostRules(() => startGateway());
});

describeWithPostgres('a host setting of a target inheriting stored credentials (PostgreSQL)', () => {
  const schema = freshSchemaName('inherited_host');
  inheritedHostRules(() => startGateway({ postgres: { url: postgresUrl(), schema } }));
  afterAll(async () => {
    await dropSchema(schema);
  });
});
