/**
 * A change of which version of a prompt its references select — publishing a version (`slug`), storing
 * one as its latest (`slug@latest`) — can send the calls of a stored config's `prompt_id` target to a
 * stored credential beside a host setting of the target's own, each then refused (400
 * custom_host_refused). Such a change is a 409 conflict naming the active configs with their target's
 * setting, unless `?force=true`; a reference pinned to another version, a target giving the stored host,
 * one failing already, and one whose host reaches none of the version's calls (each target of its
 * destination names its own credential) are not named. A change of the stored config a version sends its
 * calls to is judged the same way. On an SQLite file and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { parameters, promptHostFixture, SECRET, template } from '../helpers/prompt-host.js';
import { expectError, type Client } from './http.js';

function promptChangeHostRules(start: () => Promise<TestGateway>): void {
  const fixture = promptHostFixture(start);
  let admin: Client;
  /** Where the stored credential is sent (its stored custom_host). */
  let home: FakeUpstream;
  /** A server the configs' targets name as their own custom_host. */
  let elsewhere: FakeUpstream;

  beforeAll(async () => {
    ({ admin, home, elsewhere } = fixture);
    // Version 1 of "moves" sends its calls to a key of its own: the targets' hosts are theirs to choose.
    const ownKey = { provider: 'openai', api_key: 'sk-its-own', custom_host: home.url };
    const own = (prompt: string) => ({ prompt_id: prompt, custom_host: elsewhere.url });
    for (const [path, body] of [
      ['/prompts', { slug: 'moves', string: template, parameters, config: ownKey }],
      ['/configs', { slug: 'follows-published', config: own('moves') }],
      [
        '/configs',
        {
          slug: 'follows-latest',
          config: { strategy: { mode: 'fallback' }, targets: [own('moves@latest')] },
        },
      ],
      ['/configs', { slug: 'pinned', config: own('moves@1') }],
      ['/configs', { slug: 'same-host', config: { prompt_id: 'moves', custom_host: home.url } }],
      ['/configs', { slug: 'archived', config: own('moves') }],
    ] as const) {
      const created = await admin.post(path, body);
      expect(created.status, created.text).toBe(200);
    }
    const archived = await admin.patch('/configs/archived', { status: 'archived' });
    expect(archived.status, archived.text).toBe(200);
  });

  const complete = (config: string) => fixture.complete('moves', config);

  const dependentsOf = (reply: { body: { error: { dependents: Record<string, unknown> } } }) =>
    reply.body.error.dependents;

  const reason = (version: number, to: string) =>
    `the prompt "moves" (version ${version}) sends its calls to ${to}: ` +
    'stored credentials are sent only to the host stored with them';

  it('storing a version as the latest is refused for the targets selecting @latest, unless forced', async () => {
    const version = { string: template, parameters, provider: '@openai-home' };
    const refused = await admin.put('/prompts/moves', version);
    const error = expectError(refused, 409, 'conflict', 'provider');
    expect(error.message).toContain(
      'Storing this version of the prompt "moves" would send the calls of configs whose targets name it',
    );
    expect(error.message).toContain('"follows-latest" (config.targets[0].custom_host)');
    expect(error.message).toContain('send ?force=true');
    const { configs, prompts, guardrails } = dependentsOf(refused) as {
      configs: Array<{ slug: string; param: string; reason: string }>;
      prompts: unknown[];
      guardrails: unknown[];
    };
    expect(configs.map(({ slug, param }) => ({ slug, param }))).toEqual([
      { slug: 'follows-latest', param: 'config.targets[0].custom_host' },
    ]);
    expect(configs[0].reason).toContain(reason(2, 'provider "@openai-home"'));
    expect(prompts).toEqual([]);
    expect(guardrails).toEqual([]);
    expect((await admin.get('/prompts/moves')).body.version).toBe(1);
    expect((await complete('follows-latest')).status).toBe(200);

    const forced = await admin.put('/prompts/moves?force=true', version);
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body.version).toBe(2);
    const before = elsewhere.requests.length;
    expectError(
      await complete('follows-latest'),
      400,
      'custom_host_refused',
      'config.targets[0].custom_host',
    );
    expect(elsewhere.requests.length).toBe(before);
    // Pinned to version 1, and the published version 1: as before.
    expect((await complete('pinned')).status).toBe(200);
    expect((await complete('follows-published')).status).toBe(200);
  });

  it('a target whose calls fail already is not named by a later version', async () => {
    // follows-latest meets version 2's stored credential already: version 3's is no change for it.
    const stored = await admin.put('/prompts/moves', { string: template, parameters, config: 'home-config' });
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body.version).toBe(3);
  });

  it('publishing a version is refused for the targets selecting the published one, unless forced', async () => {
    const refused = await admin.put('/prompts/moves/publish', { version: 3 });
    const error = expectError(refused, 409, 'conflict', 'version');
    expect(error.message).toContain('Publishing version 3 of the prompt "moves"');
    expect(error.message).toContain('"follows-published" (config.custom_host)');
    const { configs } = dependentsOf(refused) as {
      configs: Array<{ slug: string; param: string; reason: string }>;
    };
    // Not the pinned one, the one giving the stored host, the archived one, nor the one following @latest.
    expect(configs.map(({ slug, param }) => ({ slug, param }))).toEqual([
      { slug: 'follows-published', param: 'config.custom_host' },
    ]);
    expect(configs[0].reason).toContain(
      reason(3, 'virtual key "vk-home"').replace(
        'sends its calls to',
        'sends its calls through config "home-config" to',
      ),
    );
    expect((await admin.get('/prompts/moves')).body.published_version).toBe(1);
    expect((await complete('follows-published')).status).toBe(200);

    // Publishing the version already published changes nothing, and is not judged.
    expect((await admin.put('/prompts/moves/publish', { version: 1 })).status).toBe(200);

    const forced = await admin.put('/prompts/moves/publish?force=true', { version: 3 });
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body.published_version).toBe(3);
    expectError(await complete('follows-published'), 400, 'custom_host_refused', 'config.custom_host');
    const same = await complete('same-host');
    expect(same.status, same.text).toBe(200);
    expect(home.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect((await complete('pinned')).status).toBe(200);
  });

  it('changing the stored config a prompt sends its calls to is refused for the targets naming the prompt, unless forced', async () => {
    // No stored credential: the targets' hosts are theirs to choose.
    const ownKey = { provider: 'openai', api_key: 'sk-its-own', custom_host: home.url };
    for (const [path, body] of [
      ['/configs', { slug: 'open-destination', config: ownKey }],
      ['/prompts', { slug: 'through-config', string: template, parameters, config: 'open-destination' }],
      [
        '/configs',
        { slug: 'follows-destination', config: { prompt_id: 'through-config', custom_host: elsewhere.url } },
      ],
      [
        '/configs',
        { slug: 'same-host-destination', config: { prompt_id: 'through-config', custom_host: home.url } },
      ],
    ] as const) {
      const created = await admin.post(path, body);
      expect(created.status, created.text).toBe(200);
    }
    const toKey = { config: { virtual_key: 'vk-home' } };
    const refused = await admin.patch('/configs/open-destination', toKey);
    const error = expectError(refused, 409, 'conflict', 'config');
    expect(error.message).toContain('Changing the config "open-destination" would send the calls of configs');
    expect(error.message).toContain('"follows-destination" (config.custom_host)');
    expect(error.message).toContain('send ?force=true');
    const { configs } = dependentsOf(refused) as {
      configs: Array<{ slug: string; param: string; reason: string }>;
    };
    expect(configs.map(({ slug, param }) => ({ slug, param }))).toEqual([
      { slug: 'follows-destination', param: 'config.custom_host' },
    ]);
    expect(configs[0].reason).toContain(
      'the prompt "through-config" (version 1) sends its calls through config "open-destination" to ' +
        'virtual key "vk-home": stored credentials are sent only to the host stored with them',
    );
    expect((await admin.get('/configs/open-destination')).body.version).toBe(1);
    expect((await fixture.complete('through-config', 'follows-destination')).status).toBe(200);
    // Its name is no change of where calls go.
    expect((await admin.patch('/configs/open-destination', { name: 'Open' })).status).toBe(200);

    const forced = await admin.patch('/configs/open-destination?force=true', toKey);
    expect(forced.status, forced.text).toBe(200);
    expectError(
      await fixture.complete('through-config', 'follows-destination'),
      400,
      'custom_host_refused',
      'config.custom_host',
    );
    expect((await fixture.complete('through-config', 'same-host-destination')).status).toBe(200);
    // Refused already, so not broken by a later change.
    const again = await admin.patch('/configs/open-destination', { config: { provider: '@openai-home' } });
    expect(again.status, again.text).toBe(200);
  });

  it('a version sending every call to targets naming their own credential is stored', async () => {
    const ownKey = { provider: 'openai', api_key: 'sk-its-own', custom_host: home.url };
    for (const [path, body] of [
      ['/prompts', { slug: 'nests', string: template, parameters, config: ownKey }],
      [
        '/configs',
        { slug: 'follows-nested', config: { prompt_id: 'nests@latest', custom_host: elsewhere.url } },
      ],
    ] as const) {
      const created = await admin.post(path, body);
      expect(created.status, created.text).toBe(200);
    }
    // The target's host reaches none of its calls: each target of the tree names its own key.
    const nested = {
      virtual_key: 'vk-home',
      strategy: { mode: 'fallback' },
      targets: [{ virtual_key: 'vk-home' }, ownKey],
    };
    const stored = await admin.put('/prompts/nests', { string: template, parameters, config: nested });
    expect(stored.status, stored.text).toBe(200);
    const reply = await fixture.complete('nests', 'follows-nested');
    expect(reply.status, reply.text).toBe(200);
    expect(home.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
  });

  it("a version sending its calls with the target's parent credential is refused for its host, unless forced", async () => {
    // Version 1 names a provider at its destination's root: the target takes nothing of its parent's key.
    const ownKey = { provider: 'openai', api_key: 'sk-its-own', custom_host: home.url };
    const underKey = (host: string) => ({
      virtual_key: 'vk-home',
      strategy: { mode: 'fallback' },
      targets: [{ prompt_id: 'to-parent@latest', custom_host: host }],
    });
    for (const [path, body] of [
      ['/prompts', { slug: 'to-parent', string: template, parameters, config: ownKey }],
      ['/configs', { slug: 'parent-elsewhere', config: underKey(elsewhere.url) }],
      ['/configs', { slug: 'parent-home', config: underKey(home.url) }],
    ] as const) {
      const created = await admin.post(path, body);
      expect(created.status, created.text).toBe(200);
    }
    // Version 2 names no credential: its calls go with the parent's virtual key, to the target's host.
    const tree = {
      strategy: { mode: 'fallback' },
      targets: [{ retry: { attempts: 1 }, override_params: { model: 'gpt-4o-mini' } }],
    };
    const version = { string: template, parameters, config: tree };
    const refused = await admin.put('/prompts/to-parent', version);
    expectError(refused, 409, 'conflict', 'config');
    const { configs } = dependentsOf(refused) as {
      configs: Array<{ slug: string; param: string; reason: string }>;
    };
    expect(configs.map(({ slug, param }) => ({ slug, param }))).toEqual([
      { slug: 'parent-elsewhere', param: 'config.targets[0].custom_host' },
    ]);
    expect(configs[0].reason).toContain(
      'the prompt "to-parent" (version 2) sends its calls through its config',
    );
    expect(configs[0].reason).toContain('virtual key "vk-home"');
    expect((await fixture.complete('to-parent', 'parent-elsewhere')).status).toBe(200);

    const forced = await admin.put('/prompts/to-parent?force=true', version);
    expect(forced.status, forced.text).toBe(200);
    // Named at the target of the destination's tree the call meets.
    expectError(
      await fixture.complete('to-parent', 'parent-elsewhere'),
      400,
      'custom_host_refused',
      'config.targets[0].targets[0].custom_host',
    );
    const same = await fixture.complete('to-parent', 'parent-home');
    expect(same.status, same.text).toBe(200);
    expect(home.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
  });

  it('a bad force is a 400 either way', async () => {
    expectError(
      await admin.put('/prompts/moves/publish?force=yes', { version: 3 }),
      400,
      'invalid_query',
      'force',
    );
    expectError(
      await admin.put('/prompts/moves?force=yes', { string: template, parameters }),
      400,
      'invalid_query',
      'force',
    );
  });
}

describe('a prompt change sending a prompt_id target beside a host of its own to a stored credential (SQLite)', () => {
  promptChangeHostRules(() => startGateway());
});

describeWithPostgres(
  'a prompt change sending a prompt_id target beside a host of its own to a stored credential (PostgreSQL)',
  () => {
    const schema = freshSchemaName('prompt_change_host');
    promptChangeHostRules(() => startGateway({ postgres: { url: postgresUrl(), schema } }));
    afterAll(async () => {
      await dropSchema(schema);
    });
  },
);
