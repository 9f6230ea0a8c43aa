/**
 * Rate-limit policies on two gateway nodes sharing PostgreSQL and Redis, driven through the `openai` SDK
 * against a fake provider. The nodes share an injected clock that stands still unless a test moves it, so
 * a burst is decided by the counters alone (no sleeps) and hours and days pass at once.
 *
 * Every policy here lives in the one workspace of the admin key, so each carries a `metadata.case`
 * condition naming its test: the other tests' calls never meet it.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { deploymentKeys, startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import {
  deleteRedisKeys,
  describeWithRedis,
  freshRedisPrefix,
  redisEnv,
  redisUrl,
} from '../helpers/redis.js';
import { startRedisProxy as startSwitchableRedisProxy } from '../helpers/redis-proxy.js';
import { RedisState } from '../../src/state/redis-state.js';
import { target, type Config } from '../routing/support.js';
import { client, type Client } from '../management/http.js';

/** How long a change may take to cross Redis: generous for a loaded machine. */
const PROPAGATION_DEADLINE_MS = 5_000;

/** The provider's own `x-ratelimit-*` values (the fake's): what an answer no policy governs passes on. */
const FAKE_OWN_LIMITS = { requests: '10000', tokens: '10000000' };

interface Key {
  id: string;
  key: string;
}

/** A TCP proxy in front of Redis that a test can cut, as if the Redis server had gone away. */
async function startRedisProxy(): Promise<{ url: string; cut(): Promise<void> }> {
  const upstream = new URL(redisUrl());
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const backend = connect(Number(upstream.port || 6379), upstream.hostname);
    sockets.add(client).add(backend);
    client.pipe(backend).pipe(client);
    const drop = () => {
      client.destroy();
      backend.destroy();
    };
    client.on('error', drop).on('close', drop);
    backend.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(redisUrl());
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString(),
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

describeWithPostgres('rate-limit policies on two nodes (PostgreSQL)', () => {
  describeWithRedis('sharing PostgreSQL and Redis', () => {
    const schema = freshSchemaName('rate_limits');
    const prefix = freshRedisPrefix('rate-limits');
    let now = Date.UTC(2030, 0, 1);
    const clock = () => now;
    const env = {
      ...deploymentKeys('limits'),
      ...redisEnv(prefix),
    };
    const postgres = () => ({ url: postgresUrl(), schema });
    let nodeA: TestGateway;
    let nodeB: TestGateway;
    let fake: FakeUpstream;
    let backup: FakeUpstream;
    let admin: Client;
    let workspaceId: string;
    const extraNodes: TestGateway[] = [];

    beforeAll(async () => {
      fake = await startFakeOpenAI({ name: 'limits' });
      backup = await startFakeOpenAI({ name: 'limits-backup' });
      nodeA = await startGateway({ env, postgres: postgres(), rateLimitClock: clock });
      nodeB = await startGateway({ env, postgres: postgres(), rateLimitClock: clock });
      admin = client(nodeA.url, env.GATEWAY_ADMIN_KEY);
    });
    afterAll(async () => {
      for (const node of [nodeA, nodeB, ...extraNodes]) await node?.close();
      await fake?.close();
      await backup?.close();
      await dropSchema(schema);
      await deleteRedisKeys(prefix);
    });

    async function newKey(name: string): Promise<Key> {
      const created = await admin.post('/api-keys', { name, role: 'member' });
      expect(created.status, created.text).toBe(200);
      workspaceId = created.body.workspace_id as string;
      return { id: created.body.id as string, key: created.body.key as string };
    }

    /** Creates a policy on node A and waits until node B's lookups hold it too. */
    async function createPolicy(body: Record<string, unknown>): Promise<string> {
      const created = await admin.post('/policies/rate-limits', body);
      expect(created.status, created.text).toBe(200);
      expect(created.body).toEqual({ id: expect.any(String), object: 'policy_usage_limits' });
      const id = created.body.id as string;
      await onBUntil((ids) => ids.includes(id));
      return id;
    }

    async function onBUntil(until: (ids: string[]) => boolean, read = () => policyIdsOnB()): Promise<void> {
      const deadline = Date.now() + PROPAGATION_DEADLINE_MS;
      while (!until(await read()) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(until(await read())).toBe(true);
    }

    async function policyIdsOnB(): Promise<string[]> {
      const policies = await nodeB.server.deps.lookups.rateLimitPolicies(workspaceId);
      return policies.map((policy) => policy.id);
    }

    function sdk(
      node: TestGateway,
      key: Key,
      metadata: Record<string, string>,
      config: Config = target(fake),
    ) {
      return new OpenAI({
        baseURL: node.url,
        apiKey: 'sk-client',
        maxRetries: 0,
        defaultHeaders: {
          'x-gateway-api-key': key.key,
          'x-gateway-config': JSON.stringify(config),
          'x-gateway-metadata': JSON.stringify(metadata),
        },
      });
    }

    const chat = (openai: OpenAI, model = 'gpt-4o-mini', content = 'hello') =>
      openai.chat.completions.create({ model, messages: [{ role: 'user', content }] }).withResponse();

    /** The call's status and headers, whether it answered or failed. */
    /**
     * A key whose calls (metadata `case: name`) meet a policy of their own, per key, and a node reaching
     * Redis through a proxy the test can cut, stall or slow (with `nodeEnv` over the suite's settings): the
     * policy's counter in Redis, and a connection of the test's own to read it. `close` ends both.
     */
    async function caseBehindProxy(
      name: string,
      limit: { type: 'requests' | 'tokens'; unit: 'rpm' | 'rpd'; value: number },
      nodeEnv: Record<string, string>,
    ) {
      const key = await newKey(name);
      const policyId = await createPolicy({
        conditions: [{ key: 'metadata.case', value: name }],
        group_by: [{ key: 'api_key' }],
        ...limit,
      });
      const counter = `rl:${policyId}:${limit.type}:${limit.unit}:${JSON.stringify([key.id])}`;
      const proxy = await startSwitchableRedisProxy();
      const redis = new RedisState({ url: redisUrl(), prefix });
      const close = async () => {
        await redis.close();
        await proxy.close();
      };
      try {
        const node = await startGateway({
          env: { ...env, REDIS_URL: proxy.url, ...nodeEnv },
          postgres: postgres(),
          rateLimitClock: clock,
        });
        extraNodes.push(node);
        return { key, policyId, counter, proxy, redis, node, close };
      } catch (err) {
        await close();
        throw err;
      }
    }

    async function outcome(work: Promise<{ response: Response }>) {
      try {
        const { response } = await work;
        return { status: response.status, headers: response.headers, error: undefined };
      } catch (error) {
        if (!(error instanceof APIError)) throw error;
        return { status: error.status as number, headers: error.headers as Headers, error };
      }
    }

    it('admits exactly `value` requests of one key across both nodes under a concurrent burst', async () => {
      const key = await newKey('burst');
      const policyId = await createPolicy({
        name: 'per key',
        conditions: [{ key: 'api_key', value: key.id }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 5,
      });
      const before = fake.requests.length;
      const results = await Promise.all(
        Array.from({ length: 14 }, (_, i) =>
          outcome(chat(sdk(i % 2 ? nodeB : nodeA, key, { case: 'burst' }))),
        ),
      );
      const admitted = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status === 429);
      expect(admitted).toHaveLength(5);
      expect(refused).toHaveLength(9);
      expect(fake.requests.length - before).toBe(5);

      // Every answer the policy governs says so: 200s count down, 429s say when to come back.
      expect(admitted.map((r) => r.headers.get('x-ratelimit-remaining-requests')).sort()).toEqual([
        '0',
        '1',
        '2',
        '3',
        '4',
      ]);
      for (const r of admitted) {
        expect(r.headers.get('x-ratelimit-limit-requests')).toBe('5');
        expect(r.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+(s|m\d+s)$/);
      }
      const { error, headers } = refused[0];
      expect(headers.get('retry-after')).toBe('12');
      expect(headers.get('x-ratelimit-limit-requests')).toBe('5');
      expect(headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(headers.get('x-ratelimit-reset-requests')).toBe('1m0s');
      expect(headers.get('x-gateway-error-source')).toBe('gateway');
      expect(error?.type).toBe('requests');
      expect(error?.code).toBe('rate_limit_exceeded');
      expect(headers.get('x-gateway-rate-limit-policy')).toBe(policyId);
      expect(error?.message).toContain(policyId);
      expect(error?.message).toContain(`api_key=${key.id}`);

      // One interval later (60 s / 5), room for exactly one more, on either node.
      now += 12_000;
      expect((await outcome(chat(sdk(nodeB, key, { case: 'burst' })))).status).toBe(200);
      expect((await outcome(chat(sdk(nodeA, key, { case: 'burst' })))).status).toBe(429);
    });

    it('limits tokens per metadata user, settled from streamed usage, and skips calls without a user', async () => {
      const key = await newKey('tokens');
      const limit = 400;
      await createPolicy({
        conditions: [{ key: 'metadata.case', value: 'tokens' }],
        group_by: [{ key: 'metadata.user' }],
        type: 'tokens',
        unit: 'rpm',
        value: limit,
      });
      const messages = [{ role: 'user' as const, content: 'count my tokens please' }];
      const reservation = Math.ceil(JSON.stringify(messages).length / 4) + 20;
      const stream = async (node: TestGateway, user: string) => {
        const { data, response } = await sdk(node, key, { case: 'tokens', user })
          .chat.completions.create({
            model: 'gpt-4o-mini',
            messages,
            max_tokens: 20,
            stream: true,
            stream_options: { include_usage: true },
          })
          .withResponse();
        let used: number | undefined;
        for await (const chunk of data) if (chunk.usage) used = chunk.usage.total_tokens;
        expect(used).toBeGreaterThan(0);
        return { used: used as number, headers: response.headers };
      };

      // A stream's headers go out with its first byte: the reservation is charged, not yet settled.
      const first = await stream(nodeA, 'alice');
      expect(first.headers.get('x-ratelimit-limit-tokens')).toBe(String(limit));
      expect(first.headers.get('x-ratelimit-remaining-tokens')).toBe(String(limit - reservation));
      // Settled to the streamed usage before the stream ended: node B sees what alice really used.
      const second = await stream(nodeB, 'alice');
      expect(second.headers.get('x-ratelimit-remaining-tokens')).toBe(
        String(limit - first.used - reservation),
      );
      // Bob has a counter of his own.
      const bob = await stream(nodeB, 'bob');
      expect(bob.headers.get('x-ratelimit-remaining-tokens')).toBe(String(limit - reservation));

      // Alice goes on until her settled usage reaches the limit; the next call is refused.
      let used = first.used + second.used;
      let calls = 0;
      while (used < limit && calls++ < 100) used += (await stream(calls % 2 ? nodeA : nodeB, 'alice')).used;
      const refused = await outcome(chat(sdk(nodeA, key, { case: 'tokens', user: 'alice' })));
      expect(refused.status).toBe(429);
      expect(refused.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
      expect(refused.error?.message).toContain('metadata.user=alice');

      // Without the group_by value the policy does not count the call at all.
      const anonymous = await outcome(chat(sdk(nodeA, key, { case: 'tokens' })));
      expect(anonymous.status).toBe(200);
      // (the provider's own headers are passed on as they came)
      expect(anonymous.headers.get('x-ratelimit-limit-tokens')).toBe(FAKE_OWN_LIMITS.tokens);
    });

    it('`*` matches every key but those in `excludes`', async () => {
      const limited = await newKey('star-limited');
      const exempt = await newKey('star-exempt');
      await createPolicy({
        conditions: [
          { key: 'metadata.case', value: 'star' },
          { key: 'api_key', value: '*', excludes: [exempt.id] },
        ],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      });
      expect((await outcome(chat(sdk(nodeA, limited, { case: 'star' })))).status).toBe(200);
      expect((await outcome(chat(sdk(nodeB, limited, { case: 'star' })))).status).toBe(429);
      for (const node of [nodeA, nodeB, nodeA]) {
        const answer = await outcome(chat(sdk(node, exempt, { case: 'star' })));
        expect(answer.status).toBe(200);
        expect(answer.headers.get('x-ratelimit-limit-requests')).toBe(FAKE_OWN_LIMITS.requests);
      }
    });

    it('matches `model` as `@provider/model` and `@provider/*`', async () => {
      const key = await newKey('models');
      await createPolicy({
        conditions: [
          { key: 'metadata.case', value: 'model-exact' },
          { key: 'model', value: '@openai/gpt-4o-mini' },
        ],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      });
      const exact = { case: 'model-exact' };
      expect((await outcome(chat(sdk(nodeA, key, exact), 'gpt-4o-mini'))).status).toBe(200);
      expect((await outcome(chat(sdk(nodeB, key, exact), 'gpt-4o-mini'))).status).toBe(429);
      expect((await outcome(chat(sdk(nodeB, key, exact), 'gpt-4o'))).status).toBe(200);
      expect((await outcome(chat(sdk(nodeA, key, exact), 'gpt-4o'))).status).toBe(200);

      await createPolicy({
        conditions: [
          { key: 'metadata.case', value: 'model-prefix' },
          { key: 'model', value: '@openai/*' },
        ],
        group_by: [{ key: 'model' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      });
      const prefixed = { case: 'model-prefix' };
      // One counter per model the prefix covers…
      for (const model of ['gpt-4o-mini', 'gpt-4o']) {
        const first = await outcome(chat(sdk(nodeA, key, prefixed), model));
        expect(first.status).toBe(200);
        const second = await outcome(chat(sdk(nodeB, key, prefixed), model));
        expect(second.status).toBe(429);
        expect(second.error?.message).toContain(`model=@openai/${model}`);
      }
      // …and another provider's models are not covered.
      const groq = { provider: 'groq', api_key: 'sk-test', custom_host: fake.url };
      for (const node of [nodeA, nodeB]) {
        expect((await outcome(chat(sdk(node, key, prefixed, groq), 'gpt-4o-mini'))).status).toBe(200);
      }
    });

    it('counts hours and days: the refused wait for their interval, which injected time skips', async () => {
      const key = await newKey('units');
      for (const unit of ['rph', 'rpd'] as const) {
        await createPolicy({
          conditions: [{ key: 'metadata.case', value: unit }],
          group_by: [{ key: 'api_key' }],
          type: 'requests',
          unit,
          value: 2,
        });
      }
      const hour = 3_600_000;
      const cases = [
        { unit: 'rph', interval: hour / 2, reset: '1h0m0s' },
        { unit: 'rpd', interval: (24 * hour) / 2, reset: '24h0m0s' },
      ];
      for (const { unit, interval, reset } of cases) {
        const ask = (node: TestGateway) => outcome(chat(sdk(node, key, { case: unit })));
        expect((await ask(nodeA)).status).toBe(200);
        expect((await ask(nodeB)).status).toBe(200);
        const refused = await ask(nodeA);
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).toBe(String(interval / 1000));
        expect(refused.headers.get('x-ratelimit-reset-requests')).toBe(reset);
        now += interval - 1_000;
        expect((await ask(nodeB)).status).toBe(429);
        now += 1_000;
        expect((await ask(nodeB)).status).toBe(200);
        expect((await ask(nodeA)).status).toBe(429);
      }
    });

    it("a policy's 429 never triggers the config's retry or fallback", async () => {
      const key = await newKey('no-retry');
      await createPolicy({
        conditions: [{ key: 'metadata.case', value: 'no-retry' }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      });
      const config = {
        retry: { attempts: 3, on_status_codes: [429] },
        strategy: { mode: 'fallback', on_status_codes: [429] },
        targets: [target(fake), target(backup)],
      };
      expect((await outcome(chat(sdk(nodeA, key, { case: 'no-retry' }, config)))).status).toBe(200);
      const calls = fake.requests.length + backup.requests.length;
      const refused = await outcome(chat(sdk(nodeB, key, { case: 'no-retry' }, config)));
      expect(refused.status).toBe(429);
      expect(refused.error?.code).toBe('rate_limit_exceeded');
      expect(refused.headers.get('x-gateway-retry-attempt-count')).toBe('0');
      expect(fake.requests.length + backup.requests.length).toBe(calls);
    });

    it('governs every endpoint that calls a model: completions, embeddings and pass-through too', async () => {
      const key = await newKey('endpoints');
      await createPolicy({
        conditions: [{ key: 'metadata.case', value: 'endpoints' }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 4,
      });
      const openai = sdk(nodeA, key, { case: 'endpoints' });
      const speech = () =>
        fetch(`${nodeB.url}/audio/speech`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-gateway-api-key': key.key,
            'x-gateway-config': JSON.stringify(target(fake)),
            'x-gateway-metadata': JSON.stringify({ case: 'endpoints' }),
          },
          body: JSON.stringify({ model: 'tts-1', input: 'hi', voice: 'alloy' }),
        });
      const completion = await outcome(
        openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi' }).withResponse(),
      );
      expect(completion.headers.get('x-ratelimit-remaining-requests')).toBe('3');
      const embedding = await outcome(
        openai.embeddings.create({ model: 'text-embedding-3-small', input: 'hi' }).withResponse(),
      );
      expect(embedding.headers.get('x-ratelimit-remaining-requests')).toBe('2');
      const relayed = await speech();
      expect(relayed.status).toBe(200);
      expect(relayed.headers.get('x-ratelimit-remaining-requests')).toBe('1');
      await relayed.arrayBuffer();
      expect((await outcome(chat(openai))).status).toBe(200);
      const refused = await speech();
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('15');
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    });

    it('a change made on node A governs node B as soon as it crosses Redis', async () => {
      const key = await newKey('changes');
      const id = await createPolicy({
        conditions: [{ key: 'metadata.case', value: 'changes' }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      });
      const ask = () => outcome(chat(sdk(nodeB, key, { case: 'changes' })));
      expect((await ask()).status).toBe(200);
      expect((await ask()).status).toBe(429);

      const raised = await admin.put(`/policies/rate-limits/${id}`, { value: 3 });
      expect(raised.status, raised.text).toBe(200);
      const valueOnB = async () =>
        (await nodeB.server.deps.lookups.rateLimitPolicies(workspaceId)).find((p) => p.id === id)?.value;
      await onBUntil(
        (ids) => ids.length > 0,
        async () => ((await valueOnB()) === 3 ? [id] : []),
      );
      expect(await valueOnB()).toBe(3);
      const afterRaise = await ask();
      expect(afterRaise.status).toBe(200);
      expect(afterRaise.headers.get('x-ratelimit-limit-requests')).toBe('3');

      expect((await admin.delete(`/policies/rate-limits/${id}`)).status).toBe(200);
      await onBUntil((ids) => !ids.includes(id));
      for (let i = 0; i < 3; i++) expect((await ask()).status).toBe(200);
    });

    it('a change stored while its node is cut from Redis reaches the other nodes once it is back, within seconds', async () => {
      const { policyId, proxy, node, close } = await caseBehindProxy(
        'cut-publisher',
        { type: 'requests', unit: 'rpm', value: 1 },
        { GATEWAY_REDIS_TIMEOUT_MS: '300' },
      );
      const onNode = client(node.url, env.GATEWAY_ADMIN_KEY);
      const valueOnB = async () =>
        (await nodeB.server.deps.lookups.rateLimitPolicies(workspaceId)).find((p) => p.id === policyId)
          ?.value;
      /** The node stores `change` while Redis is gone for longer than its client keeps a command queued. */
      const whileCut = async (change: () => Promise<{ status: number; text: string }>) => {
        proxy.set('refuse');
        const made = await change();
        expect(made.status, made.text).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        proxy.set('pass');
      };
      try {
        expect(await valueOnB()).toBe(1);
        await whileCut(() => onNode.patch(`/policies/rate-limits/${policyId}`, { value: 7 }));
        // Node B stayed connected and still caches the policy: only the announcement tells it, well before
        // its cache's lifetime (GATEWAY_LOOKUP_CACHE_TTL_MS, 30 s) runs out.
        await onBUntil(
          (ids) => ids.length > 0,
          async () => ((await valueOnB()) === 7 ? [policyId] : []),
        );
        await whileCut(() => onNode.delete(`/policies/rate-limits/${policyId}`));
        await onBUntil((ids) => !ids.includes(policyId));
      } finally {
        await close();
      }
    });

    it('a change whose announcement timed out on a silent connection reaches the other nodes once it carries again', async () => {
      const { policyId, proxy, node, close } = await caseBehindProxy(
        'silent-publisher',
        { type: 'requests', unit: 'rpm', value: 1 },
        { GATEWAY_REDIS_TIMEOUT_MS: '300' },
      );
      const valueOnB = async () =>
        (await nodeB.server.deps.lookups.rateLimitPolicies(workspaceId)).find((p) => p.id === policyId)
          ?.value;
      try {
        expect(await valueOnB()).toBe(1);
        // The connection stays open (the client still takes it for ready) but carries nothing: the
        // announcement times out, and no reconnection comes to send it again.
        proxy.set('stall');
        const changed = await client(node.url, env.GATEWAY_ADMIN_KEY).patch(
          `/policies/rate-limits/${policyId}`,
          { value: 7 },
        );
        expect(changed.status, changed.text).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 800));
        proxy.set('pass');
        await onBUntil(
          (ids) => ids.length > 0,
          async () => ((await valueOnB()) === 7 ? [policyId] : []),
        );
      } finally {
        await close();
      }
    });

    it('a roomy policy is charged in leases: headers count down, and a stopping node gives back the rest', async () => {
      const key = await newKey('leases');
      const policyId = await createPolicy({
        conditions: [{ key: 'metadata.case', value: 'leases' }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        // Per day: the counter's key expires in real time, seconds per unit, while the clock stands still.
        unit: 'rpd',
        value: 6_400,
      });
      const node = await startGateway({ env, postgres: postgres(), rateLimitClock: clock });
      extraNodes.push(node);
      const redis = new RedisState({ url: redisUrl(), prefix });
      const counter = `rl:${policyId}:requests:rpd:${JSON.stringify([key.id])}`;
      const level = async () => Number((await redis.get(counter))?.split(',')[0]);
      try {
        // Calls until the node holds leased units (Redis holds more than the calls made), at least 20. The
        // level is judged as read in the loop: unused units go back at the node's next sweep (every 200 ms),
        // so a second reading may already find them returned.
        const remaining: string[] = [];
        let charged = 0;
        const leased = async () => {
          charged = await level();
          return charged > remaining.length;
        };
        while (remaining.length < 20 || !(await leased())) {
          const answer = await outcome(chat(sdk(node, key, { case: 'leases' })));
          expect(answer.status).toBe(200);
          remaining.push(answer.headers.get('x-ratelimit-remaining-requests') as string);
          expect(remaining.length).toBeLessThan(100);
        }
        expect(remaining).toEqual(remaining.map((_, i) => String(6_399 - i)));
        expect(charged).toBeGreaterThan(remaining.length);
        await node.close();
        expect(await level()).toBe(remaining.length);
      } finally {
        await redis.close();
      }
    });

    it('a node started while Redis is down answers, and shares counters and changes once Redis is back', async () => {
      const key = await newKey('down-at-start');
      const policyId = await createPolicy({
        conditions: [{ key: 'metadata.case', value: 'down-at-start' }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      });
      const proxy = await startSwitchableRedisProxy();
      try {
        proxy.set('refuse');
        const node = await startGateway({
          env: {
            ...env,
            REDIS_URL: proxy.url,
            GATEWAY_RATE_LIMIT_TIMEOUT_MS: '300',
            GATEWAY_REDIS_TIMEOUT_MS: '300',
          },
          postgres: postgres(),
          rateLimitClock: clock,
        });
        extraNodes.push(node);
        const ask = (on: TestGateway) => outcome(chat(sdk(on, key, { case: 'down-at-start' })));
        // The counters cannot be reached: the call goes through unchecked (fail mode `open`).
        expect((await ask(node)).status).toBe(200);

        proxy.set('pass');
        expect((await ask(nodeA)).status).toBe(200);
        // Back in Redis, the node meets the counter node A charged.
        const deadline = Date.now() + PROPAGATION_DEADLINE_MS;
        let status = (await ask(node)).status;
        while (status !== 429 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          status = (await ask(node)).status;
        }
        expect(status).toBe(429);
        // And hears the changes made on the others: a raised limit applies on it too.
        const raised = await admin.patch(`/policies/rate-limits/${policyId}`, { value: 3 });
        expect(raised.status, raised.text).toBe(200);
        const valueOnNode = async () =>
          (await node.server.deps.lookups.rateLimitPolicies(workspaceId)).find((p) => p.id === policyId)
            ?.value;
        const changed = Date.now() + PROPAGATION_DEADLINE_MS;
        while ((await valueOnNode()) !== 3 && Date.now() < changed) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(await valueOnNode()).toBe(3);
        expect((await ask(node)).status).toBe(200);
      } finally {
        await proxy.close();
      }
    });

    it('a take whose reply a lost connection swallowed is charged once, not again when the node reconnects', async () => {
      const { key, counter, proxy, redis, node, close } = await caseBehindProxy(
        'lost-reply',
        { type: 'requests', unit: 'rpm', value: 5 },
        { GATEWAY_RATE_LIMIT_TIMEOUT_MS: '500', GATEWAY_REDIS_TIMEOUT_MS: '500' },
      );
      try {
        // Redis runs the node's take; the connection goes before its reply comes back.
        proxy.cutOn((sent) => sent.includes(counter));
        expect((await outcome(chat(sdk(node, key, { case: 'lost-reply' })))).status).toBe(200);
        // Unanswered, the take failed and the call went through unchecked (fail mode `open`); sent again
        // on the next connection, it would have been answered, and charged twice. Either way, once the call
        // has its answer, Redis has run all it will: the one call is charged once.
        expect(Number((await redis.get(counter))?.split(',')[0])).toBe(1);
        const next = await outcome(chat(sdk(nodeA, key, { case: 'lost-reply' })));
        expect(next.headers.get('x-ratelimit-remaining-requests')).toBe('3');
      } finally {
        await close();
      }
    });

    it('`closed`: a take whose reply a lost connection swallowed is given back once the node reconnects', async () => {
      const { key, counter, proxy, redis, node, close } = await caseBehindProxy(
        'lost-reply-closed',
        { type: 'requests', unit: 'rpm', value: 2 },
        {
          GATEWAY_RATE_LIMIT_FAIL_MODE: 'closed',
          GATEWAY_RATE_LIMIT_TIMEOUT_MS: '500',
          GATEWAY_REDIS_TIMEOUT_MS: '500',
        },
      );
      try {
        // Redis runs the node's take and charges it; the connection goes before its reply comes back.
        proxy.cutOn((sent) => sent.includes(counter));
        expect((await outcome(chat(sdk(node, key, { case: 'lost-reply-closed' })))).status).toBe(503);
        // The call was refused: once the node is connected again, the charge it never heard of goes back.
        await vi.waitFor(async () => expect(await redis.get(counter)).toBeUndefined(), {
          timeout: 5_000,
          interval: 20,
        });
        const next = await outcome(chat(sdk(nodeA, key, { case: 'lost-reply-closed' })));
        expect(next.status).toBe(200);
        expect(next.headers.get('x-ratelimit-remaining-requests')).toBe('1');
      } finally {
        await close();
      }
    });

    it('a check issued while the node is not connected to Redis is not charged once Redis is back', async () => {
      const { key, counter, proxy, redis, node, close } = await caseBehindProxy(
        'offline-check',
        { type: 'requests', unit: 'rpm', value: 2 },
        { GATEWAY_RATE_LIMIT_TIMEOUT_MS: '300', GATEWAY_REDIS_TIMEOUT_MS: '5000' },
      );
      try {
        const ask = () => outcome(chat(sdk(node, key, { case: 'offline-check' })));
        const first = await ask();
        expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');
        // The connection goes; the node's next one is open but carries nothing, so its client waits for it
        // to be ready (its commands queued, not sent).
        proxy.set('refuse');
        proxy.set('stall');
        const client = (node.server.deps.state as unknown as { client: { status: string } }).client;
        await vi.waitFor(() => expect(client.status).toBe('connect'), { timeout: 5_000, interval: 10 });
        const unchecked = await ask();
        expect(unchecked.status).toBe(200);
        expect(unchecked.headers.get('x-ratelimit-limit-requests')).toBe(FAKE_OWN_LIMITS.requests);
        // Redis comes back only after the call was let through unchecked (fail mode `open`).
        proxy.set('refuse');
        proxy.set('pass');
        await vi.waitFor(() => expect(client.status).toBe('ready'), { timeout: 5_000, interval: 10 });
        // The check the node gave up on never reached Redis: the unchecked call is not charged after it, and
        // the key's second request of the minute is still there.
        expect(Number((await redis.get(counter))?.split(',')[0])).toBe(1);
        const next = await ask();
        expect(next.status).toBe(200);
        expect(next.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      } finally {
        await close();
      }
    });

    it('a settlement issued while the node is not connected to Redis is not applied once Redis is back', async () => {
      const { key, counter, proxy, redis, node, close } = await caseBehindProxy(
        'offline-settle',
        { type: 'tokens', unit: 'rpd', value: 100_000 },
        { GATEWAY_RATE_LIMIT_TIMEOUT_MS: '300', GATEWAY_REDIS_TIMEOUT_MS: '5000' },
      );
      const level = async () => Number((await redis.get(counter))?.split(',')[0]);
      try {
        fake.enqueue({ firstByteDelayMs: 1_500 });
        const call = outcome(
          sdk(node, key, { case: 'offline-settle' })
            .chat.completions.create({
              model: 'gpt-4o-mini',
              messages: [{ role: 'user', content: 'hi' }],
              max_tokens: 5_000,
            })
            .withResponse(),
        );
        // The call is admitted, its reservation charged; then the connection goes, and the node's next one
        // is open but carries nothing (its client waits for it to be ready) when the answer comes.
        await vi.waitFor(async () => expect(await level()).toBeGreaterThan(5_000), { timeout: 5_000 });
        const reserved = await level();
        proxy.set('refuse');
        proxy.set('stall');
        const client = (node.server.deps.state as unknown as { client: { status: string } }).client;
        await vi.waitFor(() => expect(client.status).toBe('connect'), { timeout: 5_000, interval: 10 });
        expect((await call).status).toBe(200);
        const stats = node.server.deps.routing.rateLimits.stats;
        await vi.waitFor(() => expect(stats.settleFailures).toBe(1), { timeout: 5_000, interval: 10 });
        // Redis comes back after the settlement was given up (and counted as such): it is never sent, and
        // the reservation stands, as the node reported.
        proxy.set('refuse');
        proxy.set('pass');
        await vi.waitFor(() => expect(client.status).toBe('ready'), { timeout: 5_000, interval: 10 });
        // A command of the node's own after any it had queued: once it is answered, they were run.
        await node.server.deps.state.get('probe');
        expect(await level()).toBe(reserved);
      } finally {
        await close();
      }
    });

    /**
     * A check Redis runs at once while its answer reaches the node past the rate limits' timeout: the call
     * is decided under the fail mode, and what the take charged for it goes back once the answer is in.
     */
    for (const { title, name, limit, failMode, status, limitHeader, maxTokens, charged } of [
      {
        title:
          '`closed`: a call refused with 503 for a late answer is not counted when Redis runs its take after all',
        name: 'late-answer',
        limit: { type: 'requests', unit: 'rpm', value: 1 } as const,
        failMode: 'closed',
        // The call was refused: the unit it took goes back, and the key's one request a minute is still there.
        status: 503,
        limitHeader: null,
        maxTokens: undefined,
        charged: 1,
      },
      {
        title:
          '`open`: the token reservation of a call let through unchecked for a late answer does not stand',
        name: 'late-tokens',
        limit: { type: 'tokens', unit: 'rpd', value: 10_000 } as const,
        failMode: 'open',
        // Unchecked, the call is never settled: its reservation (9,000 tokens and more) goes back, rather
        // than keep the key from its next calls all day.
        status: 200,
        limitHeader: FAKE_OWN_LIMITS.tokens,
        maxTokens: 9_000,
        charged: 9_001,
      },
    ]) {
      it(title, async () => {
        const { key, counter, proxy, redis, node, close } = await caseBehindProxy(name, limit, {
          GATEWAY_RATE_LIMIT_FAIL_MODE: failMode,
          GATEWAY_RATE_LIMIT_TIMEOUT_MS: '300',
          GATEWAY_REDIS_TIMEOUT_MS: '5000',
        });
        const ask = (on: TestGateway) =>
          outcome(
            sdk(on, key, { case: name })
              .chat.completions.create({
                model: 'gpt-4o-mini',
                messages: [{ role: 'user', content: 'hi' }],
                ...(maxTokens !== undefined && { max_tokens: maxTokens }),
              })
              .withResponse(),
          );
        try {
          proxy.delayReplies(800);
          const decided = await ask(node);
          expect(decided.status).toBe(status);
          // Decided without the counters: no policy's headers (the provider's own, when it was called).
          expect(decided.headers.get(`x-ratelimit-limit-${limit.type}`)).toBe(limitHeader);
          expect(Number((await redis.get(counter))?.split(',')[0])).toBeGreaterThanOrEqual(charged);
          await vi.waitFor(async () => expect(await redis.get(counter)).toBeUndefined(), {
            timeout: 5_000,
            interval: 50,
          });
          expect((await ask(nodeA)).status).toBe(200);
        } finally {
          await close();
        }
      });
    }

    it('when Redis goes away mid-test: `open` lets calls through and logs, `closed` answers 503', async () => {
      const key = await newKey('outage');
      await createPolicy({
        conditions: [{ key: 'metadata.case', value: 'outage' }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      });
      const start = async (failMode: 'open' | 'closed') => {
        const proxy = await startRedisProxy();
        const node = await startGateway({
          env: {
            ...env,
            REDIS_URL: proxy.url,
            GATEWAY_RATE_LIMIT_FAIL_MODE: failMode,
            GATEWAY_RATE_LIMIT_TIMEOUT_MS: '500',
          },
          postgres: postgres(),
          rateLimitClock: clock,
        });
        extraNodes.push(node);
        return { node, proxy };
      };
      const open = await start('open');
      const closed = await start('closed');
      const ask = (node: TestGateway) => outcome(chat(sdk(node, key, { case: 'outage' })));

      // Through the proxies, the nodes share the counter with A and B.
      expect((await ask(open.node)).status).toBe(200);
      expect((await ask(closed.node)).status).toBe(429);
      expect((await ask(nodeA)).status).toBe(429);

      const openLog = vi.spyOn(open.node.server.deps.logger, 'error');
      await open.proxy.cut();
      const through = await ask(open.node);
      expect(through.status).toBe(200);
      expect(through.headers.get('x-ratelimit-limit-requests')).toBe(FAKE_OWN_LIMITS.requests);
      const openStats = open.node.server.deps.routing.rateLimits.stats;
      expect(openStats).toMatchObject({ unavailable: 1, admittedUnchecked: 1, refusedUnavailable: 0 });
      expect(openLog.mock.calls.map((call) => call[1])).toContainEqual(
        expect.stringContaining('GATEWAY_RATE_LIMIT_FAIL_MODE=open'),
      );

      const closedLog = vi.spyOn(closed.node.server.deps.logger, 'error');
      await closed.proxy.cut();
      const refused = await ask(closed.node);
      expect(refused.status).toBe(503);
      expect(refused.error?.code).toBe('rate_limit_unavailable');
      expect(refused.headers.get('retry-after')).toBe('1');
      const closedStats = closed.node.server.deps.routing.rateLimits.stats;
      expect(closedStats).toMatchObject({ unavailable: 1, admittedUnchecked: 0, refusedUnavailable: 1 });
      expect(closedLog.mock.calls.map((call) => call[1])).toContainEqual(
        expect.stringContaining('GATEWAY_RATE_LIMIT_FAIL_MODE=closed'),
      );

      // The nodes still reaching Redis still enforce the limit.
      expect((await ask(nodeB)).status).toBe(429);
    });
  });
});
