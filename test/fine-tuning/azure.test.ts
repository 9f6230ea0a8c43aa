/**
 * Fine-tuning jobs and 24h batches on Azure OpenAI, with the official `openai` SDK against the fake Azure:
 * OpenAI's paths under `/openai` with the API version, `api-key` auth, and Azure's batch endpoint and
 * input lines without the version (`/chat/completions`).
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFakeAzure, type FakeAzure } from '../fakes/azure/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAPIValid } from '../helpers/openapi.js';
import { chatLine, contentLines, finished, jsonl, SLOW_TEST_MS, waitFor } from '../batches/support.js';
import { gatewayHeaders, gatewayOpenAI } from '../helpers/openai-client.js';

describe('Azure OpenAI fine-tuning and batches', () => {
  let azure: FakeAzure;
  let gateway: TestGateway;
  let client: OpenAI;
  let config: Record<string, unknown>;

  beforeAll(async () => {
    azure = await startFakeAzure();
    gateway = await startGateway({ env: { GATEWAY_BATCH_POLL_MS: '20' } });
    config = {
      provider: 'azure-openai',
      api_key: azure.apiKey,
      custom_host: azure.url,
      api_version: '2024-10-21',
    };
    client = gatewayOpenAI(gateway, config);
  });
  afterAll(async () => {
    await gateway?.close();
    await azure?.close();
  });

  const resourceRequests = () => azure.requests.filter((r) => !r.path.startsWith('/openai/deployments/'));
  const trainingFile = async (name: string, via = client) =>
    via.files.create({
      file: await toFile(Buffer.from('{"messages":[]}\n'), name),
      purpose: 'fine-tune',
    });

  it('runs a fine-tuning job on Azure under the gateway’s ids', async () => {
    const training = await trainingFile('train.jsonl');
    const job = await client.fineTuning.jobs.create({
      model: 'gpt-35-turbo-0125',
      training_file: training.id,
    });
    // Azure's own shape (`pending`, n_epochs -1, no organization_id …) comes back as OpenAI's.
    expect(job).toMatchObject({
      object: 'fine_tuning.job',
      training_file: training.id,
      status: 'queued',
      hyperparameters: { n_epochs: 'auto' },
      fine_tuned_model: null,
      result_files: [],
    });
    expectOpenAPIValid('FineTuningJob', job);
    for (const request of resourceRequests()) {
      expect(request.query.get('api-version')).toBe('2024-10-21');
      expect(request.headers['api-key']).toBe(azure.apiKey);
    }
    expect(resourceRequests().map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /openai/files',
      'POST /openai/fine_tuning/jobs',
    ]);
    let current = job;
    while (current.status !== 'succeeded') current = await client.fineTuning.jobs.retrieve(job.id);
    expect(current.fine_tuned_model).toMatch(/^ft:gpt-35-turbo-0125:/);
    expectOpenAPIValid('FineTuningJob', current);
    const listed = await client.fineTuning.jobs.list();
    for (const seen of listed.data) expectOpenAPIValid('FineTuningJob', seen);
    const other = await client.fineTuning.jobs.create({
      model: 'gpt-35-turbo-0125',
      training_file: training.id,
    });
    const cancelled = await client.fineTuning.jobs.cancel(other.id);
    expect(cancelled).toMatchObject({ id: other.id, status: 'cancelled' });
    expectOpenAPIValid('FineTuningJob', cancelled);
    const checkpoints = await client.fineTuning.jobs.checkpoints.list(job.id);
    expect(checkpoints.data.every((c) => c.fine_tuning_job_id === job.id)).toBe(true);
  });

  it('lists a job’s events and checkpoints newest first, as OpenAI does, though Azure lists them oldest first', async () => {
    const training = await trainingFile('events.jsonl');
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    while ((await client.fineTuning.jobs.retrieve(job.id)).status !== 'succeeded');
    const providerJob = [...azure.resources.jobs.values()].at(-1)!;
    const oldestFirst = (await (
      await fetch(
        `${azure.url}/openai/fine_tuning/jobs/${String(providerJob.id)}/events?api-version=2024-10-21&limit=100`,
        { headers: { 'api-key': azure.apiKey } },
      )
    ).json()) as { data: Array<{ id: string; message: string }> };
    const newestFirst = oldestFirst.data.map((e) => e.message).reverse();
    expect(newestFirst[0]).toBe('The job has successfully completed');
    const events = await client.fineTuning.jobs.listEvents(job.id);
    expect(events.data.map((e) => e.message)).toEqual(newestFirst);
    // Paged as OpenAI pages it: the newest two, then the ones after them.
    const first = await client.fineTuning.jobs.listEvents(job.id, { limit: 2 });
    expect(first.data.map((e) => e.message)).toEqual(newestFirst.slice(0, 2));
    expect(first.has_more).toBe(true);
    const next = await client.fineTuning.jobs.listEvents(job.id, { limit: 2, after: first.data[1]!.id });
    expect(next.data.map((e) => e.message)).toEqual(newestFirst.slice(2, 4));
    const checkpoints = await client.fineTuning.jobs.checkpoints.list(job.id);
    expect(checkpoints.data.map((c) => c.step_number)).toEqual([3, 2, 1]);
    const page = await client.fineTuning.jobs.checkpoints.list(job.id, { limit: 1 });
    expect([page.data[0]!.step_number, page.has_more]).toEqual([3, true]);
  });

  /** A job of the fake Azure's, run to its end, with `events` metrics events more: its gateway id and Azure's. */
  const finishedJob = async (name: string, events: number) => {
    const training = await trainingFile(name);
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    while ((await client.fineTuning.jobs.retrieve(job.id)).status !== 'succeeded');
    const providerId = String([...azure.resources.jobs.values()].at(-1)!.id);
    azure.resources.addMetricsEvents(providerId, events);
    return { id: job.id, providerId };
  };
  const eventReads = (providerId: string) =>
    azure.requests.filter((r) => r.path === `/openai/fine_tuning/jobs/${providerId}/events`).length;

  it('stops reading a job’s events from Azure once the client is gone', async () => {
    const job = await finishedJob('gone.jsonl', 250);
    let release!: () => void;
    azure.resources.holdJobLists = new Promise((resolve) => (release = resolve));
    const before = eventReads(job.providerId);
    const caller = new AbortController();
    const answer = fetch(`${gateway.url}/fine_tuning/jobs/${job.id}/events?limit=5`, {
      headers: gatewayHeaders(gateway, config),
      signal: caller.signal,
    }).catch(() => undefined);
    while (eventReads(job.providerId) === before) await new Promise((resolve) => setTimeout(resolve, 10));
    caller.abort();
    await answer;
    await new Promise((resolve) => setTimeout(resolve, 100));
    azure.resources.holdJobLists = undefined;
    release();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Azure's list of 250 and more is 3 pages of 100: only the first was asked for.
    expect(eventReads(job.providerId) - before).toBe(1);
  });

  /** Two readers of a job's events at once, Azure holding its answers until both have asked the gateway;
   * the first goes away while held when `leaves`. Resolves with what the second read. */
  const twoReaders = async (job: { id: string; providerId: string }, leaves: boolean) => {
    let release!: () => void;
    azure.resources.holdJobLists = new Promise((resolve) => (release = resolve));
    const before = eventReads(job.providerId);
    const first = new AbortController();
    const url = `${gateway.url}/fine_tuning/jobs/${job.id}/events?limit=300`;
    const headers = gatewayHeaders(gateway, config);
    const firstAnswer = fetch(url, { headers, signal: first.signal }).catch(() => undefined);
    while (eventReads(job.providerId) === before) await new Promise((resolve) => setTimeout(resolve, 10));
    const second = fetch(url, { headers });
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (leaves) first.abort();
    azure.resources.holdJobLists = undefined;
    release();
    const [secondAnswer] = await Promise.all([second, firstAnswer]);
    const events = (await secondAnswer.json()) as { data: Array<{ message: string }> };
    return { reads: eventReads(job.providerId) - before, messages: events.data.map((e) => e.message) };
  };

  it('reads a job’s events from Azure once for two requests of them at once', async () => {
    const job = await finishedJob('together.jsonl', 250);
    const { reads, messages } = await twoReaders(job, false);
    // Azure's 3 pages of 100, asked once for both.
    expect(reads).toBe(3);
    expect(messages[0]).toBe('Step 250: training loss=0.5');
  });

  it('reads a job’s events on for a request that shares the reading of one that went away', async () => {
    const job = await finishedJob('one-left.jsonl', 250);
    const { reads, messages } = await twoReaders(job, true);
    expect(reads).toBe(3);
    expect(messages.length).toBeGreaterThan(250);
    expect(messages[0]).toBe('Step 250: training loss=0.5');
  });

  it('passes a job’s events on as they come when their times show Azure gave them newest first', async () => {
    const job = await finishedJob('newest-first.jsonl', 0);
    azure.resources.addMetricsEvents(job.providerId, 3, Math.floor(Date.now() / 1000) + 10);
    azure.resources.jobListsNewestFirst = true;
    try {
      const events = await client.fineTuning.jobs.listEvents(job.id, { limit: 4 });
      expect(events.data.map((e) => e.message)).toEqual([
        'Step 3: training loss=0.5',
        'Step 2: training loss=0.5',
        'Step 1: training loss=0.5',
        'The job has successfully completed',
      ]);
    } finally {
      azure.resources.jobListsNewestFirst = false;
    }
  });

  it('reads a finished job’s events from Azure once for all the pages a client reads of them', async () => {
    const job = await finishedJob('paged.jsonl', 250);
    const before = eventReads(job.providerId);
    const messages: string[] = [];
    for await (const event of client.fineTuning.jobs.listEvents(job.id, { limit: 20 })) {
      messages.push(event.message);
    }
    expect(messages.length).toBeGreaterThan(250);
    expect(messages[0]).toBe('Step 250: training loss=0.5');
    expect(messages.at(-1)).toMatch(/^Validating training file/);
    // Azure's 3 pages of 100, read once for the 13 pages of 20 rather than once for each.
    expect(eventReads(job.providerId) - before).toBe(3);
  });

  it('keeps a reading of a job’s events without writing it out as JSON to weigh it', async () => {
    const job = await finishedJob('weighed.jsonl', 250);
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      const events = await client.fineTuning.jobs.listEvents(job.id, { limit: 5 });
      expect(events.data[0]!.message).toBe('Step 250: training loss=0.5');
      // The fake's pages and the gateway's answer are objects; the reading's 250 and more items, an array.
      const written = stringify.mock.calls.filter(([value]) => Array.isArray(value) && value.length > 250);
      expect(written.length).toBe(0);
    } finally {
      stringify.mockRestore();
    }
  });

  it('reads a running job’s newest events on from those it kept, and the older pages from the same reading', async () => {
    const training = await trainingFile('running.jsonl');
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const providerId = String([...azure.resources.jobs.values()].at(-1)!.id);
    azure.resources.addMetricsEvents(providerId, 150);
    const before = eventReads(providerId);
    const first = await client.fineTuning.jobs.listEvents(job.id, { limit: 100 });
    const older = await client.fineTuning.jobs.listEvents(job.id, {
      limit: 100,
      after: first.data.at(-1)!.id,
    });
    expect([first.data.length, older.data.length, older.has_more]).toEqual([100, 51, false]);
    expect(eventReads(providerId) - before).toBe(2);
    azure.resources.addMetricsEvents(providerId, 1);
    const newest = await client.fineTuning.jobs.listEvents(job.id, { limit: 2 });
    expect(newest.data.map((e) => e.message)).toEqual([
      'Step 1: training loss=0.5',
      'Step 150: training loss=0.5',
    ]);
    // Read on from the newest event kept: one page of what came since, not the 152 events again.
    expect(eventReads(providerId) - before).toBe(3);
    azure.resources.addMetricsEvents(providerId, 2);
    const again = await client.fineTuning.jobs.listEvents(job.id, { limit: 200 });
    expect(again.data).toHaveLength(154);
    expect(again.data.slice(0, 3).map((e) => e.message)).toEqual([
      'Step 2: training loss=0.5',
      'Step 1: training loss=0.5',
      'Step 1: training loss=0.5',
    ]);
    expect(new Set(again.data.map((e) => e.id)).size).toBe(154);
    expect(eventReads(providerId) - before).toBe(4);
  });

  it('reads a job’s events afresh once it is seen finished, though they were read while it ran', async () => {
    const training = await trainingFile('ran.jsonl');
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const running = await client.fineTuning.jobs.listEvents(job.id, { limit: 2 });
    expect(running.data[0]!.message).not.toBe('The job has successfully completed');
    while ((await client.fineTuning.jobs.retrieve(job.id)).status !== 'succeeded');
    const finished = await client.fineTuning.jobs.listEvents(job.id, { limit: 2 });
    expect(finished.data[0]!.message).toBe('The job has successfully completed');
  });

  it(
    'says so, by a header and has_more, when a job’s events run past the 10,000 it reads of them',
    async () => {
      const job = await finishedJob('long.jsonl', 10_050);
      const { data: first, response } = await client.fineTuning.jobs
        .listEvents(job.id, { limit: 5 })
        .withResponse();
      expect(response.headers.get('x-gateway-list-truncated')).toBe('true');
      expect(first.has_more).toBe(true);
      // What was read is the list's oldest 10,000, the newest of them first.
      expect(first.data[0]!.message).toBe('Step 9995: training loss=0.5');
      // Its last page too tells of more: the newer ones not read.
      const rest = await client.fineTuning.jobs.listEvents(job.id, {
        limit: 9_995,
        after: first.data[4]!.id,
      });
      expect(rest.data.at(-1)!.message).toMatch(/^Validating training file/);
      expect(rest.has_more).toBe(true);
    },
    SLOW_TEST_MS,
  );

  it("finds the job a create made when Azure's answer to it is lost, by the seed the gateway chose", async () => {
    // The SDK as it comes: it tries a create again after a 5xx or a cut connection.
    const retrying = new OpenAI({
      baseURL: gateway.url,
      apiKey: 'unused',
      defaultHeaders: gatewayHeaders(gateway, config),
    });
    const training = await trainingFile('lost.jsonl');
    const before = azure.resources.jobs.size;
    azure.resources.loseJobAnswers = 1;
    const job = await retrying.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    expect(azure.resources.loseJobAnswers).toBe(0);
    expect(azure.resources.jobs.size).toBe(before + 1);
    const made = [...azure.resources.jobs.values()].at(-1)!;
    const sent = resourceRequests().findLast(
      (r) => r.method === 'POST' && r.path === '/openai/fine_tuning/jobs',
    );
    // Azure keeps no metadata: the job is named by a seed of the gateway's, which the job shows.
    expect((sent!.body as { seed?: unknown }).seed).toBe(made.seed);
    expect(job).toMatchObject({ training_file: training.id, seed: made.seed, status: 'queued' });
    const again = await client.fineTuning.jobs.retrieve(job.id);
    expect(again.seed).toBe(made.seed);
  });

  it('finds a lost create in a job list that runs oldest first, though its two oldest jobs share a second', async () => {
    const other = await startFakeAzure();
    try {
      const otherConfig = { ...config, api_key: other.apiKey, custom_host: other.url };
      const retrying = new OpenAI({
        baseURL: gateway.url,
        apiKey: 'unused',
        defaultHeaders: gatewayHeaders(gateway, otherConfig),
      });
      const via = gatewayOpenAI(gateway, otherConfig);
      const training = await trainingFile('oldest-first.jsonl', via);
      for (let i = 0; i < 2; i++) {
        await via.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
      }
      // Made in the same second an hour ago: equal times tell nothing of the list's order.
      const hourAgo = Math.floor(Date.now() / 1000) - 3600;
      for (const old of other.resources.jobs.values()) old.created_at = hourAgo;
      other.resources.jobsOldestFirst = true;
      other.resources.loseJobAnswers = 1;
      const job = await retrying.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
      expect(other.resources.jobs.size).toBe(3);
      const made = [...other.resources.jobs.values()].at(-1)!;
      expect(job).toMatchObject({ training_file: training.id, seed: made.seed });
    } finally {
      await other.close();
    }
  });

  it('sends no seed of its own under an API version whose create takes none (before 2024-05-01-preview)', async () => {
    const older = gatewayOpenAI(gateway, { ...config, api_version: '2023-12-01-preview' });
    const training = await trainingFile('older.jsonl', older);
    await older.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const sent = resourceRequests().findLast(
      (r) => r.method === 'POST' && r.path === '/openai/fine_tuning/jobs',
    );
    expect(sent!.query.get('api-version')).toBe('2023-12-01-preview');
    expect(sent!.body).not.toHaveProperty('seed');
  });

  it('sends its seed under 2024-05-01-preview, the first API version whose create takes one', async () => {
    const may = gatewayOpenAI(gateway, { ...config, api_version: '2024-05-01-preview' });
    const training = await trainingFile('may.jsonl', may);
    const job = await may.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const sent = resourceRequests().findLast(
      (r) => r.method === 'POST' && r.path === '/openai/fine_tuning/jobs',
    );
    expect(sent!.query.get('api-version')).toBe('2024-05-01-preview');
    expect((sent!.body as { seed?: unknown }).seed).toEqual(expect.any(Number));
    expect(job.seed).toBe((sent!.body as { seed: number }).seed);
  });

  it('finds and keeps the job a create made when Azure’s answer is lost after the client has gone', async () => {
    const training = await trainingFile('left.jsonl');
    let release!: () => void;
    azure.resources.holdJobCreates = new Promise((resolve) => (release = resolve));
    const creates = () =>
      azure.requests.filter((r) => r.method === 'POST' && r.path === '/openai/fine_tuning/jobs').length;
    const before = creates();
    const caller = new AbortController();
    const answer = fetch(`${gateway.url}/fine_tuning/jobs`, {
      method: 'POST',
      headers: { ...gatewayHeaders(gateway, config), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', training_file: training.id }),
      signal: caller.signal,
    }).catch(() => undefined);
    while (creates() === before) await new Promise((resolve) => setTimeout(resolve, 10));
    // The client gives up (the SDK's timeout) while Azure makes the job, whose answer is then cut.
    caller.abort();
    await answer;
    azure.resources.loseJobAnswers = 1;
    azure.resources.holdJobCreates = undefined;
    release();
    const made = async () => {
      for (let tries = 0; tries < 100; tries++) {
        const jobs = await client.fineTuning.jobs.list({ limit: 100 });
        const seed = [...azure.resources.jobs.values()].at(-1)!.seed;
        if (azure.resources.loseJobAnswers === 0 && jobs.data.some((j) => j.seed === seed)) return true;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return false;
    };
    expect(await made()).toBe(true);
  });

  it("leaves a client's own seed as it is, and a lost create with it fails rather than guess", async () => {
    const training = await trainingFile('seeded.jsonl');
    const job = await client.fineTuning.jobs.create({
      model: 'gpt-4o-mini',
      training_file: training.id,
      seed: 7,
    });
    expect(job.seed).toBe(7);
    const before = azure.resources.jobs.size;
    azure.resources.loseJobAnswers = 1;
    await expect(
      client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id, seed: 7 }),
    ).rejects.toMatchObject({ status: 502 });
    expect(azure.resources.jobs.size).toBe(before + 1);
  });

  it(
    'runs a 24h batch on Azure, its endpoint and lines named as Azure names them',
    async () => {
      const input = await client.files.create({
        file: await toFile(Buffer.from(jsonl([chatLine('x'), chatLine('y')])), 'in.jsonl'),
        purpose: 'batch',
      });
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      const done = await waitFor(client, batch.id, finished);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
      const sent = [...azure.resources.files.values()].find((f) => f.purpose === 'batch');
      const lines = sent!.content
        .toString()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { url: string; custom_id: string });
      expect(lines.map((l) => [l.custom_id, l.url])).toEqual([
        ['x', '/chat/completions'],
        ['y', '/chat/completions'],
      ]);
      expect([...azure.resources.batches.values()][0].endpoint).toBe('/chat/completions');
      const output = await contentLines(client, done.output_file_id);
      expect(output.map((l) => l.custom_id)).toEqual(['x', 'y']);
    },
    SLOW_TEST_MS,
  );

  it(
    'takes the batch a lost submission made from a batch list that runs oldest first, submitting no second',
    async () => {
      const other = await startFakeAzure();
      try {
        const via = gatewayOpenAI(gateway, { ...config, api_key: other.apiKey, custom_host: other.url });
        const input = await via.files.create({
          file: await toFile(Buffer.from(jsonl([chatLine('o')])), 'oldest-first.jsonl'),
          purpose: 'batch',
        });
        const create = () =>
          via.batches.create({
            input_file_id: input.id,
            endpoint: '/v1/chat/completions',
            completion_window: '24h',
          });
        for (let i = 0; i < 2; i++) await waitFor(via, (await create()).id, finished);
        // Made an hour ago, a second apart: the list's oldest batch is older than the one sought.
        const hourAgo = Math.floor(Date.now() / 1000) - 3600;
        [...other.resources.batches.values()].forEach((old, i) => (old.created_at = hourAgo + i));
        other.resources.batchesOldestFirst = true;
        other.resources.loseBatchAnswers = 1;
        const batch = await create();
        const done = await waitFor(via, batch.id, finished);
        expect(done.status, JSON.stringify(done.errors)).toBe('completed');
        expect(other.resources.loseBatchAnswers).toBe(0);
        expect(other.resources.batches.size).toBe(3);
      } finally {
        await other.close();
      }
    },
    SLOW_TEST_MS,
  );

  it(
    'names every line of a 24h batch as Azure names it, split into lines as the upload counted them',
    async () => {
      // A byte order mark, CRLF endings, and a lone \r inside a line (JSON whitespace, not a line break).
      const [x, y] = [JSON.stringify(chatLine('bom-x')), JSON.stringify(chatLine('bom-y'))];
      const text = `\uFEFF${x}\r\n${y.replace('"method"', '\r"method"')}\r\n`;
      const input = await client.files.create({
        file: await toFile(Buffer.from(text), 'windows.jsonl'),
        purpose: 'batch',
      });
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      const sent = async () => {
        for (;;) {
          const file = [...azure.resources.files.values()].find((f) => f.filename === 'windows.jsonl');
          if (file) return file;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const lines = (await sent()).content
        .toString()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { url: string; custom_id: string });
      expect(lines.map((l) => [l.custom_id, l.url])).toEqual([
        ['bom-x', '/chat/completions'],
        ['bom-y', '/chat/completions'],
      ]);
      const done = await waitFor(client, batch.id, finished);
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    },
    SLOW_TEST_MS,
  );
});
