/**
 * A deployment whose nodes the batch tests start in turn and stop (SIGTERM: `close`): a fake OpenAI
 * provider, a front node that only serves the API, and an SDK client of it. The nodes share one store (a
 * SQLite file, or a PostgreSQL schema) and one data directory (the SQLite file and the files' contents).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import type { Job } from '../../src/store/types.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { deploymentKeys, startGateway, type TestGateway } from '../helpers/gateway.js';
import { dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { sdk, target, type Config } from './support.js';

export interface StoppingNodes {
  fake: FakeUpstream;
  /** The node that serves the API and runs no jobs; it stays up for every test. */
  front: TestGateway;
  /** The front node's client, as the admin key, under `config`. */
  client: OpenAI;
  /** The provider config of the client's calls: the fake. */
  config: Config;
  /** Starts another node of the deployment, with `env` over the settings every node shares. */
  start(env?: Record<string, string>): Promise<TestGateway>;
}

/**
 * Starts the fake and the front node before the tests of the describe block it is called in, and closes
 * them, drops the schema and removes the data directory after; its fields are set once the tests run.
 * `label` names the schema, the data directory and the fake.
 */
export function stoppingNodes(store: 'sqlite' | 'postgres', label: string): StoppingNodes {
  const shared = { ...deploymentKeys(label), GATEWAY_BATCH_POLL_MS: '20' };
  const postgres = store === 'postgres' ? { url: postgresUrl(), schema: freshSchemaName(label) } : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), `gateway-${label}-`));
  // The fake, the front node and its client are set in beforeAll, before any test reads them.
  const nodes = {
    start: (env: Record<string, string> = {}) =>
      startGateway({ postgres, env: { ...shared, GATEWAY_DATA_DIR: dataDir, ...env } }),
  } as Pick<StoppingNodes, 'start'> as StoppingNodes;
  beforeAll(async () => {
    nodes.fake = await startFakeOpenAI({ name: `${label}-${store}` });
    nodes.config = target(nodes.fake);
    nodes.front = await nodes.start({ GATEWAY_BATCH_WORKER: 'false' });
    nodes.client = sdk(nodes.front.url, nodes.front.adminKey, nodes.config);
  });
  afterAll(async () => {
    await nodes.front?.close();
    await nodes.fake?.close();
    if (postgres) await dropSchema(postgres.schema);
    rmSync(dataDir, { recursive: true, force: true });
  });
  return nodes;
}

/** The job of `kind` (a batch phase's) that works on the batch `batchId`. */
export async function batchJob(gateway: TestGateway, kind: string, batchId: string): Promise<Job> {
  const { data } = await gateway.server.deps.store.jobs.list({ kind, limit: 1_000 });
  const job = data.find((j) => (j.payload as { batch_id: string }).batch_id === batchId);
  if (!job) throw new Error(`no ${kind} job for ${batchId}`);
  return job;
}
