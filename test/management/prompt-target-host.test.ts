/**
 * A `prompt_id` target that names no provider or virtual key of its own is sent to its prompt's destination
 * (prompts/prompt-targets.ts), with its own settings over the destination's. When that destination is a
 * stored credential holding a secret (the version's virtual key or `@slug`, or the one its config names at
 * its root), a host setting of the target's own that is not the stored one would send the secret elsewhere:
 * each call under it is refused (400 custom_host_refused), and so is the config when it is stored (a stored
 * config, created or patched, and a prompt version's inline config): 400 invalid_config naming the target's
 * own setting. A destination without a stored credential leaves the target's host its own to choose, and
 * a destination naming a provider or virtual key at its root keeps the target from its parent's credential,
 * so it is not judged against it; one naming neither is sent with the parent's, and judged against it. A
 * destination whose every target names its own below its root sends none of its calls with the target's
 * host, the root's credential or the parent's, and is not judged. On an SQLite file and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { parameters, promptHostFixture, SECRET, template } from '../helpers/prompt-host.js';
import { expectError, type Client } from './http.js';

function promptTargetHostRules(start: () => Promise<TestGateway>): void {
  const fixture = promptHostFixture(start);
  let gateway: TestGateway;
  let admin: Client;
  /** Where the stored credential is sent (its stored custom_host). */
  let home: FakeUpstream;
  /** A server of someone else's, that a target names as its own custom_host. */
  let elsewhere: FakeUpstream;

  beforeAll(async () => {
    ({ gateway, admin, home, elsewhere } = fixture);
    for (const [path, body] of [
      ['/prompts', { slug: 'to-vk', string: template, parameters, virtual_key: 'vk-home' }],
      ['/prompts', { slug: 'to-slug', string: template, parameters, provider: '@openai-home' }],
      ['/prompts', { slug: 'to-inline', string: template, parameters, config: { virtual_key: 'vk-home' } }],
      ['/prompts', { slug: 'to-stored', string: template, parameters, config: 'home-config' }],
      [
        '/prompts',
        {
          slug: 'to-tree',
          string: template,
          parameters,
          config: {
            strategy: { mode: 'fallback' },
            targets: [{ retry: { attempts: 1 }, override_params: { model: 'gpt-4o-mini' } }],
          },
        },
      ],
      [
        '/prompts',
        {
          slug: 'to-own-key',
          string: template,
          parameters,
          config: { provider: 'openai', api_key: 'sk-its-own', custom_host: home.url },
        },
      ],
    ] as const) {
      const created = await admin.post(path, body);
      expect(created.status, created.text).toBe(200);
    }
  });

  /** Configs whose prompt_id target gives a host of its own beside its prompt's stored credential. */
  const moving = (): Array<[string, Record<string, unknown>, string]> => [
    ["the version's virtual key", { prompt_id: 'to-vk', custom_host: elsewhere.url }, 'config.custom_host'],
    [
      "the version's @slug, in a fallback",
      { strategy: { mode: 'fallback' }, targets: [{ prompt_id: 'to-slug', custom_host: elsewhere.url }] },
      'config.targets[0].custom_host',
    ],
    [
      "the virtual key of the version's inline config, prompt_id inherited",
      {
        prompt_id: 'to-inline',
        strategy: { mode: 'fallback' },
        targets: [{ custom_host: elsewhere.url, retry: { attempts: 1 } }],
      },
      'config.targets[0].custom_host',
    ],
    [
      "the virtual key of the version's stored config, version selected",
      {
        strategy: { mode: 'fallback' },
        targets: [
          {
            strategy: { mode: 'single' },
            targets: [{ prompt_id: 'to-stored@1', custom_host: elsewhere.url }],
          },
        ],
      },
      'config.targets[0].targets[0].custom_host',
    ],
  ];

  it('is refused when a config is stored, created or patched, naming the target and the prompt', async () => {
    for (const [what, config, param] of moving()) {
      const refused = expectError(
        await admin.post('/configs', { slug: 'moved-by-prompt', config }),
        400,
        'invalid_config',
        param,
      );
      expect(refused.message, what).toMatch(/the prompt "to-[a-z]+" \(version 1\) sends its calls/);
      expect(refused.message, what).toContain(
        'stored credentials are sent only to the host stored with them',
      );
    }
    expectError(await admin.get('/configs/moved-by-prompt'), 404, 'not_found');
    const kept = await admin.post('/configs', {
      slug: 'patched-prompt-target',
      config: { prompt_id: 'to-vk' },
    });
    expect(kept.status, kept.text).toBe(200);
    for (const [, config, param] of moving()) {
      expectError(
        await admin.patch('/configs/patched-prompt-target', { config }),
        400,
        'invalid_config',
        param,
      );
    }
    expect((await admin.get('/configs/patched-prompt-target')).body.version).toBe(1);
  });

  it("is refused in a prompt version's inline config, created or put", async () => {
    for (const [, config, param] of moving()) {
      expectError(
        await admin.post('/prompts', { slug: 'moving-prompt', string: template, parameters, config }),
        400,
        'invalid_config',
        param,
      );
    }
    const [, config, param] = moving()[0];
    expectError(
      await admin.put('/prompts/to-own-key', { string: template, parameters, config }),
      400,
      'invalid_config',
      param,
    );
    expect((await admin.get('/prompts/to-own-key')).body.version).toBe(1);
  });

  it('is stored when the target gives the stored host, names its own provider, or its prompt no credential', async () => {
    const accepted: Array<[string, Record<string, unknown>]> = [
      ['same-host', { prompt_id: 'to-vk', custom_host: home.url }],
      ['own-provider', { prompt_id: 'to-vk', provider: 'openai', api_key: 'sk-mine', custom_host: home.url }],
      ['keyless-destination', { prompt_id: 'to-own-key', custom_host: home.url }],
      // The target takes its prompt's destination, not its parent's virtual key.
      [
        'not-the-parents',
        {
          virtual_key: 'vk-home',
          strategy: { mode: 'fallback' },
          targets: [{ prompt_id: 'to-own-key', custom_host: elsewhere.url }],
        },
      ],
    ];
    for (const [slug, config] of accepted) {
      const stored = await admin.post('/configs', { slug, config });
      expect(stored.status, `${slug}: ${stored.text}`).toBe(200);
    }
    const complete = (config: string) => fixture.complete('to-vk', config);
    expect((await complete('same-host')).status).toBe(200);
    expect(home.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    const own = await complete('not-the-parents');
    expect(own.status, own.text).toBe(200);
    expect(elsewhere.requests.at(-1)?.headers.authorization).toBe('Bearer sk-its-own');
  });

  it("takes its parent's credential when its prompt's destination names none at its root", async () => {
    // The destination (a tree naming no provider or virtual key) is sent with the parent's virtual key.
    const under = (host: string) => ({
      virtual_key: 'vk-home',
      strategy: { mode: 'fallback' },
      targets: [{ prompt_id: 'to-tree', custom_host: host }],
    });
    const refused = expectError(
      await admin.post('/configs', { slug: 'tree-elsewhere', config: under(elsewhere.url) }),
      400,
      'invalid_config',
      'config.targets[0].custom_host',
    );
    expect(refused.message).toContain('stored credentials are sent only to the host stored with them');
    const stored = await admin.post('/configs', { slug: 'tree-home', config: under(home.url) });
    expect(stored.status, stored.text).toBe(200);
    const reply = await fixture.complete('to-vk', 'tree-home');
    expect(reply.status, reply.text).toBe(200);
    expect(home.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
  });

  it("is stored when its prompt's destination sends every call to targets naming their own credential", async () => {
    // A target naming a provider or virtual key takes nothing of what is above it (routing/inherit.ts): the
    // prompt_id target's host, and the credential at the destination's root or the target's parent's, reach
    // none of these targets' calls.
    const fallback = { mode: 'fallback' };
    const ownKey = { provider: 'openai', api_key: 'sk-its-own', custom_host: home.url };
    for (const [slug, config] of [
      ['to-nested', { strategy: fallback, targets: [{ virtual_key: 'vk-home' }] }],
      [
        'to-nested-under-key',
        { virtual_key: 'vk-home', strategy: fallback, targets: [{ virtual_key: 'vk-home' }, ownKey] },
      ],
      [
        'to-partly-nested',
        { virtual_key: 'vk-home', strategy: fallback, targets: [ownKey, { retry: { attempts: 1 } }] },
      ],
    ] as const) {
      const created = await admin.post('/prompts', { slug, string: template, parameters, config });
      expect(created.status, created.text).toBe(200);
    }
    const accepted: Array<[string, Record<string, unknown>]> = [
      [
        'nested-under-parent',
        {
          virtual_key: 'vk-home',
          strategy: fallback,
          targets: [{ prompt_id: 'to-nested', custom_host: elsewhere.url }],
        },
      ],
      ['nested-under-key', { prompt_id: 'to-nested-under-key', custom_host: elsewhere.url }],
    ];
    for (const [slug, config] of accepted) {
      const stored = await admin.post('/configs', { slug, config });
      expect(stored.status, `${slug}: ${stored.text}`).toBe(200);
      const reply = await fixture.complete('to-vk', slug);
      expect(reply.status, `${slug}: ${reply.text}`).toBe(200);
      expect(home.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    }
    // One of the destination's targets names none of its own: its calls meet the key at the root.
    const refused = expectError(
      await admin.post('/configs', {
        slug: 'partly-nested',
        config: { prompt_id: 'to-partly-nested', custom_host: elsewhere.url },
      }),
      400,
      'invalid_config',
      'config.custom_host',
    );
    expect(refused.message).toContain('the prompt "to-partly-nested" (version 1) sends its calls');
  });

  it("is stored when each target of its prompt's destination sets that host setting itself", async () => {
    // A target's own setting wins over what it inherits: the prompt_id target's custom_host reaches none.
    const fallback = { mode: 'fallback' };
    const created = await admin.post('/prompts', {
      slug: 'to-hosted-targets',
      string: template,
      parameters,
      config: {
        virtual_key: 'vk-home',
        strategy: fallback,
        targets: [{ custom_host: home.url, retry: { attempts: 1 } }],
      },
    });
    expect(created.status, created.text).toBe(200);
    const stored = await admin.post('/configs', {
      slug: 'host-set-below',
      config: { prompt_id: 'to-hosted-targets', custom_host: elsewhere.url },
    });
    expect(stored.status, stored.text).toBe(200);
    const reply = await fixture.complete('to-vk', 'host-set-below');
    expect(reply.status, reply.text).toBe(200);
    expect(home.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    // Another host setting of the target's own still reaches the targets, which set none of it.
    expectError(
      await admin.post('/configs', {
        slug: 'resource-reaching',
        config: { prompt_id: 'to-hosted-targets', custom_host: elsewhere.url, resource_name: 'theirs' },
      }),
      400,
      'invalid_config',
      'config.resource_name',
    );
  });

  it('a call under such a config stored before the rule is refused, and nothing is sent', async () => {
    const before = elsewhere.requests.filter((r) => r.headers.authorization === `Bearer ${SECRET}`).length;
    const workspace = gateway.server.bootstrap.workspace;
    for (const [i, [what, config, param]] of moving().entries()) {
      const slug = `stored-before-${i}`;
      await gateway.server.deps.store.createConfig({
        workspace_id: workspace.id,
        organisation_id: workspace.organisation_id,
        slug,
        name: slug,
        config,
      });
      const reply = await fixture.complete('to-vk', slug);
      expect(reply.status, `${what}: ${reply.text}`).toBe(400);
      expectError(reply, 400, 'custom_host_refused', param);
      // Read and listed as any other.
      expect((await admin.get(`/configs/${slug}`)).status).toBe(200);
    }
    const sent = elsewhere.requests.filter((r) => r.headers.authorization === `Bearer ${SECRET}`).length;
    expect(sent).toBe(before);
  });
}

describe('a host setting of a prompt_id target beside its prompt’s stored credential (SQLite)', () => {
  promptTargetHostRules(() => startGateway());
});

describeWithPostgres(
  'a host setting of a prompt_id target beside its prompt’s stored credential (PostgreSQL)',
  () => {
    const schema = freshSchemaName('prompt_target_host');
    promptTargetHostRules(() => startGateway({ postgres: { url: postgresUrl(), schema } }));
    afterAll(async () => {
      await dropSchema(schema);
    });
  },
);
