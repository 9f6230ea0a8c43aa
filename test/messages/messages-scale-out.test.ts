// /v1/messages on two gateway nodes sharing PostgreSQL and Redis: a virtual key and a stored config created
// on one node serve Messages calls on the other, and an answer (and a native stream) cached by one node is
// the other's cache hit. Skipped, with the reason printed, when PostgreSQL or Redis is absent (not under CI).
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic/server.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { deploymentKeys, startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { deleteRedisKeys, describeWithRedis, freshRedisPrefix, redisEnv } from '../helpers/redis.js';
import { expectAnthropicShape, postRawSse } from './anthropic-shapes.js';

const API_KEY = 'sk-ant-scale-out';

describeWithPostgres('Messages scale-out (PostgreSQL)', () => {
  describeWithRedis('two nodes sharing PostgreSQL and Redis', () => {
    const schema = freshSchemaName('messages_scale');
    const prefix = freshRedisPrefix('messages-scale');
    const env = {
      ...deploymentKeys('messages'),
      ...redisEnv(prefix),
    };
    let nodeA: TestGateway;
    let nodeB: TestGateway;
    let anthropic: FakeAnthropic;
    let openai: FakeUpstream;

    beforeAll(async () => {
      anthropic = await startFakeAnthropic({ apiKey: API_KEY });
      openai = await startFakeOpenAI({ name: 'shared' });
      nodeA = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
      nodeB = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
    });
    afterAll(async () => {
      await nodeA?.close();
      await nodeB?.close();
      await anthropic?.close();
      await openai?.close();
      await dropSchema(schema);
      await deleteRedisKeys(prefix);
    });

    const client = (node: TestGateway, headers: Record<string, string>) =>
      new Anthropic({
        baseURL: node.origin,
        apiKey: 'unused',
        maxRetries: 0,
        defaultHeaders: { 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY, ...headers },
      });
    const admin = async (node: TestGateway, path: string, body: unknown) => {
      const response = await fetch(`${node.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY },
        body: JSON.stringify(body),
      });
      expect(response.status, await response.clone().text()).toBe(200);
    };
    const ask = (content: string) => ({
      model: 'claude-opus-5',
      max_tokens: 64,
      messages: [{ role: 'user' as const, content }],
    });
    const anthropicTarget = () => ({ provider: 'anthropic', api_key: API_KEY, custom_host: anthropic.url });

    it('a virtual key and a stored config made on one node serve the other', async () => {
      await admin(nodeA, '/virtual-keys', { slug: 'claude-shared', name: 'claude', ...anthropicTarget() });
      const native = await client(nodeB, { 'x-gateway-virtual-key': 'claude-shared' }).messages.create(
        ask('B'),
      );
      expectAnthropicShape('Message', native);
      expect(anthropic.requests.at(-1)!.headers['x-api-key']).toBe(API_KEY);

      await admin(nodeA, '/configs', {
        slug: 'messages-shared',
        config: { provider: 'openai', api_key: 'sk-shared', custom_host: openai.url },
      });
      const translated = await client(nodeB, { 'x-gateway-config': 'messages-shared' }).messages.create(
        ask('via B'),
      );
      expect(translated.content).toEqual([{ type: 'text', text: '[shared] via B' }]);
    });

    it("one node's cached answer and stream are the other's hits", async () => {
      const config = JSON.stringify({ ...anthropicTarget(), cache: { mode: 'simple' } });
      const before = anthropic.requests.length;
      const first = await client(nodeA, { 'x-gateway-config': config })
        .messages.create(ask('cached'))
        .withResponse();
      const second = await client(nodeB, { 'x-gateway-config': config })
        .messages.create(ask('cached'))
        .withResponse();
      expect(first.response.headers.get('x-gateway-cache-status')).toBe('MISS');
      expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT');
      expect(second.data).toEqual(first.data);

      const body = { ...ask('cached stream'), stream: true };
      const headers = { 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY, 'x-gateway-config': config };
      const streamed = await postRawSse(`${nodeA.url}/messages`, headers, body);
      const replayed = await postRawSse(`${nodeB.url}/messages`, headers, body);
      expect(replayed.headers.get('x-gateway-cache-status')).toBe('HIT');
      expect(replayed.frames).toEqual(streamed.frames);
      expect(anthropic.requests.length).toBe(before + 2);
    });
  });
});
