/**
 * The invalidation bus across a lost Redis connection: the node subscribes again by itself, forgets what
 * it may have missed, and a bus closed at that moment leaves nothing behind (no unhandled rejection).
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  createRedisInvalidationBus,
  type BusEvent,
  type InvalidationBus,
} from '../../src/gateway/invalidation.js';
import { startRedisProxy, type RedisProxy } from '../helpers/redis-proxy.js';
import { describeWithRedis, freshRedisPrefix, redisUrl } from '../helpers/redis.js';

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeWithRedis('invalidation bus over a lost connection', () => {
  const prefix = freshRedisPrefix('invalidation-bus');
  let proxy: RedisProxy;
  let sender: InvalidationBus;
  const buses: InvalidationBus[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    proxy = await startRedisProxy();
    sender = await createRedisInvalidationBus({
      url: redisUrl(),
      prefix,
      commandTimeoutMs: 300,
      onEvent: () => undefined,
      onResubscribed: () => undefined,
      onError: () => undefined,
    });
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => proxy.set('pass'));
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    for (const bus of buses) await bus.close();
    await sender?.close();
    await proxy?.close();
  });

  async function listener(onResubscribed: (bus: InvalidationBus) => void) {
    const events: BusEvent[] = [];
    const bus: InvalidationBus = await createRedisInvalidationBus({
      url: proxy.url,
      prefix,
      commandTimeoutMs: 300,
      onEvent: (event) => events.push(event),
      onResubscribed: () => onResubscribed(bus),
      onError: () => undefined,
    });
    buses.push(bus);
    return { bus, events };
  }

  async function cutAndRestore(): Promise<void> {
    proxy.set('refuse');
    await new Promise((resolve) => setTimeout(resolve, 100));
    proxy.set('pass');
  }

  it('subscribes again, says so (what was published meanwhile is lost), and hears what follows', async () => {
    let resubscribed = 0;
    const { events } = await listener(() => resubscribed++);
    await cutAndRestore();
    await until(() => resubscribed === 1, 'the new subscription');

    sender.publish({ kind: 'workspace', workspaceId: 'ws-after' });
    await until(() => events.length === 1, 'the event published after the reconnect');
    expect(events).toEqual([{ kind: 'workspace', workspaceId: 'ws-after' }]);
  });

  it('hears an announcement that everything may be stale (a sender that kept too many unsent)', async () => {
    const { events } = await listener(() => undefined);
    sender.publish({ kind: 'all' });
    sender.publish({ kind: 'api-keys' });
    await until(() => events.length > 0, 'the events');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events).toEqual([{ kind: 'all' }, { kind: 'api-keys' }]);
  });

  it('closed while its new subscription waits for Redis: nothing is rejected unhandled', async () => {
    const { bus } = await listener(() => undefined);
    // The SUBSCRIBE sent on the new connection never reaches Redis: the client is still waiting for its
    // answer when the bus closes (ioredis's own resubscription was then rejected with no one listening).
    let subscribing = false;
    proxy.stallOn((sent) => {
      subscribing = /subscribe/i.test(sent);
      return subscribing;
    });
    await cutAndRestore();
    await until(() => subscribing, 'the SUBSCRIBE on the new connection');
    await bus.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(unhandled).toEqual([]);
  });
});
