/**
 * A stored config's override_params.metadata is judged with the prompt versions its prompt_id targets
 * select as the transaction storing it reads them (override-metadata.ts), not as they were before it: a
 * version published meanwhile that no longer sets its own `parameters.metadata` (which replaced the
 * parent's) sends the parent's metadata, over OpenAI's limits, in every call. The config's write is held
 * before its transaction begins while the version is published; it is then refused, as it is when stored
 * after the publish. On an SQLite file and on PostgreSQL.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { holdNextTransaction } from '../helpers/held-store.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { expectError, startedWithAdmin, type Reply } from './http.js';

const template = JSON.stringify([{ role: 'user', content: 'hi' }]);
const pairs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, 'v']));

function metadataRace(start: () => Promise<TestGateway>): void {
  const started = startedWithAdmin(start);

  const config = (prompt: string) => ({
    strategy: { mode: 'fallback' },
    override_params: { metadata: pairs(17) },
    targets: [{ provider: 'openai', api_key: 'sk-test', prompt_id: prompt }],
  });

  for (const write of ['created', 'patched'] as const) {
    it(`a config ${write} while its prompt's version is published is judged with that version`, async () => {
      const prompt = `replaced-${write}`;
      // Version 1 sets its own metadata (replacing the parent's); version 2 none.
      for (const parameters of [
        { model: 'gpt-4o-mini', metadata: { team: 'prompt' } },
        { model: 'gpt-4o-mini' },
      ]) {
        const body = { string: template, parameters };
        const stored =
          parameters.metadata !== undefined
            ? await started.admin.post('/prompts', { slug: prompt, ...body })
            : await started.admin.put(`/prompts/${prompt}`, body);
        expect(stored.status, stored.text).toBe(200);
      }
      const slug = `metadata-${write}`;
      if (write === 'patched') {
        const kept = await started.admin.post('/configs', {
          slug,
          config: { provider: 'openai', api_key: 'sk-test' },
        });
        expect(kept.status, kept.text).toBe(200);
      }
      const store = started.gateway.server.deps.store;
      const hold = holdNextTransaction(store);
      let stored: Reply;
      try {
        const storing =
          write === 'created'
            ? started.admin.post('/configs', { slug, config: config(prompt) })
            : started.admin.patch(`/configs/${slug}`, { config: config(prompt) });
        await hold.reached;
        const published = await started.admin.put(`/prompts/${prompt}/publish`, { version: 2 });
        expect(published.status, published.text).toBe(200);
        hold.release();
        stored = await storing;
      } finally {
        hold.restore();
      }
      expectError(stored, 400, 'invalid_config', 'config.override_params.metadata');
      const found = await started.admin.get(`/configs/${slug}`);
      if (write === 'created') expect(found.status).toBe(404);
      else expect(found.body.version).toBe(1);
    });
  }
}

describe('a config metadata check racing a prompt publish (SQLite)', () => {
  metadataRace(() => startGateway());
});

describeWithPostgres('a config metadata check racing a prompt publish (PostgreSQL)', () => {
  const schema = freshSchemaName('metadata_race');
  metadataRace(() => startGateway({ postgres: { url: postgresUrl(), schema } }));
  afterAll(async () => {
    await dropSchema(schema);
  });
});
