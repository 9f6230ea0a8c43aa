/**
 * A stop whose cut comes late: the event loop held past the time planned for it (a busy process, or one
 * starved of CPU). What follows the cut (giving the jobs cut back, the final writes, the closes) is counted
 * from the cut as it came, each with its least time, rather than from the plan's, which a held loop may
 * have spent already. On PostgreSQL, where giving a job back takes a round trip.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createGatewayServer } from '../../src/gateway-server.js';
import { loadSettings } from '../../src/settings.js';
import { openStore } from '../../src/store/index.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { CHAT_BODY, sleep, uniqueId } from './support.js';

let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'late-cut' });
});
afterAll(async () => {
  await fake?.close();
});

describeWithPostgres('a stop whose cut comes late, the event loop held past it', () => {
  const schema = freshSchemaName('late_cut');
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-late-cut-'));
  const masterKey = randomBytes(32).toString('hex');
  afterAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await dropSchema(schema);
  });

  it('gives back the job it cut, in time, and writes the records, within 2 s of the cut', async () => {
    const adminKey = `gw-late-${randomBytes(12).toString('hex')}`;
    const env: NodeJS.ProcessEnv = {
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_KEY: adminKey,
      GATEWAY_MASTER_KEY: masterKey,
      DATABASE_URL: postgresUrl(),
      GATEWAY_SHUTDOWN_GRACE_MS: '2000',
      GATEWAY_BATCH_POLL_MS: '50',
      // Only the stop's final writes can have written the record.
      GATEWAY_LOG_FLUSH_INTERVAL_MS: '600000',
      GATEWAY_LOG_BATCH_SIZE: '1000',
    };
    const lines: string[] = [];
    const server = await createGatewayServer(loadSettings(env), {
      env,
      logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
      pgSchema: schema,
    });
    const url = `${await server.listen()}/v1`;
    const headers = {
      'x-gateway-api-key': adminKey,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': fake.url,
      authorization: 'Bearer sk-late-cut',
      'content-type': 'application/json',
    };
    const traceId = uniqueId('late-cut');
    const answered = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { ...headers, 'x-gateway-trace-id': traceId },
      body: JSON.stringify(CHAT_BODY),
    });
    expect(answered.status).toBe(200);
    await answered.text();
    // A background response whose provider never answers: running when the stop cuts it.
    const created = await fetch(`${url}/responses`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'fake-hang', input: 'Hang', background: true }),
    });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    const hanging = () =>
      fake.requests.some((r) => (r.body as { model?: string } | undefined)?.model === 'fake-hang');
    for (let i = 0; i < 200 && !hanging(); i++) await sleep(25);
    expect(hanging()).toBe(true);

    const started = Date.now();
    const closing = server.close();
    // The loop is held from before the cut (planned at 1.6 s) to past the end of what the plan left for
    // giving back and the final writes (2.6 s).
    setTimeout(() => {
      const until = Date.now() + 1400;
      while (Date.now() < until);
    }, 1400);
    await closing;
    const took = Date.now() - started;
    // The cut came at 2.8 s; what follows it takes 2 s at most (docs/settings.md, "Stopping").
    expect(took).toBeLessThan(2800 + 2000);
    const log = lines.join('');
    expect(log).not.toContain('the work cut was not given back in time');
    expect(log).not.toContain('not written');

    const store = await openStore({
      dataDir,
      masterKey: Buffer.from(masterKey, 'hex'),
      databaseUrl: postgresUrl(),
      pgSchema: schema,
    });
    try {
      const [job] = (await store.jobs.list({ kind: 'response.background' })).data.filter(
        (j) => (j.payload as { response_id?: string }).response_id === id,
      );
      expect(job).toMatchObject({ status: 'queued', attempts: 0 });
      const page = await store.listLogs({
        workspace_id: server.bootstrap.workspace.id,
        trace_id: traceId,
        limit: 10,
      });
      expect(page.data.filter((r) => r.endpoint === 'chat' && r.status === 200)).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
