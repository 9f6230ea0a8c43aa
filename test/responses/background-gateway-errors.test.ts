/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
/**
 * A background response whose run the gateway refuses or faults on before its call, with an error of its
 * own (a GatewayError: here its stored run cannot be decrypted), fails the same way each time: it is not
 * given back to run again, as a failure of the store's is, but failed at once, streamed or not, and its
 * job ends. The store here is a real SQLite file; its read of the response's run is made to fail.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { GatewayError } from '../../src/core/errors.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

let upstream: FakeUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'bg-gateway-errors' });
  // A lease far longer than the test: a run given back only when its lease runs out never comes.
  gateway = await startGateway({ env: { GATEWAY_BATCH_POLL_MS: '50', GATEWAY_BATCH_LEASE_MS: '120000' } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ended(id: string): Promise<any> {
  const admin = gatewayOpenAI(gateway, {});
  const deadline = Date.now() + 15_000;
  for (;;) {
    const response: any = await admin.responses.retrieve(id);
    if (!['queued', 'in_progress'].includes(response.status)) return response;
    if (Date.now() > deadline) throw new Error(`response ${id} is still ${response.status}`);
    await sleep(50);
  }
}

it.each([false, true])(
  'fails at once a response whose stored run cannot be decrypted (stream: %s)',
  async (stream) => {
    const client = gatewayOpenAI(gateway, {
      provider: 'openai',
      api_key: 'sk-bg',
      custom_host: upstream.url,
    });
    const { store } = gateway.server.deps;
    let reads = 0;
    const spy = vi.spyOn(store, 'responseRun').mockImplementation(async () => {
      reads++;
      throw new GatewayError('internal_error', 'Stored secret cannot be decrypted (wrong master key?)', {
        cause: new Error('Unsupported state or unable to authenticate data'),
      });
    });
    try {
      let id: string;
      const events: any[] = [];
      if (stream) {
        const created = await client.responses.create({
          model: 'gpt-4o',
          input: 'Hi',
          background: true,
          stream: true,
        });
        for await (const event of created) events.push(event);
        id = events[0].response.id;
      } else {
        id = (await client.responses.create({ model: 'gpt-4o', input: 'Hi', background: true })).id;
      }
      const done = await ended(id);
      expect(done.status).toBe('failed');
      expect(done.error).toMatchObject({ code: 'server_error' });
      expect(reads).toBe(1);
      expect(upstream.requests.length).toBe(0);
      if (stream) expect(events.at(-1).type).toBe('response.failed');
      const jobs = (await store.jobs.list({ kind: 'response.background' } as any)).data as any[];
      const job = jobs.find((one) => one.payload.response_id === id);
      expect(job?.status).toBe('completed');
    } finally {
      spy.mockRestore();
    }
  },
  30_000,
);
