/**
 * Two gateway nodes of one deployment on one fresh PostgreSQL schema and one Redis prefix, whose lookup
 * caches would keep a record for ten minutes, and a fake OpenAI provider: what one node changes, the other
 * must see through the invalidation that crosses Redis, not through its cache running out.
 */
import { afterAll, beforeAll } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { deploymentKeys, startGateway, type TestGateway } from './gateway.js';
import { dropSchema, freshSchemaName, postgresUrl } from './postgres.js';
import { deleteRedisKeys, freshRedisPrefix, redisEnv } from './redis.js';

/** How long the invalidation may take to cross Redis: generous for a loaded machine, far below the TTL. */
export const PROPAGATION_DEADLINE_MS = 5_000;

export interface TwoNodes {
  /** What both nodes were started with: GATEWAY_ADMIN_KEY and GATEWAY_MASTER_KEY among it. */
  env: ReturnType<typeof deploymentKeys> & Record<string, string>;
  schema: string;
  /** The Redis prefix both nodes' keys are under. */
  prefix: string;
  /** Each node's adminKey is the deployment's (env.GATEWAY_ADMIN_KEY). */
  a: TestGateway;
  b: TestGateway;
  fake: FakeUpstream;
}

/**
 * Starts the two nodes and the fake before the tests of the describe block it is called in, and closes them,
 * drops the schema and deletes the Redis keys after; its fields are set once the tests run. `label` names
 * the schema, the prefix and the fake; `settings` are more settings of both nodes.
 */
export function twoNodesSharingStores(label: string, settings: Record<string, string> = {}): TwoNodes {
  const schema = freshSchemaName(label);
  const prefix = freshRedisPrefix(label);
  const env = {
    ...deploymentKeys('nodes'),
    ...redisEnv(prefix),
    GATEWAY_LOOKUP_CACHE_TTL_MS: String(10 * 60_000),
    ...settings,
  };
  // The nodes and the fake are set in beforeAll, before any test reads them.
  const nodes = { env, schema, prefix } as Pick<TwoNodes, 'env' | 'schema' | 'prefix'> as TwoNodes;
  beforeAll(async () => {
    nodes.fake = await startFakeOpenAI({ name: label });
    nodes.a = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
    nodes.b = await startGateway({ env, postgres: { url: postgresUrl(), schema } });
  });
  afterAll(async () => {
    await nodes.fake?.close();
    await nodes.a?.close();
    await nodes.b?.close();
    await dropSchema(schema);
    await deleteRedisKeys(prefix);
  });
  return nodes;
}

/** What `read` gives once `until` holds of it, or when the propagation deadline has passed (then the last). */
export async function readUntil<T>(read: () => Promise<T>, until: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + PROPAGATION_DEADLINE_MS;
  let value = await read();
  while (!until(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await read();
  }
  return value;
}
