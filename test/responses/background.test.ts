/* eslint-disable @typescript-eslint/no-explicit-any -- tests read free-form wire JSON */
// Background responses: `background: true` answers `queued` at once and a job on the store's queue runs the
// call (the stored response goes queued → in_progress → its end, logged and priced as a foreground call);
// streamed, its events are kept in the store, so `retrieve(id, { stream: true, starting_after })` replays
// them and follows the live ones; `cancel` stops the upstream call; a job whose node died is run again once
// its lease has run out, or the response is failed; and a job is run by one node only, with two gateways on
// one store — SQLite and PostgreSQL. The openai SDK against the gateway; the fake OpenAI answers natively.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Job } from '../../src/store/types.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type StartGatewayOptions, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { logsOf, traceHeaders } from '../routing/support.js';
import { gatewayOpenAI } from '../helpers/openai-client.js';

let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'bg' });
});

afterAll(async () => {
  await upstream?.close();
});

const target = () => ({ provider: 'openai', api_key: 'sk-bg', custom_host: upstream.url });

function sdk(gateway: TestGateway, headers: Record<string, string> = {}): OpenAI {
  return gatewayOpenAI(gateway, target(), { ...headers });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds; throws past `timeoutMs`. */
async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(5);
  }
}

/** Retrieves the response until `done` holds of it; every status seen, in order, without repeats. */
async function pollUntil(
  client: OpenAI,
  id: string,
  done: (response: any) => boolean,
  timeoutMs = 10_000,
): Promise<{ response: any; statuses: string[] }> {
  const statuses: string[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response: any = await client.responses.retrieve(id);
    if (statuses.at(-1) !== response.status) statuses.push(response.status);
    if (done(response)) return { response, statuses };
    if (Date.now() > deadline) throw new Error(`response ${id} still ${response.status}`);
    await sleep(20);
  }
}

const ended = (response: any) => !['queued', 'in_progress'].includes(response.status);

async function collect(stream: AsyncIterable<any>, stopAfter = Infinity): Promise<any[]> {
  const events: any[] = [];
  for await (const event of stream) {
    events.push(event);
    if (events.length >= stopAfter) break;
  }
  for (const event of events) expectOpenAPIValid('ResponseStreamEvent', event);
  return events;
}

function withUpstreamRequests(path = '/v1/responses') {
  return upstream.requests.filter((request) => request.path === path);
}

describe('a background response under a rate-limit policy', () => {
  let gateway: TestGateway;
  // The policies' clock stands still until the test moves it: the refusal is certain, then its end.
  let now = Date.now();
  beforeAll(async () => {
    gateway = await startGateway({ rateLimitClock: () => now });
  });
  afterAll(async () => {
    await gateway?.close();
  });
  beforeEach(() => upstream.reset());

  it("waits queued for the policy's window when refused at run time, then runs", async () => {
    const policy = await fetch(`${gateway.url}/policies/rate-limits`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        conditions: [{ key: 'metadata.case', value: 'bg-limits' }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 60,
      }),
    });
    expect(policy.status, await policy.clone().text()).toBe(200);
    const { traceId, headers } = traceHeaders();
    const client = sdk(gateway, { ...headers, 'x-gateway-metadata': JSON.stringify({ case: 'bg-limits' }) });
    // The minute's 60 requests, taken in the foreground: the next is free a second later.
    for (let i = 0; i < 60; i++) {
      await client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: `${i}` }],
      });
    }
    const { stats } = gateway.server.deps.routing.rateLimits;
    const refusedBefore = stats.refused;
    const created: any = await client.responses.create({
      model: 'gpt-4o',
      input: 'Limited',
      background: true,
    });
    await until(() => stats.refused > refusedBefore);
    // The refusal is counted as the run meets it, before the run's transaction stores the response queued
    // again: until then a retrieve still finds it in_progress.
    const { statuses: waiting } = await pollUntil(client, created.id, (r) => r.status === 'queued');
    expect(waiting.at(-1)).toBe('queued');
    now += 1_000;

    const { response } = await pollUntil(client, created.id, ended);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('[bg] Limited');
    // Run once the window had room; the provider saw it once. The refusals it waited out (one, or more
    // if it came back before the clock moved) are no end of its call and leave no record: the response
    // leaves the record of the run that answered it, as a batch line does.
    const records = (await logsOf(gateway, traceId, 61)).filter((r) => r.path === '/v1/responses');
    // Written after the answer: a refusal's record, were there one, came long before.
    await sleep(200);
    const again = (await logsOf(gateway, traceId, 61)).filter((r) => r.path === '/v1/responses');
    expect(again).toHaveLength(records.length);
    expect(again.map((r) => r.status)).toEqual([200]);
    expect(withUpstreamRequests()).toHaveLength(1);
    // Waited out on a job of its own, which counts no run of the first as cut short.
    const jobs = await gateway.server.deps.store.jobs.list({ kind: 'response.background' });
    const mine = jobs.data.filter((job) => (job.payload as any).response_id === created.id);
    expect(mine.length).toBeGreaterThanOrEqual(2);
    expect(mine.at(-1)!.payload).toMatchObject({ earlier_runs: 0 });
  });

  it('leaves no log record when cancelled while it waits out a refusal', async () => {
    const policy = await fetch(`${gateway.url}/policies/rate-limits`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        conditions: [{ key: 'metadata.case', value: 'bg-limits-cancel' }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 60,
      }),
    });
    expect(policy.status, await policy.clone().text()).toBe(200);
    const { traceId, headers } = traceHeaders();
    const client = sdk(gateway, {
      ...headers,
      'x-gateway-metadata': JSON.stringify({ case: 'bg-limits-cancel' }),
    });
    for (let i = 0; i < 60; i++) {
      await client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: `${i}` }],
      });
    }
    const { stats } = gateway.server.deps.routing.rateLimits;
    const refusedBefore = stats.refused;
    const created: any = await client.responses.create({
      model: 'gpt-4o',
      input: 'Limited',
      background: true,
    });
    await until(() => stats.refused > refusedBefore);
    await pollUntil(client, created.id, (r) => r.status === 'queued');
    expect((await client.responses.cancel(created.id)).status).toBe('cancelled');
    // Past the refusal's Retry-After (a second), with room in the window: the job comes back and finds the
    // response cancelled.
    now += 1_000;
    const { store } = gateway.server.deps;
    const jobsOf = async () =>
      (await store.jobs.list({ kind: 'response.background' })).data.filter(
        (job) => (job.payload as any).response_id === created.id,
      );
    const deadline = Date.now() + 10_000;
    while ((await jobsOf()).some((job) => job.status !== 'completed') && Date.now() < deadline)
      await sleep(50);
    expect((await jobsOf()).map((job) => job.status)).toEqual(['completed', 'completed']);
    expect((await client.responses.retrieve(created.id)).status).toBe('cancelled');
    expect(withUpstreamRequests()).toHaveLength(0);
    const records = await logsOf(gateway, traceId, 60);
    expect(records).toHaveLength(60);
    expect(records.filter((r) => r.path === '/v1/responses')).toEqual([]);
  });
});

describe('a background response', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });
  beforeEach(() => upstream.reset());

  it('answers queued at once, runs in a job, and is stored as the foreground path stores it', async () => {
    const { traceId, headers } = traceHeaders();
    const client = sdk(gateway, headers);
    upstream.enqueue({ delayMs: 1500 });
    const started = Date.now();
    const created: any = await client.responses.create({ model: 'gpt-4o', input: 'Later', background: true });
    expect(Date.now() - started).toBeLessThan(1000);
    expectOpenAPIValid('Response', created);
    expect(created).toMatchObject({ status: 'queued', background: true, output: [] });
    expect(created.id).toMatch(/^resp_[0-9a-f]{48}$/);

    const { response, statuses } = await pollUntil(client, created.id, ended);
    expect(statuses.filter((s) => s !== 'queued')).toEqual(['in_progress', 'completed']);
    expectOpenAPIValid('Response', response);
    expect(response).toMatchObject({ id: created.id, status: 'completed', background: true });
    expect(response.output_text).toBe('[bg] Later');
    expect(response.usage).toMatchObject({ input_tokens: expect.any(Number) });
    // The provider ran it in the foreground, as it runs every gateway call.
    const sent = withUpstreamRequests();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ store: false });
    expect(sent[0]!.body).not.toHaveProperty('background');
    // Recorded as a foreground call is: under /v1/responses, with its tokens and cost, in the caller's trace.
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toMatchObject({ path: '/v1/responses', endpoint: 'responses', status: 200 });
    expect(record!.cost).toBeGreaterThan(0);
    const items = await client.responses.inputItems.list(created.id);
    expect(items.data).toHaveLength(1);
  });

  it('is refused with store: false, naming store', async () => {
    const client = sdk(gateway);
    const error: any = await client.responses
      .create({ model: 'gpt-4o', input: 'x', background: true, store: false })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: 'store', type: 'invalid_request_error' });
    expect(upstream.requests).toHaveLength(0);
  });

  it("runs the config's guardrails: a denied one is stored failed, the provider never called", async () => {
    const config = {
      ...target(),
      input_guardrails: [
        { id: 'no-secrets', deny: true, 'default.contains': { operator: 'none', words: ['password'] } },
      ],
    };
    const client = sdk(gateway, { 'x-gateway-config': JSON.stringify(config) });
    const created = await client.responses.create({
      model: 'gpt-4o',
      input: 'my password is x',
      background: true,
    });
    expect(created.status).toBe('queued');
    const { response } = await pollUntil(client, created.id, ended);
    expect(response.status).toBe('failed');
    expect(response.error).toMatchObject({ code: 'server_error' });
    expectOpenAPIValid('Response', response);
    expect(upstream.requests).toHaveLength(0);
  });

  it('is refused at once, not queued, under a config that does not resolve', async () => {
    const client = sdk(gateway, { 'x-gateway-config': JSON.stringify({ provider: 'no-such-provider' }) });
    const error: any = await client.responses
      .create({ model: 'gpt-4o', input: 'x', background: true })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(400);
    const queued = await gateway.server.deps.store.jobs.list({
      kind: 'response.background',
      status: 'queued',
    });
    expect(queued.data).toEqual([]);
  });

  it('streams its events as they come, and replays them after starting_after', async () => {
    const client = sdk(gateway);
    upstream.enqueue({ chunks: 6, chunkDelayMs: 20, text: 'one two three four five six' });
    const events = await collect(
      await client.responses.create({ model: 'gpt-4o', input: 'Tell', background: true, stream: true }),
    );
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]).toMatchObject({ type: 'response.created', response: { status: 'queued' } });
    expect(events[1]).toMatchObject({ type: 'response.queued', response: { status: 'queued' } });
    expect(events[2]).toMatchObject({ type: 'response.in_progress' });
    expect(events.filter((e) => e.type === 'response.created')).toHaveLength(1);
    const last = events.at(-1);
    expect(last.type).toBe('response.completed');
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(text).toBe(last.response.output_text ?? 'one two three four five six');
    const id = events[0].response.id;
    expect((await client.responses.retrieve(id)).output_text).toBe(text);

    const replay = await collect(await client.responses.retrieve(id, { stream: true, starting_after: 3 }));
    expect(replay).toEqual(events.slice(4));
    const whole = await collect(await client.responses.retrieve(id, { stream: true }));
    expect(whole).toEqual(events);
    // A cursor at the terminal event: the stream ends at once, empty.
    const started = Date.now();
    expect(
      await collect(
        await client.responses.retrieve(id, { stream: true, starting_after: last.sequence_number }),
      ),
    ).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('keeps its events until they are pruned once it has ended, then only the response', async () => {
    const client = sdk(gateway);
    const events = await collect(
      await client.responses.create({ model: 'gpt-4o', input: 'Brief', background: true, stream: true }),
    );
    const id = events[0].response.id;
    const { store } = gateway.server.deps;
    // A response still running keeps them whatever the time; an ended one loses them after the retention.
    expect(await store.pruneResponseRuns(Date.now() - 60_000)).toBe(0);
    expect(await store.pruneResponseRuns(Date.now() + 1)).toBeGreaterThanOrEqual(events.length);
    const error: any = await client.responses.retrieve(id, { stream: true }).catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: 'stream' });
    expect((await client.responses.retrieve(id)).output_text).toBe(
      events.at(-1).response.output[0].content[0].text,
    );
  });

  it('runs on when its client leaves at the first event', async () => {
    upstream.enqueue({ chunks: 4, chunkDelayMs: 30 });
    const abort = new AbortController();
    const answer = await fetch(`${gateway.url}/responses`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-config': JSON.stringify(target()),
      },
      body: JSON.stringify({ model: 'gpt-4o', input: 'Gone', background: true, stream: true }),
      signal: abort.signal,
    });
    const reader = answer.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    const id = /"id":"(resp_[0-9a-f]{48})"/.exec(first)![1]!;
    const { response } = await pollUntil(sdk(gateway), id, ended);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('[bg] Gone');
  });

  it('is followed live by a client that comes back after leaving', async () => {
    const client = sdk(gateway);
    upstream.enqueue({ chunks: 12, chunkDelayMs: 60 });
    const first = await collect(
      await client.responses.create({
        model: 'gpt-4o',
        input: 'Stream slowly',
        background: true,
        stream: true,
      }),
      4,
    );
    const id = first[0].response.id;
    const cursor = first.at(-1).sequence_number;
    // The client left; the response runs on.
    expect((await client.responses.retrieve(id)).status).toBe('in_progress');
    const rest = await collect(await client.responses.retrieve(id, { stream: true, starting_after: cursor }));
    expect(rest[0].sequence_number).toBe(cursor + 1);
    expect(rest.map((e) => e.sequence_number)).toEqual(rest.map((_, i) => cursor + 1 + i));
    const done = rest.at(-1);
    expect(done.type).toBe('response.completed');
    const deltas = [...first, ...rest].filter((e) => e.type === 'response.output_text.delta');
    expect(deltas.map((e) => e.delta).join('')).toBe(done.response.output[0].content[0].text);
    expect(withUpstreamRequests()).toHaveLength(1);
  });

  it('is cancelled while it runs: the upstream call stops, and a second cancel answers the same', async () => {
    const { traceId, headers } = traceHeaders();
    const client = sdk(gateway, headers);
    upstream.enqueue({ hang: true });
    const created = await client.responses.create({ model: 'gpt-4o', input: 'Forever', background: true });
    await pollUntil(client, created.id, (r) => r.status === 'in_progress');
    await pollUntil(client, created.id, () => withUpstreamRequests().length === 1);
    const cancelled: any = await client.responses.cancel(created.id);
    expectOpenAPIValid('Response', cancelled);
    expect(cancelled).toMatchObject({ id: created.id, status: 'cancelled' });
    // The call ended (it is recorded once it has), well before any timeout of the hanging upstream.
    const [record] = await logsOf(gateway, traceId, 1);
    expect(record).toBeDefined();
    expect(record!.status).not.toBe(200);
    const again: any = await client.responses.cancel(created.id);
    expect(again).toEqual(cancelled);
    await sleep(100);
    expect((await client.responses.retrieve(created.id)).status).toBe('cancelled');
  });

  it('is cancelled while streamed: the stream ends after the events before the cancel', async () => {
    const client = sdk(gateway);
    upstream.enqueue({ chunks: 50, chunkDelayMs: 40 });
    const stream = await client.responses.create({
      model: 'gpt-4o',
      input: 'Long',
      background: true,
      stream: true,
    });
    const events: any[] = [];
    let cancelled: any;
    for await (const event of stream) {
      events.push(event);
      if (events.length === 5) cancelled = await client.responses.cancel(events[0].response.id);
    }
    expect(cancelled.status).toBe('cancelled');
    expect(events.length).toBeLessThan(50);
    // No terminal event: the response was neither completed nor failed.
    expect(events.filter((e) => /^response\.(completed|incomplete|failed)$/.test(e.type))).toEqual([]);
    expect((await client.responses.retrieve(events[0].response.id)).status).toBe('cancelled');
  });

  it('answers a cancel of a finished one with the response as it ended; a foreground one is a 400', async () => {
    const client = sdk(gateway);
    const created = await client.responses.create({ model: 'gpt-4o', input: 'Quick', background: true });
    const { response } = await pollUntil(client, created.id, ended);
    expect(response.status).toBe('completed');
    const answered = await client.responses.cancel(created.id);
    // The object as stored (the SDK adds output_text to what create and retrieve answer only).
    const { output_text: _text, ...stored } = response;
    expect(answered).toEqual(stored);

    const foreground = await client.responses.create({ model: 'gpt-4o', input: 'Now' });
    const error: any = await client.responses.cancel(foreground.id).catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: 'response_id', type: 'invalid_request_error' });
    const stream: any = await client.responses.retrieve(foreground.id, { stream: true }).catch((e) => e);
    expect(stream.status).toBe(400);
    expect(stream.error).toMatchObject({ param: 'stream' });
    const notStreamed: any = await client.responses.retrieve(created.id, { stream: true }).catch((e) => e);
    expect(notStreamed.status).toBe(400);
    expect(notStreamed.error).toMatchObject({ param: 'stream' });
    const badCursor = await fetch(`${gateway.url}/responses/${created.id}?stream=true&starting_after=x`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect(badCursor.status).toBe(400);
    expect(((await badCursor.json()) as any).error.param).toBe('starting_after');
    expect((await client.responses.cancel('resp_nope').catch((e) => e)).status).toBe(404);
  });
});

/** Two gateways on one store (a SQLite file, or a PostgreSQL schema), the first without a worker. */
function sharedStore(store: 'sqlite' | 'postgres') {
  const shared: Record<string, string> = {
    GATEWAY_ADMIN_KEY: `gw-test-${randomBytes(16).toString('hex')}`,
    GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
  };
  let dataDir: string | undefined;
  let schema: string | undefined;
  const options = (env: Record<string, string>): StartGatewayOptions => {
    if (store === 'postgres') {
      schema ??= freshSchemaName('bg_responses');
      return { postgres: { url: postgresUrl(), schema }, env: { ...shared, ...env } };
    }
    dataDir ??= mkdtempSync(join(tmpdir(), 'gateway-bg-'));
    return { env: { ...shared, GATEWAY_DATA_DIR: dataDir, ...env } };
  };
  return {
    start: async (env: Record<string, string>): Promise<TestGateway> => ({
      ...(await startGateway(options(env))),
      adminKey: shared.GATEWAY_ADMIN_KEY!,
    }),
    async cleanup() {
      if (schema) await dropSchema(schema);
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function nodesSuite(store: 'sqlite' | 'postgres') {
  let nodes: ReturnType<typeof sharedStore>;
  let front: TestGateway;
  /** Nodes that run jobs, started by a test once its scene is set. Their lease is one the host's stalls
   * cannot outlast: the nodes share this test's process, and on a busy machine its event loop stalled for
   * 300 ms and more, long enough for a short lease to run out while its node still ran the job, and for a
   * node to claim it again and ask the provider once more (as a lease means). A test that needs a lease
   * run out expires a dead node's through the store (`expireLease`). */
  const startWorker = () =>
    nodes.start({ GATEWAY_BATCH_LEASE_MS: String(LEASE_MS), GATEWAY_BATCH_POLL_MS: '50' });
  beforeAll(async () => {
    nodes = sharedStore(store);
    // The front node takes requests and runs no job.
    front = await nodes.start({ GATEWAY_BATCH_WORKER: 'false' });
  });
  afterAll(async () => {
    await front?.server.close();
    await nodes?.cleanup();
  });
  beforeEach(() => upstream.reset());

  it('runs each job on one of two nodes only', async () => {
    const client = sdk(front);
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        client.responses.create({ model: 'gpt-4o', input: `job ${i}`, background: true }),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(created.map(() => 'queued'));
    const workers = await Promise.all([startWorker(), startWorker()]);
    try {
      const done = await Promise.all(created.map((r) => pollUntil(client, r.id, ended)));
      expect(done.map((d) => d.response.status)).toEqual(created.map(() => 'completed'));
      expect(done.map((d) => d.response.output_text)).toEqual(created.map((_, i) => `[bg] job ${i}`));
      // Each response was asked of the provider once: no job ran on both nodes.
      const inputs = withUpstreamRequests().map((r) => (r.body as any).input[0].content[0].text);
      expect(inputs.sort()).toEqual(created.map((_, i) => `job ${i}`).sort());
    } finally {
      for (const worker of workers) await worker.server.close();
    }
  });

  it('cannot be continued while it waits in the queue', async () => {
    const client = sdk(front);
    const created = await client.responses.create({ model: 'gpt-4o', input: 'First', background: true });
    const error: any = await client.responses
      .create({ model: 'gpt-4o', input: 'Next', previous_response_id: created.id })
      .catch((e) => e);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: 'previous_response_id', type: 'invalid_request_error' });
    expect(error.error.message).toContain('queued');
    const worker = await startWorker();
    try {
      await pollUntil(client, created.id, ended);
      const next = await client.responses.create({
        model: 'gpt-4o',
        input: 'Next',
        previous_response_id: created.id,
      });
      expect(next.output_text).toBe('[bg] Next');
    } finally {
      await worker.server.close();
    }
  });

  it('streams to its terminal event on another node, however late the running node stores its events', async () => {
    const client = sdk(front);
    upstream.enqueue({ chunks: 12, chunkDelayMs: 30 });
    const worker = await startWorker();
    // Each write of the running node's events takes 300 ms: its stream is stored seconds after its
    // call ended.
    const { store } = worker.server.deps;
    const append = store.appendResponseEvents.bind(store);
    store.appendResponseEvents = async (id, events) => {
      await sleep(300);
      await append(id, events);
    };
    try {
      const events = await collect(
        await client.responses.create({ model: 'gpt-4o', input: 'Late', background: true, stream: true }),
      );
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      const last = events.at(-1);
      expect(last.type).toBe('response.completed');
      expect((await client.responses.retrieve(last.response.id)).status).toBe('completed');
    } finally {
      await worker.server.close();
    }
  });

  it('is cancelled from a node other than the one running it: the call stops there', async () => {
    const { traceId, headers } = traceHeaders();
    const client = sdk(front, headers);
    upstream.enqueue({ hang: true });
    const worker = await startWorker();
    try {
      const created = await client.responses.create({ model: 'gpt-4o', input: 'Hang', background: true });
      await pollUntil(
        client,
        created.id,
        (r) => r.status === 'in_progress' && withUpstreamRequests().length === 1,
      );
      expect((await client.responses.cancel(created.id)).status).toBe('cancelled');
      // The running node saw the cancel and ended the call: it is recorded (by that node, in the shared store).
      const [record] = await logsOf(front, traceId, 1);
      expect(record).toBeDefined();
      expect(record!.status).not.toBe(200);
      expect((await client.responses.retrieve(created.id)).status).toBe('cancelled');
    } finally {
      await worker.server.close();
    }
  });

  it('is given back to the queue by a node that stops, and run by the next', async () => {
    const client = sdk(front);
    upstream.enqueue({ hang: true });
    const stopping = await nodes.start({ GATEWAY_SHUTDOWN_GRACE_MS: '300', GATEWAY_BATCH_POLL_MS: '50' });
    const created = await client.responses.create({ model: 'gpt-4o', input: 'Again', background: true });
    await pollUntil(
      client,
      created.id,
      (r) => r.status === 'in_progress' && withUpstreamRequests().length === 1,
    );
    const started = Date.now();
    await stopping.server.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    // Not failed by the node that stopped: still in progress, its job queued again.
    expect((await client.responses.retrieve(created.id)).status).toBe('in_progress');
    const jobs = await front.server.deps.store.jobs.list({ kind: 'response.background', status: 'queued' });
    expect(jobs.data.map((job) => (job.payload as any).response_id)).toContain(created.id);
    const worker = await startWorker();
    try {
      const { response } = await pollUntil(client, created.id, ended);
      expect(response.status).toBe('completed');
      expect(response.output_text).toBe('[bg] Again');
      expect(withUpstreamRequests()).toHaveLength(2);
    } finally {
      await worker.server.close();
    }
  });

  it('is not failed by nodes that stop while running it, however many stop', async () => {
    const client = sdk(front);
    const created = await client.responses.create({ model: 'gpt-4o', input: 'Deploys', background: true });
    // More stops than the response has runs (BACKGROUND_RUNS): a deploy is not a run its node died in.
    for (let stop = 1; stop <= 3; stop++) {
      upstream.enqueue({ hang: true });
      const stopping = await nodes.start({ GATEWAY_SHUTDOWN_GRACE_MS: '100', GATEWAY_BATCH_POLL_MS: '50' });
      await pollUntil(
        client,
        created.id,
        (r) => r.status === 'in_progress' && withUpstreamRequests().length === stop,
      );
      await stopping.server.close();
      const [job] = (await front.server.deps.store.jobs.list({ kind: 'response.background' })).data.filter(
        (j) => (j.payload as any).response_id === created.id,
      );
      expect(job).toMatchObject({ status: 'queued', attempts: 0 });
    }
    const worker = await startWorker();
    try {
      const { response } = await pollUntil(client, created.id, ended);
      expect(response.status).toBe('completed');
      expect(response.output_text).toBe('[bg] Deploys');
      expect(withUpstreamRequests()).toHaveLength(4);
    } finally {
      await worker.server.close();
    }
  });

  it('ends its stream without the end a run stored after it was cancelled on another node', async () => {
    const client = sdk(front);
    const stream = await client.responses.create({
      model: 'gpt-4o',
      input: 'Late',
      background: true,
      stream: true,
    });
    const [job] = await claimAsDeadNode(front);
    const id = (job!.payload as any).response_id;
    expect((await client.responses.cancel(id)).status).toBe('cancelled');
    // The node running it had not yet heard of the cancel and stored the run's end.
    const completed = {
      type: 'response.completed',
      sequence_number: 2,
      response: { id, status: 'completed' },
    };
    await front.server.deps.store.appendResponseEvents(id, [
      { sequence_number: 2, event: JSON.stringify(completed) },
    ]);
    const events = await collect(stream);
    expect(events.map((e) => e.type)).toEqual(['response.created', 'response.queued']);
    const again = await collect(await client.responses.retrieve(id, { stream: true }));
    expect(again.map((e) => e.type)).toEqual(['response.created', 'response.queued']);
    // The dead node's job would be back in the queue once its lease ran out, and the next test's dead
    // node would claim it in place of its own.
    await front.server.deps.store.jobs.complete(job!.id, 'dead-node', null);
  });

  it('is run again once the lease of a node that died has run out', async () => {
    const client = sdk(front);
    const created = await client.responses.create({ model: 'gpt-4o', input: 'Survive', background: true });
    // A node claims the job, marks the response in progress, and dies.
    const [job] = await claimAsDeadNode(front);
    expect((job!.payload as any).response_id).toBe(created.id);
    await front.server.deps.store.updateResponse(job!.workspace_id!, created.id, {
      status: 'in_progress',
      body: { ...(created as any), status: 'in_progress' },
    });
    await expireLease(front, job!);
    const worker = await startWorker();
    try {
      const { response } = await pollUntil(client, created.id, ended);
      expect(response.status).toBe('completed');
      expect(response.output_text).toBe('[bg] Survive');
      expect(withUpstreamRequests()).toHaveLength(1);
    } finally {
      await worker.server.close();
    }
  });

  it('is failed, not left in progress, when every run was cut short', async () => {
    const client = sdk(front);
    const created = await client.responses.create({ model: 'gpt-4o', input: 'Doomed', background: true });
    // The first run's node died; so did the second's, once the first lease had run out.
    const [first] = await claimAsDeadNode(front);
    await expireLease(front, first!);
    const [second] = await claimAsDeadNode(front);
    expect(second).toMatchObject({ id: first!.id, attempts: 2 });
    await expireLease(front, second!);
    const worker = await startWorker();
    try {
      const { response } = await pollUntil(client, created.id, ended);
      expect(response.status).toBe('failed');
      expect(response.error).toMatchObject({ code: 'server_error' });
      expectOpenAPIValid('Response', response);
      expect(withUpstreamRequests()).toHaveLength(0);
    } finally {
      await worker.server.close();
    }
  });

  it('is failed with its stream ended when its node died part way through the stream', async () => {
    const client = sdk(front);
    const stream = await client.responses.create({
      model: 'gpt-4o',
      input: 'Half',
      background: true,
      stream: true,
    });
    const [job] = await claimAsDeadNode(front);
    const id = (job!.payload as any).response_id;
    // The dead node had stored the first event of its run: a client may have read it.
    await front.server.deps.store.appendResponseEvents(id, [
      {
        sequence_number: 2,
        event: JSON.stringify({ type: 'response.in_progress', sequence_number: 2, response: { id } }),
      },
    ]);
    await expireLease(front, job!);
    const worker = await startWorker();
    try {
      const events: any[] = [];
      for await (const event of stream) events.push(event);
      expect(events.map((e) => e.type)).toEqual([
        'response.created',
        'response.queued',
        'response.in_progress',
        'response.failed',
      ]);
      expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3]);
      expect((await client.responses.retrieve(id)).status).toBe('failed');
      expect(withUpstreamRequests()).toHaveLength(0);
    } finally {
      await worker.server.close();
    }
  });
}

/** The leases of the suite's nodes, live and dead: none runs out unless a test makes it. */
const LEASE_MS = 60_000;

/** Claims the next background job as a node that then dies (never renews nor ends it). Its lease runs
 * out when the test says so (`expireLease`), whatever the host's pace. */
async function claimAsDeadNode(gateway: TestGateway, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const claimed = await gateway.server.deps.store.jobs.claim({
      kinds: ['response.background'],
      owner: 'dead-node',
      leaseMs: LEASE_MS,
    });
    if (claimed.length > 0 || Date.now() > deadline) return claimed;
    await sleep(1);
  }
}

/** The dead node's lease on `job` runs out now: the job is claimable again. */
async function expireLease(gateway: TestGateway, job: Job): Promise<void> {
  expect(await gateway.server.deps.store.jobs.heartbeat(job.id, 'dead-node', 0)).toBeDefined();
}

describe('background responses on two nodes over SQLite', () => {
  nodesSuite('sqlite');
});

describeWithPostgres('background responses on two nodes over PostgreSQL', () => {
  nodesSuite('postgres');
});
