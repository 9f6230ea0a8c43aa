/**
 * A foreground response whose node stopped while answering it (stored `in_progress`, never finished) is
 * failed by a worker node once it has not been written for a while, so that it does not show
 * `in_progress` for ever and a conversation may go on from it (a background one is its job's to finish
 * or fail). Two gateway nodes on one PostgreSQL store: the first only serves the API (its
 * store plays the node that stopped), the second runs the workers.
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';

describeWithPostgres('a foreground response left in progress', () => {
  const schema = freshSchemaName('responses_interrupted');
  let api: TestGateway;
  let worker: TestGateway | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    env = { GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'), GATEWAY_BATCH_POLL_MS: '50' };
    api = await startGateway({
      env: { ...env, GATEWAY_BATCH_WORKER: 'false' },
      postgres: { url: postgresUrl(), schema },
    });
  });

  afterAll(async () => {
    await worker?.close();
    await api?.close();
    await dropSchema(schema);
  });

  it('is failed by a worker node once it has not been written for a while', async () => {
    const { store } = api.server.deps;
    const workspace_id = api.server.bootstrap.workspace.id;
    const shell = (id: string) => ({
      id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'in_progress',
      model: 'gpt-4o-mini',
      output: [],
    });
    // What a node that stopped mid-answer leaves behind.
    await store.createResponse({
      workspace_id,
      id: 'resp_left_behind',
      previous_response_id: null,
      status: 'in_progress',
      body: shell('resp_left_behind'),
      input_items: [],
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    worker = await startGateway({
      env,
      postgres: { url: postgresUrl(), schema },
      responsesInterruptedAfterMs: 200,
    });
    const client = new OpenAI({
      baseURL: worker.url,
      apiKey: 'unused',
      defaultHeaders: { 'x-gateway-api-key': worker.adminKey },
    });
    await expect
      .poll(async () => (await client.responses.retrieve('resp_left_behind')).status, { timeout: 10_000 })
      .toBe('failed');
    const failed = await client.responses.retrieve('resp_left_behind');
    expect(failed.error).toMatchObject({
      code: 'server_error',
      message: expect.stringContaining('interrupted'),
    });
  });
});
