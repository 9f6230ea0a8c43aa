/**
 * A PATCH that moves a credential to another host must send every stored secret again: judged against the
 * credential as it is written, not as the PATCH first read it. A secret stored by another PATCH meanwhile
 * (one of secrets only, which moves nothing) would otherwise go to the new host though neither PATCH sent
 * both. The moving PATCH is held after it has read the credential while the other is answered: before its
 * transaction (on an SQLite file and on PostgreSQL), and in it, just before its write (on PostgreSQL,
 * where the other's write is not kept waiting by the held transaction).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Repositories } from '../../src/store/types.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { client, expectError, type Client, type Reply } from './http.js';

type Held = 'listConfigVersionsWithoutReferences' | 'updateCredential';

/**
 * Holds the first call of the store's `method` (on the store, or on a transaction's repositories) until
 * `release`; other calls go on. `reached` resolves once it is held.
 */
function holdFirst(gateway: TestGateway, method: Held) {
  const store = gateway.server.deps.store;
  const original = { [method]: store[method], transaction: store.transaction };
  let reached!: () => void;
  let release!: () => void;
  const reachedOnce = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let first = true;
  const held = <T extends Repositories>(repositories: T): T => {
    const call = repositories[method].bind(repositories) as (...args: unknown[]) => Promise<unknown>;
    return {
      ...repositories,
      [method]: async (...args: unknown[]) => {
        if (first) {
          first = false;
          reached();
          await released;
        }
        return call(...args);
      },
    };
  };
  Object.assign(store, held(store));
  store.transaction = (work) => original.transaction((tx) => work(held(tx)));
  return { reached: reachedOnce, release, restore: () => Object.assign(store, original) };
}

/** Long enough for the other PATCH to be answered while the first is held. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

function carriedSecrets(start: () => Promise<TestGateway>, holds: readonly Held[]): void {
  let gateway: TestGateway;
  let admin: Client;
  let hostA: FakeUpstream;
  let hostB: FakeUpstream;

  beforeAll(async () => {
    hostA = await startFakeOpenAI({ name: 'race-host-a' });
    hostB = await startFakeOpenAI({ name: 'race-host-b' });
    gateway = await start();
    admin = client(gateway.url, gateway.adminKey);
  });
  afterAll(async () => {
    await gateway?.close();
    await hostA?.close();
    await hostB?.close();
  });

  for (const method of holds) {
    it(`a secret stored while a PATCH moving the host is held (${method}) is not carried to it`, async () => {
      const slug = `racing-host-${method}`;
      // No secret yet: a host that needs none (a proxy adding its own).
      const key = await admin.post('/virtual-keys', { slug, provider: 'openai', custom_host: hostA.url });
      expect(key.status, key.text).toBe(200);

      const hold = holdFirst(gateway, method);
      let moved: Reply;
      let rotated: Reply;
      try {
        // Sends no secret: the credential it read had none.
        const moving = admin.patch(`/virtual-keys/${slug}`, { custom_host: hostB.url });
        await hold.reached;
        rotated = await admin.patch(`/virtual-keys/${slug}`, { api_key: 'sk-race-secret-0001' });
        await settle();
        hold.release();
        moved = await moving;
      } finally {
        hold.restore();
      }
      // The secret was stored beside the old host, and said so.
      expect(rotated.status, rotated.text).toBe(200);
      expect(rotated.body.settings.custom_host).toBe(hostA.url);
      expectError(moved, 400, 'invalid_body', 'api_key');
      const stored = await admin.get(`/virtual-keys/${slug}`);
      expect(stored.body.settings.custom_host).toBe(hostA.url);
      expect(stored.body.secret_keys).toEqual(['api_key']);
    });
  }
}

describe('a host change judged against the stored secrets as written (SQLite)', () => {
  carriedSecrets(() => startGateway(), ['listConfigVersionsWithoutReferences']);
});

describeWithPostgres('a host change judged against the stored secrets as written (PostgreSQL)', () => {
  const schema = freshSchemaName('credential_race');
  carriedSecrets(
    () => startGateway({ postgres: { url: postgresUrl(), schema } }),
    ['listConfigVersionsWithoutReferences', 'updateCredential'],
  );
  afterAll(async () => {
    await dropSchema(schema);
  });
});
