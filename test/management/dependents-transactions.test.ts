/**
 * A delete (or archive) refused while something names what it removes (a guardrail configs list, a config
 * prompts send their calls to) checks and writes in one transaction, and what writes such a name checks
 * it in one: a config or a prompt written while the delete is between its check and its write cannot name
 * what the delete then removes. On an SQLite file and on PostgreSQL. The delete is held just before its
 * write (the check has run) while the other write is sent.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { holdStore } from '../helpers/held-store.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { expectError, startedWithAdmin, type Reply } from './http.js';

type Removal =
  | 'deleteGuardrail'
  | 'deleteConfig'
  | 'updateConfig'
  | 'deleteCredential'
  | 'updateCredential'
  | 'deletePrompt'
  | 'deletePromptPartial'
  | 'publishPromptPartial'
  | 'createPrompt'
  | 'createGuardrail'
  | 'createConfig';

/** Long enough for a write that does not wait for the held delete to be answered. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/**
 * Sends `held` and holds it in the store's `method` (its check has run) while `during` is sent, then lets it
 * go on once `during` has had the time to be answered without waiting for it; both replies.
 */
async function whileHeld<T>(
  gateway: TestGateway,
  method: Removal,
  held: () => Promise<Reply>,
  during: () => Promise<T>,
): Promise<[Reply, T]> {
  const hold = holdStore(gateway.server.deps.store, method);
  try {
    const first = held();
    await hold.reached;
    const second = during();
    await settle();
    hold.release();
    return await Promise.all([first, second]);
  } finally {
    hold.restore();
  }
}

const template = JSON.stringify([{ role: 'user', content: 'hi' }]);
/** A chat template including the partial inside a JSON string. */
const includer = (partial: string) => `[{"role": "system", "content": "{{>${partial}}}"}]`;
const target = { provider: 'openai', api_key: 'sk-racing-0001' };
const blockList = { 'default.contains': { operator: 'none', words: ['forbidden'] }, deny: true };

function dependentsInTransactions(start: () => Promise<TestGateway>): void {
  const started = startedWithAdmin(start);

  it('a config stored while a guardrail is being deleted cannot list it', async () => {
    expect(
      (await started.admin.post('/guardrails', { slug: 'racing-guardrail', guardrail: blockList })).status,
    ).toBe(200);
    const [deleted, stored] = await whileHeld(
      started.gateway,
      'deleteGuardrail',
      () => started.admin.delete('/guardrails/racing-guardrail'),
      () =>
        started.admin.post('/configs', {
          slug: 'racing-config',
          config: { ...target, input_guardrails: ['racing-guardrail'] },
        }),
    );
    expect(deleted.status).toBe(200);
    expectError(stored, 400, 'invalid_config', 'config.input_guardrails[0]');
    expectError(await started.admin.get('/configs/racing-config'), 404, 'not_found');
  });

  it('a config or a prompt stored while a virtual key is being deleted cannot name it', async () => {
    const key = await started.admin.post('/virtual-keys', {
      slug: 'racing-key',
      provider: 'openai',
      api_key: 'sk-r',
    });
    expect(key.status, key.text).toBe(200);
    const [deleted, [config, prompt]] = await whileHeld(
      started.gateway,
      'deleteCredential',
      () => started.admin.delete('/virtual-keys/racing-key'),
      () =>
        Promise.all([
          started.admin.post('/configs', {
            slug: 'racing-key-config',
            config: { strategy: { mode: 'fallback' }, targets: [target, { virtual_key: 'racing-key' }] },
          }),
          started.admin.post('/prompts', {
            slug: 'racing-key-prompt',
            string: template,
            config: { virtual_key: 'racing-key' },
          }),
        ]),
    );
    expect(deleted.status).toBe(200);
    expectError(config, 400, 'invalid_config', 'config.targets[1].virtual_key');
    expectError(prompt, 400, 'invalid_config', 'config.virtual_key');
    expectError(await started.admin.get('/configs/racing-key-config'), 404, 'not_found');
    expectError(await started.admin.get('/prompts/racing-key-prompt'), 404, 'prompt_not_found');
  });

  it("a config stored while a key's host changes cannot repeat the old host beside it", async () => {
    const key = await started.admin.post('/virtual-keys', {
      slug: 'racing-host',
      provider: 'openai',
      api_key: 'sk-host-0',
      custom_host: 'http://127.0.0.1:9/v1',
    });
    expect(key.status, key.text).toBe(200);
    const hold = holdStore(started.gateway.server.deps.store, 'updateCredential');
    try {
      const moving = started.admin.patch('/virtual-keys/racing-host', {
        custom_host: 'http://127.0.0.1:10/v1',
        api_key: 'sk-host-1',
      });
      await hold.reached;
      const config = started.admin.post('/configs', {
        slug: 'racing-host-config',
        config: { virtual_key: 'racing-host', custom_host: 'http://127.0.0.1:9/v1' },
      });
      await settle();
      hold.release();
      expect((await moving).status).toBe(200);
      expectError(await config, 400, 'invalid_config', 'config.custom_host');
    } finally {
      hold.restore();
    }
    expectError(await started.admin.get('/configs/racing-host-config'), 404, 'not_found');
  });

  it('a guardrail stored while the virtual key its judge asks through is being deleted cannot name it', async () => {
    const key = await started.admin.post('/virtual-keys', {
      slug: 'racing-judge',
      provider: 'openai',
      api_key: 'sk-j',
    });
    expect(key.status, key.text).toBe(200);
    const [deleted, stored] = await whileHeld(
      started.gateway,
      'deleteCredential',
      () => started.admin.delete('/virtual-keys/racing-judge'),
      () =>
        started.admin.post('/guardrails', {
          slug: 'racing-judged',
          guardrail: { 'default.modelJudge': { instructions: 'Is it polite?', virtual_key: 'racing-judge' } },
        }),
    );
    expect(deleted.status).toBe(200);
    expectError(stored, 400, 'invalid_config', 'guardrail.default.modelJudge.virtual_key');
    expectError(await started.admin.get('/guardrails/racing-judged'), 404, 'not_found');
  });

  it('a config deleted while a guardrail whose judge asks through it is being stored is kept', async () => {
    expect(
      (await started.admin.post('/configs', { slug: 'racing-judge-route', config: target })).status,
    ).toBe(200);
    const [stored, deleted] = await whileHeld(
      started.gateway,
      'createGuardrail',
      () =>
        started.admin.post('/guardrails', {
          slug: 'racing-judging',
          guardrail: {
            'default.modelJudge': { instructions: 'Is it polite?', config: 'racing-judge-route' },
          },
        }),
      () => started.admin.delete('/configs/racing-judge-route'),
    );
    expect(stored.status).toBe(200);
    const refused = expectError(deleted, 409, 'conflict', 'id');
    expect(refused.message).toContain('guardrails "racing-judging" (guardrail.default.modelJudge.config)');
    expect((await started.admin.get('/configs/racing-judge-route')).status).toBe(200);
  });

  it('a virtual key given another provider while a config naming it is being stored is refused', async () => {
    const key = await started.admin.post('/virtual-keys', {
      slug: 'racing-moved',
      provider: 'openai',
      api_key: 'sk-m',
    });
    expect(key.status, key.text).toBe(200);
    const [stored, moved] = await whileHeld(
      started.gateway,
      'createConfig',
      () =>
        started.admin.post('/configs', {
          slug: 'racing-moved-route',
          config: { virtual_key: 'racing-moved' },
        }),
      () => started.admin.patch('/virtual-keys/racing-moved', { provider: 'anthropic', api_key: 'sk-ant-m' }),
    );
    expect(stored.status).toBe(200);
    const refused = expectError(moved, 409, 'conflict', 'provider');
    expect(refused.message).toContain('configs "racing-moved-route" (config.virtual_key)');
    expect((await started.admin.get('/virtual-keys/racing-moved')).body).toMatchObject({
      provider: 'openai',
    });
  });

  it('a config stored while a prompt is being deleted cannot name it by prompt_id', async () => {
    expect((await started.admin.post('/prompts', { slug: 'racing-named', string: template })).status).toBe(
      200,
    );
    const [deleted, stored] = await whileHeld(
      started.gateway,
      'deletePrompt',
      () => started.admin.delete('/prompts/racing-named'),
      () =>
        started.admin.post('/configs', {
          slug: 'racing-prompt-config',
          config: { ...target, prompt_id: 'racing-named' },
        }),
    );
    expect(deleted.status).toBe(200);
    expectError(stored, 400, 'invalid_config', 'config.prompt_id');
    expectError(await started.admin.get('/configs/racing-prompt-config'), 404, 'not_found');
  });

  it('a prompt stored while a partial it includes is being deleted cannot include it', async () => {
    const partial = await started.admin.post('/prompts/partials', {
      slug: 'racing-partial',
      string: 'Be brief.',
    });
    expect(partial.status, partial.text).toBe(200);
    const [deleted, stored] = await whileHeld(
      started.gateway,
      'deletePromptPartial',
      () => started.admin.delete('/prompts/partials/racing-partial'),
      () => started.admin.post('/prompts', { slug: 'racing-includer', string: includer('racing-partial') }),
    );
    expect(deleted.status).toBe(200);
    expectError(stored, 400, 'invalid_prompt');
    expectError(await started.admin.get('/prompts/racing-includer'), 404, 'prompt_not_found');
  });

  it('a partial stored while a partial it includes is being deleted cannot include it', async () => {
    const inner = await started.admin.post('/prompts/partials', {
      slug: 'racing-inner',
      string: 'Be brief.',
    });
    expect(inner.status, inner.text).toBe(200);
    const [deleted, stored] = await whileHeld(
      started.gateway,
      'deletePromptPartial',
      () => started.admin.delete('/prompts/partials/racing-inner'),
      () =>
        started.admin.post('/prompts/partials', { slug: 'racing-outer', string: 'First: {{>racing-inner}}' }),
    );
    expect(deleted.status).toBe(200);
    expectError(stored, 400, 'invalid_prompt');
    expectError(await started.admin.get('/prompts/partials/racing-outer'), 404, 'not_found');
  });

  it('a prompt stored while a version of a partial it includes is being published is checked against it', async () => {
    const partial = await started.admin.post('/prompts/partials', {
      slug: 'racing-published',
      string: 'Be brief.',
    });
    expect(partial.status, partial.text).toBe(200);
    // Version 2 closes the JSON string a chat template includes it in.
    const next = await started.admin.put('/prompts/partials/racing-published', { string: 'Be "brief".' });
    expect(next.status, next.text).toBe(200);
    const [published, stored] = await whileHeld(
      started.gateway,
      'publishPromptPartial',
      () => started.admin.put('/prompts/partials/racing-published/publish', { version: 2 }),
      () => started.admin.post('/prompts', { slug: 'racing-reader', string: includer('racing-published') }),
    );
    expect(published.status).toBe(200);
    expectError(stored, 400, 'invalid_prompt');
    expectError(await started.admin.get('/prompts/racing-reader'), 404, 'prompt_not_found');
  });

  it('a partial deleted while a prompt including it is being stored is kept', async () => {
    const partial = await started.admin.post('/prompts/partials', {
      slug: 'racing-kept',
      string: 'Be brief.',
    });
    expect(partial.status, partial.text).toBe(200);
    const [stored, deleted] = await whileHeld(
      started.gateway,
      'createPrompt',
      () => started.admin.post('/prompts', { slug: 'racing-keeper', string: includer('racing-kept') }),
      () => started.admin.delete('/prompts/partials/racing-kept'),
    );
    expect(stored.status).toBe(200);
    const refused = expectError(deleted, 409, 'conflict', 'id');
    expect(refused.message).toContain('"racing-keeper" (version 1)');
    expect((await started.admin.get('/prompts/partials/racing-kept')).status).toBe(200);
  });

  it('a prompt stored while its config is being deleted cannot send its calls to it', async () => {
    expect((await started.admin.post('/configs', { slug: 'racing-route', config: target })).status).toBe(200);
    const [deleted, stored] = await whileHeld(
      started.gateway,
      'deleteConfig',
      () => started.admin.delete('/configs/racing-route'),
      () =>
        started.admin.post('/prompts', { slug: 'racing-prompt', string: template, config: 'racing-route' }),
    );
    expect(deleted.status).toBe(200);
    expectError(stored, 404, 'config_not_found', 'config');
    expectError(await started.admin.get('/prompts/racing-prompt'), 404, 'prompt_not_found');
  });

  it('a prompt stored while its config is being archived cannot send its calls to it', async () => {
    expect((await started.admin.post('/configs', { slug: 'racing-archive', config: target })).status).toBe(
      200,
    );
    const [archived, stored] = await whileHeld(
      started.gateway,
      'updateConfig',
      () => started.admin.patch('/configs/racing-archive', { status: 'archived' }),
      () =>
        started.admin.post('/prompts', {
          slug: 'racing-archived-prompt',
          string: template,
          config: 'racing-archive',
        }),
    );
    expect(archived.status).toBe(200);
    expectError(stored, 404, 'config_not_found', 'config');
    expectError(await started.admin.get('/prompts/racing-archived-prompt'), 404, 'prompt_not_found');
  });
}

describe('dependents checked in the transaction of the delete, on SQLite', () => {
  dependentsInTransactions(() => startGateway());
});

describeWithPostgres('dependents checked in the transaction of the delete, on PostgreSQL', () => {
  const schema = freshSchemaName('dependents_tx');
  afterAll(async () => {
    await dropSchema(schema);
  });
  dependentsInTransactions(() => startGateway({ postgres: { url: postgresUrl(), schema } }));
});
