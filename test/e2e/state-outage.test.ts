/**
 * The shared state (Redis) failing under a gateway, down or silent: the circuit breaker fails open and a
 * cache that cannot answer is a miss, so a call with `cb_config` or `cache` is answered by its provider as
 * one without them would be, within GATEWAY_REDIS_TIMEOUT_MS of each wait on Redis.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedisProxy, type RedisProxy } from '../helpers/redis-proxy.js';
import { deleteRedisKeys, describeWithRedis, freshRedisPrefix } from '../helpers/redis.js';
import { postChat, target, userMessage } from '../routing/support.js';

describeWithRedis('Redis failing under the gateway', () => {
  const prefix = freshRedisPrefix('state-outage');
  let proxy: RedisProxy;
  let gateway: TestGateway;
  let up: FakeUpstream;

  beforeAll(async () => {
    proxy = await startRedisProxy();
    up = await startFakeOpenAI({ name: 'up' });
    gateway = await startGateway({
      env: { REDIS_URL: proxy.url, GATEWAY_REDIS_PREFIX: prefix, GATEWAY_REDIS_TIMEOUT_MS: '300' },
    });
  });
  afterEach(() => proxy.set('pass'));
  afterAll(async () => {
    await gateway?.close();
    await up?.close();
    await proxy?.close();
    await deleteRedisKeys(prefix);
  });

  const breakerConfig = () => target(up, { cb_config: { failure_threshold: 3, cooldown_interval: 30_000 } });
  const ask = (config: Record<string, unknown>) =>
    postChat(gateway, config, { model: 'gpt-4o-mini', messages: userMessage(`q ${Math.random()}`) });

  /** Until the client is connected again after an earlier case cut it. */
  async function reconnected(): Promise<void> {
    for (let i = 0; i < 50; i++) {
      const answered = await gateway.server.deps.state.get('probe').then(
        () => true,
        () => false,
      );
      if (answered) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('Redis down: a target with cb_config is still called and answers', async () => {
    await reconnected();
    proxy.set('refuse');
    const calls = up.requests.length;
    const res = await ask(breakerConfig());
    expect(res.status, await res.text()).toBe(200);
    expect(up.requests.length - calls).toBe(1);
    expect(gateway.server.deps.routing.breaker.stats.read).toBeGreaterThan(0);
  });

  it("Redis going down during the call: the provider's answer reaches the client", async () => {
    await reconnected();
    up.enqueue({ firstByteDelayMs: 500 });
    const calls = up.requests.length;
    const pending = ask(breakerConfig());
    await new Promise((resolve) => setTimeout(resolve, 200));
    proxy.set('refuse');
    const res = await pending;
    expect(res.status, await res.text()).toBe(200);
    expect(up.requests.length - calls).toBe(1);
  });

  it('Redis silent (connections open, no replies): cache and cb_config calls are answered, not held', async () => {
    await reconnected();
    const cached = () => target(up, { cache: { mode: 'simple' } });
    expect((await ask(cached())).status).toBe(200);
    proxy.set('stall');
    for (const config of [cached(), breakerConfig()]) {
      const started = Date.now();
      const res = await ask(config);
      expect(res.status, await res.text()).toBe(200);
      expect(Date.now() - started).toBeLessThan(3_000);
    }
  });
});
