/**
 * What the invalidation bus publishes again once Redis takes its announcements again, over a fake
 * publisher: Redis away (every publish fails, the connection not ready), then back (`resend`).
 */
import { afterEach, expect, it } from 'vitest';
import { createAnnouncer, type Announcer, type BusEvent } from '../../src/gateway/invalidation.js';

const announcers: Announcer[] = [];
afterEach(() => {
  for (const announcer of announcers.splice(0)) announcer.close();
});

function cutFromRedis() {
  let up = false;
  const published: BusEvent[] = [];
  const errors: Error[] = [];
  const announcer = createAnnouncer({
    publish: (message) => {
      if (!up) return Promise.reject(new Error('Connection is closed.'));
      published.push(JSON.parse(message) as BusEvent);
      return Promise.resolve(1);
    },
    ready: () => up,
    onError: (error) => errors.push(error),
  });
  announcers.push(announcer);
  return {
    announcer,
    published,
    errors,
    /** Redis is back: the connection is ready, and what it did not take is published again. */
    async back(): Promise<void> {
      await new Promise((resolve) => setImmediate(resolve));
      up = true;
      announcer.resend();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

const added = (id: string): BusEvent => ({
  kind: 'semantic-cache',
  op: 'added',
  workspaceId: 'ws',
  partition: 'p',
  ids: [id],
});

it('an invalidation is published again after an outage however many semantic cache events followed it', async () => {
  const { announcer, published, back } = cutFromRedis();
  announcer.announce({ kind: 'workspace', workspaceId: 'ws-changed' });
  for (let i = 0; i < 10_001; i++) announcer.announce(added(`entry-${i}`));
  await back();
  const invalidations = published.filter((event) => event.kind !== 'semantic-cache');
  expect(invalidations).toEqual([{ kind: 'workspace', workspaceId: 'ws-changed' }]);
});

it('more distinct invalidations than are kept are published again as one that drops everything', async () => {
  const { announcer, published, back } = cutFromRedis();
  announcer.announce({ kind: 'api-keys' });
  for (let i = 0; i < 500; i++) announcer.announce({ kind: 'workspace', workspaceId: `ws-${i}` });
  await back();
  expect(published).toEqual([{ kind: 'all' }]);
});

it('a few invalidations are published again once each, and their failure logged once each', async () => {
  const { announcer, published, errors, back } = cutFromRedis();
  announcer.announce({ kind: 'workspace', workspaceId: 'ws-1' });
  announcer.announce({ kind: 'api-keys' });
  announcer.announce({ kind: 'workspace', workspaceId: 'ws-1' });
  await back();
  expect(published).toEqual([{ kind: 'workspace', workspaceId: 'ws-1' }, { kind: 'api-keys' }]);
  expect(errors).toHaveLength(3);
});

it('an entry added, removed and added again while Redis is away is not removed on the other nodes once it is back', async () => {
  const { announcer, published, back } = cutFromRedis();
  announcer.announce(added('entry-x'));
  announcer.announce({
    kind: 'semantic-cache',
    op: 'removed',
    workspaceId: 'ws',
    partition: 'p',
    ids: ['entry-x'],
  });
  announcer.announce(added('entry-x'));
  await back();
  const last = published.filter((event) => event.kind === 'semantic-cache').at(-1);
  expect(last === undefined || (last.kind === 'semantic-cache' && last.op === 'added')).toBe(true);
});
