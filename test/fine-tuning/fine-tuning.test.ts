/**
 * Fine-tuning jobs with the official `openai` SDK against a fake OpenAI that implements OpenAI's Files and
 * fine-tuning APIs in their wire format: the job runs on the provider the virtual key names, gateway files
 * are sent to the provider once per account, every read answers under the gateway's ids, the list is
 * private to the workspace, and failures come back in the OpenAI error shape.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const SECRET = 'sk-ft-secret-0123456789';

function sdk(gateway: TestGateway, headers: Record<string, string>, apiKey = gateway.adminKey): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': apiKey, ...headers },
  });
}

async function failure(promise: Promise<unknown>) {
  const error = (await promise.then(
    () => undefined,
    (err: unknown) => err,
  )) as InstanceType<typeof OpenAI.APIError> | undefined;
  if (!error) throw new Error('the request succeeded');
  return error;
}

const TRAINING = [
  {
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ],
  },
  {
    messages: [
      { role: 'user', content: 'bye' },
      { role: 'assistant', content: 'goodbye' },
    ],
  },
]
  .map((line) => JSON.stringify(line))
  .join('\n');

describe('fine-tuning jobs', () => {
  let fake: FakeUpstream;
  let gateway: TestGateway;
  let client: OpenAI;

  const uploads = () => fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/files');

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'ft' });
    gateway = await startGateway();
    const created = await fetch(`${gateway.url}/virtual-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({
        slug: 'ft-openai',
        name: 'ft',
        provider: 'openai',
        api_key: SECRET,
        custom_host: fake.url,
      }),
    });
    expect(created.status, await created.text()).toBe(200);
    client = sdk(gateway, { 'x-gateway-virtual-key': 'ft-openai' });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  /** The SDK as it comes: it tries a create or a cancel again after a 5xx or a cut connection. */
  function retryingClient(): OpenAI {
    return new OpenAI({
      baseURL: gateway.url,
      apiKey: 'unused',
      defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'ft-openai' },
    });
  }

  async function gatewayFile(name = 'train.jsonl') {
    return client.files.create({ file: await toFile(Buffer.from(TRAINING), name), purpose: 'fine-tune' });
  }

  it('creates a job from gateway files, sending each to the provider once, and follows it to success', async () => {
    const training = await gatewayFile();
    const validation = await gatewayFile('valid.jsonl');
    const job = await client.fineTuning.jobs.create({
      model: 'gpt-4o-mini-2024-07-18',
      training_file: training.id,
      validation_file: validation.id,
      suffix: 'custom',
      hyperparameters: { n_epochs: 3 },
    });
    expect(job).toMatchObject({
      object: 'fine_tuning.job',
      model: 'gpt-4o-mini-2024-07-18',
      status: 'validating_files',
      training_file: training.id,
      validation_file: validation.id,
      fine_tuned_model: null,
      error: null,
    });
    expect(job.id).toMatch(/^ftjob_/);

    // Both files went to the provider's Files API as multipart, purpose fine-tune, bytes intact.
    expect(uploads()).toHaveLength(2);
    expect(uploads()[0].headers.authorization).toBe(`Bearer ${SECRET}`);
    const sent = [...fake.resources.files.values()];
    expect(sent.map((f) => [f.purpose, f.filename, f.content.toString()])).toEqual([
      ['fine-tune', 'train.jsonl', TRAINING],
      ['fine-tune', 'valid.jsonl', TRAINING],
    ]);
    const providerJob = [...fake.resources.jobs.values()][0];
    expect(providerJob.training_file).toBe(sent[0].id);
    expect(providerJob.hyperparameters).toMatchObject({ n_epochs: 3 });

    // The same gateway file again: no second upload.
    const again = await client.fineTuning.jobs.create({
      model: 'gpt-4o-mini-2024-07-18',
      training_file: training.id,
    });
    expect(uploads()).toHaveLength(2);
    expect([...fake.resources.jobs.values()][1].training_file).toBe(sent[0].id);
    expect(again.training_file).toBe(training.id);

    const seen: string[] = [];
    let current = job;
    while (current.status !== 'succeeded') {
      current = await client.fineTuning.jobs.retrieve(job.id);
      seen.push(current.status);
      if (seen.length > 5) throw new Error(`stuck in ${current.status}`);
    }
    expect(seen).toEqual(['queued', 'running', 'succeeded']);
    expect(current.id).toBe(job.id);
    expect(current.fine_tuned_model).toMatch(/^ft:gpt-4o-mini-2024-07-18:org-fake:custom:/);
    expect(current.result_files).toHaveLength(1);
    expect(current.trained_tokens).toBe(5768);
    expect(current.training_file).toBe(training.id);

    const events = await client.fineTuning.jobs.listEvents(job.id);
    expect(events.data.map((e) => e.message)).toContain('The job has successfully completed');
    expect(events.data.every((e) => e.object === 'fine_tuning.job.event')).toBe(true);
    const firstTwo = await client.fineTuning.jobs.listEvents(job.id, { limit: 2 });
    expect(firstTwo.data).toHaveLength(2);
    expect(firstTwo.has_more).toBe(true);
    expect(fake.requests.at(-1)?.query).toMatchObject({ limit: '2' });

    const checkpoints = await client.fineTuning.jobs.checkpoints.list(job.id);
    expect(checkpoints.data.map((c) => c.step_number)).toEqual([3, 2, 1]);
    for (const checkpoint of checkpoints.data) {
      expect(checkpoint).toMatchObject({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: job.id });
      expect(checkpoint.metrics.train_loss).toBeGreaterThan(0);
    }
    expect(fake.requests.at(-1)?.query).toMatchObject({ limit: '10' });

    // Cancel the second; a finished job cannot be cancelled (the provider's 400, in the OpenAI shape).
    const cancelled = await client.fineTuning.jobs.cancel(again.id);
    expect(cancelled).toMatchObject({ id: again.id, status: 'cancelled' });
    const refused = await failure(client.fineTuning.jobs.cancel(job.id));
    expect(refused.status).toBe(400);
    expect(refused.message).toContain('already completed');
    expect(refused.headers?.get('x-gateway-error-source')).toBe('provider');
  });

  it('sends a gateway file again when the provider no longer has the copy it was given', async () => {
    const training = await gatewayFile('lost.jsonl');
    const first = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const lost = [...fake.resources.jobs.values()].at(-1)!.training_file as string;
    fake.resources.files.delete(lost); // deleted in the provider's dashboard, or by its retention
    const before = uploads().length;
    const second = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    expect(second).toMatchObject({ training_file: training.id, status: 'validating_files' });
    expect(second.id).not.toBe(first.id);
    expect(uploads()).toHaveLength(before + 1);
    const copy = [...fake.resources.jobs.values()].at(-1)!.training_file as string;
    expect(copy).not.toBe(lost);
    expect(fake.resources.files.get(copy)?.content.toString()).toBe(TRAINING);
    // Remembered: the next job sends nothing again.
    await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    expect(uploads()).toHaveLength(before + 1);
  });

  it('pauses and resumes a job at the provider under its provider id, as cancel does', async () => {
    const training = await gatewayFile();
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const providerId = [...fake.resources.jobs.keys()].at(-1)!;
    await client.fineTuning.jobs.retrieve(job.id); // queued
    const paused = await client.fineTuning.jobs.pause(job.id);
    expect(paused).toMatchObject({ id: job.id, status: 'paused', training_file: training.id });
    expect(fake.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: `/v1/fine_tuning/jobs/${providerId}/pause`,
    });
    expect((await client.fineTuning.jobs.list({ limit: 1 })).data[0]).toMatchObject({
      id: job.id,
      status: 'paused',
    });
    const again = await failure(client.fineTuning.jobs.pause(job.id));
    expect([again.status, again.headers?.get('x-gateway-error-source')]).toEqual([400, 'provider']);
    const resumed = await client.fineTuning.jobs.resume(job.id);
    expect(resumed).toMatchObject({ id: job.id, status: 'queued' });
    expect(fake.requests.at(-1)?.path).toBe(`/v1/fine_tuning/jobs/${providerId}/resume`);
    expect((await failure(client.fineTuning.jobs.pause('ftjob_nope'))).status).toBe(404);
  });

  it('passes a provider file id through without uploading anything', async () => {
    const before = uploads().length;
    const own = fake.resources.addFile('own.jsonl', 'fine-tune', Buffer.from(TRAINING));
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: own.id });
    expect(job.training_file).toBe(own.id);
    expect(uploads()).toHaveLength(before);
  });

  it("finds the job a create made when the provider's answer to it is lost, so the SDK's retry makes no second", async () => {
    const retrying = retryingClient();
    const training = await gatewayFile();
    const before = fake.resources.jobs.size;
    fake.resources.loseJobAnswers = 1;
    const job = await retrying.fineTuning.jobs.create({
      model: 'gpt-4o-mini',
      training_file: training.id,
      metadata: { team: 'search' },
    });
    expect(fake.resources.loseJobAnswers).toBe(0);
    expect(fake.resources.jobs.size).toBe(before + 1);
    const made = [...fake.resources.jobs.values()].at(-1)!;
    // The provider's job is named by the gateway's id; the client sees its own metadata alone.
    expect(made.metadata).toEqual({ team: 'search', gateway_job_id: job.id });
    expect(job).toMatchObject({ status: 'validating_files', training_file: training.id });
    expect(job.metadata).toEqual({ team: 'search' });
    const again = await client.fineTuning.jobs.retrieve(job.id);
    expect([again.status, again.metadata]).toEqual(['queued', { team: 'search' }]);
  });

  it("finds a lost create by a seed of its own when the client's metadata leaves no room for its id", async () => {
    const retrying = retryingClient();
    const training = await gatewayFile();
    const metadata = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    const before = fake.resources.jobs.size;
    fake.resources.loseJobAnswers = 1;
    const job = await retrying.fineTuning.jobs.create({
      model: 'gpt-4o-mini',
      training_file: training.id,
      metadata,
    });
    expect(fake.resources.jobs.size).toBe(before + 1);
    const made = [...fake.resources.jobs.values()].at(-1)!;
    expect(made.metadata).toEqual(metadata);
    expect(job).toMatchObject({ seed: made.seed, metadata, training_file: training.id });
  });

  it("answers a cancel whose answer from the provider is lost with the job it cancelled, so the SDK's retry is not refused", async () => {
    const retrying = retryingClient();
    const training = await gatewayFile();
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const cancels = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/cancel'));
    const before = cancels().length;
    fake.resources.loseCancelAnswers = 1;
    const cancelled = await retrying.fineTuning.jobs.cancel(job.id);
    expect(fake.resources.loseCancelAnswers).toBe(0);
    expect(cancelled).toMatchObject({ id: job.id, status: 'cancelled', training_file: training.id });
    // Asked once: the gateway read the job rather than fail, which the SDK would have tried again.
    expect(cancels()).toHaveLength(before + 1);
  });

  /** Sends `method path` to the gateway and goes away once the provider has been asked `providerPath`. */
  async function leaveWhileAsked(method: string, path: string, providerPath: string): Promise<void> {
    const asked = () => fake.requests.filter((r) => r.path === providerPath).length;
    const before = asked();
    const caller = new AbortController();
    const answer = fetch(`${gateway.url}${path}`, {
      method,
      headers: { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'ft-openai' },
      signal: caller.signal,
    }).catch(() => undefined);
    while (asked() === before) await new Promise((resolve) => setTimeout(resolve, 5));
    caller.abort();
    await answer;
  }

  it('stops reading or cancelling a job at the provider once the client is gone', async () => {
    const training = await gatewayFile();
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const providerJob = [...fake.resources.jobs.values()].at(-1)!;
    const path = `/v1/fine_tuning/jobs/${String(providerJob.id)}`;
    // The provider is slow to take each call; one the gateway cuts is not done.
    fake.enqueue({ delayMs: 400 });
    await leaveWhileAsked('GET', `/fine_tuning/jobs/${job.id}`, path);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(providerJob.status).toBe('validating_files');
    fake.enqueue({ delayMs: 400 });
    await leaveWhileAsked('POST', `/fine_tuning/jobs/${job.id}/cancel`, `${path}/cancel`);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(providerJob.status).not.toBe('cancelled');
  });

  it('reads a cancel back when the client leaves as the provider has cancelled the job, and keeps the job cancelled', async () => {
    const training = await gatewayFile();
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const providerJob = [...fake.resources.jobs.values()].at(-1)!;
    const path = `/v1/fine_tuning/jobs/${String(providerJob.id)}`;
    let release!: () => void;
    fake.resources.holdCancelAnswers = new Promise((resolve) => (release = resolve));
    try {
      await leaveWhileAsked('POST', `/fine_tuning/jobs/${job.id}/cancel`, `${path}/cancel`);
      expect(providerJob.status).toBe('cancelled');
      const reads = () => fake.requests.filter((r) => r.method === 'GET' && r.path === path).length;
      const workspaces = (await (
        await fetch(`${gateway.url}/workspaces`, { headers: { 'x-gateway-api-key': gateway.adminKey } })
      ).json()) as { data: Array<{ id: string }> };
      const stored = async () =>
        (await gateway.server.deps.store.fineTuningJobs.get(workspaces.data[0].id, job.id))?.status;
      for (let i = 0; i < 200 && (await stored()) !== 'cancelled'; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(reads()).toBe(1);
      expect(await stored()).toBe('cancelled');
    } finally {
      fake.resources.holdCancelAnswers = undefined;
      release();
    }
  });

  it('keeps a job cancelled when a read the provider answered before the cancel comes back after it', async () => {
    const training = await gatewayFile();
    const job = await client.fineTuning.jobs.create({
      model: 'gpt-4o-mini',
      training_file: training.id,
      metadata: { case: 'late-read' },
    });
    const providerJob = [...fake.resources.jobs.values()].at(-1)!;
    // The provider's answer to a read made while the job still ran, slow on its way back.
    fake.enqueue({ status: 200, body: { ...providerJob, status: 'running' }, delayMs: 400 });
    const path = `/v1/fine_tuning/jobs/${String(providerJob.id)}`;
    const reading = client.fineTuning.jobs.retrieve(job.id);
    while (!fake.requests.some((r) => r.method === 'GET' && r.path === path))
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await client.fineTuning.jobs.cancel(job.id)).status).toBe('cancelled');
    expect((await reading).status).toBe('running');

    // The provider now fails: the list shows the job as last seen, which is its end.
    fake.enqueue({ status: 503 });
    const listed = await client.fineTuning.jobs.list({ metadata: { case: 'late-read' } });
    expect(listed.data.map((j) => [j.id, j.status])).toEqual([[job.id, 'cancelled']]);
    // A finished job is not read again: the failure is still queued, and taken here.
    expect(fake.pending()).toBe(1);
    await fetch(`${fake.url}/v1/unused`);
  });

  it('reports a failed job with error{code, message, param}', async () => {
    const training = await gatewayFile();
    const job = await client.fineTuning.jobs.create({ model: 'fake-ft-fail', training_file: training.id });
    let current = job;
    for (let i = 0; i < 5 && current.status !== 'failed'; i++)
      current = await client.fineTuning.jobs.retrieve(job.id);
    expect(current.status).toBe('failed');
    expect(current.error).toEqual({
      code: 'invalid_training_file',
      message: 'The training file has too few examples.',
      param: 'training_file',
    });
  });

  it('shows error null on a job OpenAI answers with an error object of nulls (not failed)', async () => {
    const training = await gatewayFile();
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const providerJob = [...fake.resources.jobs.values()].at(-1)!;
    // OpenAI's object of a job that has not failed: every field of error null.
    const nulls = { code: null, message: null, param: null };
    fake.enqueue({ status: 200, body: { ...providerJob, status: 'running', error: nulls } });
    const running = await client.fineTuning.jobs.retrieve(job.id);
    expect([running.status, running.error]).toEqual(['running', null]);
    fake.enqueue({ status: 200, body: { ...providerJob, status: 'cancelled', error: nulls } });
    const cancelled = await client.fineTuning.jobs.cancel(job.id);
    expect([cancelled.status, cancelled.error]).toEqual(['cancelled', null]);
  });

  it('gives a failed job an error{code, message, param} when its provider says none', async () => {
    const training = await gatewayFile();
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    const providerJob = [...fake.resources.jobs.values()].at(-1)!;
    const failed = { ...providerJob, status: 'failed', finished_at: Math.floor(Date.now() / 1000) };
    const generic = { code: 'job_failed', message: 'The fine-tuning job failed', param: null };
    for (const error of [null, { code: null, message: null, param: null }, undefined]) {
      fake.enqueue({ status: 200, body: { ...failed, error } });
      const seen = await client.fineTuning.jobs.retrieve(job.id);
      expect([seen.status, seen.error]).toEqual(['failed', generic]);
    }
    // As last seen, in the list, too.
    const listed = await client.fineTuning.jobs.list({ limit: 1 });
    expect([listed.data[0].id, listed.data[0].error]).toEqual([job.id, generic]);
  });

  it('lists the workspace’s jobs newest first with limit and after, privately', async () => {
    const all = await client.fineTuning.jobs.list({ limit: 100 });
    expect(all.data.length).toBeGreaterThanOrEqual(4);
    const ids = all.data.map((job) => job.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    const first = await client.fineTuning.jobs.list({ limit: 1 });
    expect(first.data.map((j) => j.id)).toEqual([ids[0]]);
    expect(first.has_more).toBe(true);
    const next = await client.fineTuning.jobs.list({ limit: 1, after: ids[0] });
    expect(next.data.map((j) => j.id)).toEqual([ids[1]]);

    const made = await fetch(`${gateway.url}/workspaces`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Other', slug: `other-${Date.now()}` }),
    });
    const { admin_key } = (await made.json()) as { admin_key: { key: string } };
    const other = sdk(
      gateway,
      { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-x' },
      admin_key.key,
    );
    expect((await other.fineTuning.jobs.list()).data).toEqual([]);
    expect((await failure(other.fineTuning.jobs.retrieve(ids[0]))).status).toBe(404);
    expect((await failure(other.fineTuning.jobs.cancel(ids[0]))).status).toBe(404);
  });

  it('takes a limit past 100 on the job, event and checkpoint lists, as OpenAI sets them no maximum', async () => {
    const all = await client.fineTuning.jobs.list({ limit: 500 });
    expect(all.data.length).toBeGreaterThanOrEqual(1);
    expect(all.data.length).toBeLessThanOrEqual(100);
    const job = all.data[0];
    const events = await client.fineTuning.jobs.listEvents(job.id, { limit: 250 });
    expect(Array.isArray(events.data)).toBe(true);
    const asked = fake.requests.filter((r) => r.path.endsWith('/events')).at(-1);
    expect(asked?.query.limit).toBe('250');
    const checkpoints = await client.fineTuning.jobs.checkpoints.list(job.id, { limit: 250 });
    expect(Array.isArray(checkpoints.data)).toBe(true);
    expect(fake.requests.filter((r) => r.path.endsWith('/checkpoints')).at(-1)?.query.limit).toBe('250');
    const refused = await failure(client.fineTuning.jobs.list({ limit: 0 }));
    expect(refused.status).toBe(400);
    expect((refused.error as { param: string }).param).toBe('limit');
  });

  it('lists the jobs with the metadata asked for (metadata[k]=v; metadata=null: none), paging among them', async () => {
    const training = await gatewayFile();
    const make = (metadata?: Record<string, string>) =>
      client.fineTuning.jobs.create({
        model: 'gpt-4o-mini',
        training_file: training.id,
        ...(metadata && { metadata }),
      });
    const alpha = await make({ team: 'alpha', run: 'x' });
    const beta = await make({ team: 'beta', run: 'x' });
    const beta2 = await make({ team: 'beta' });
    const plain = await make();
    const ids = async (query: Parameters<typeof client.fineTuning.jobs.list>[0]) =>
      (await client.fineTuning.jobs.list(query)).data.map((j) => j.id);
    expect(await ids({ metadata: { team: 'beta' } })).toEqual([beta2.id, beta.id]);
    expect(await ids({ metadata: { team: 'beta', run: 'x' } })).toEqual([beta.id]);
    expect(await ids({ metadata: { run: 'x' }, limit: 1, after: beta.id })).toEqual([alpha.id]);
    const page = await client.fineTuning.jobs.list({ metadata: { team: 'beta' }, limit: 1 });
    expect([page.data[0].id, page.data[0].metadata, page.has_more]).toEqual([
      beta2.id,
      { team: 'beta' },
      true,
    ]);
    const none = await fetch(`${gateway.url}/fine_tuning/jobs?metadata=null&limit=100`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    const withoutMetadata = ((await none.json()) as { data: Array<{ id: string }> }).data.map((j) => j.id);
    expect(withoutMetadata).toContain(plain.id);
    expect(withoutMetadata).not.toContain(alpha.id);
    const refused = await fetch(`${gateway.url}/fine_tuning/jobs?metadata=team`, {
      headers: { 'x-gateway-api-key': gateway.adminKey },
    });
    expect([refused.status, ((await refused.json()) as { error: { param: string } }).error.param]).toEqual([
      400,
      'metadata',
    ]);
  });

  it('filters by a metadata pair of 64-character keys and 512-character values counted as code points', async () => {
    const training = await gatewayFile();
    const EMOJI = '\u{1F600}';
    const metadata = { [EMOJI.repeat(64)]: EMOJI.repeat(512) };
    const job = await client.fineTuning.jobs.create({
      model: 'gpt-4o-mini',
      training_file: training.id,
      metadata,
    });
    expect((await client.fineTuning.jobs.list({ metadata })).data.map((j) => j.id)).toEqual([job.id]);
    const tooLong = await failure(client.fineTuning.jobs.list({ metadata: { k: EMOJI.repeat(513) } }));
    expect([tooLong.status, (tooLong.error as { param: string }).param]).toEqual([400, 'metadata[k]']);
  });

  it('answers the list at once with a job as last seen when its provider does not answer', async () => {
    const training = await gatewayFile();
    const job = await client.fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: training.id });
    fake.enqueue({ hang: true }); // the job's refresh
    const started = Date.now();
    const page = await client.fineTuning.jobs.list({ limit: 1 }, { timeout: 15_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(page.data.map((j) => [j.id, j.status])).toEqual([[job.id, 'validating_files']]);
  }, 30_000);

  it('refuses a provider without a fine-tuning API, naming it', async () => {
    const anthropic = sdk(gateway, { 'x-gateway-provider': 'anthropic', authorization: 'Bearer sk-ant-x' });
    const error = await failure(
      anthropic.fineTuning.jobs.create({ model: 'claude', training_file: 'file-x' }),
    );
    expect(error.status).toBe(400);
    expect(error.message).toContain('"anthropic"');
    expect((error.error as { param: string }).param).toBe('x-gateway-provider');

    // A virtual key chose it: the header or config key that named the virtual key.
    const created = await fetch(`${gateway.url}/virtual-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({ slug: 'ft-claude', name: 'claude', provider: 'anthropic', api_key: 'sk-ant-x' }),
    });
    expect(created.status).toBe(200);
    for (const [headers, param] of [
      [{ 'x-gateway-virtual-key': 'ft-claude' }, 'x-gateway-virtual-key'],
      [{ 'x-gateway-config': JSON.stringify({ virtual_key: 'ft-claude' }) }, 'config.virtual_key'],
      [
        {
          'x-gateway-config': JSON.stringify({
            strategy: { mode: 'fallback' },
            targets: [{ virtual_key: 'ft-claude' }],
          }),
        },
        'config.targets[0].virtual_key',
      ],
    ] as const) {
      const refused = await failure(
        sdk(gateway, headers).fineTuning.jobs.create({ model: 'claude', training_file: 'file-x' }),
      );
      expect([refused.status, (refused.error as { param: string }).param]).toEqual([400, param]);
    }
  });

  it("takes the spec's tracker_a integration as it is written, sent to the provider as its wandb", async () => {
    const training = await gatewayFile('tracked.jsonl');
    const tracker = { project: 'p', name: 'run-1', entity: 'team', tags: ['a', 'b'] };
    const job = await client.fineTuning.jobs.create({
      model: 'gpt-4o-mini-2024-07-18',
      training_file: training.id,
      integrations: [{ type: 'tracker_a', tracker_a: tracker } as never],
    });
    expect(job.object).toBe('fine_tuning.job');
    const providerJob = [...fake.resources.jobs.values()].at(-1)!;
    expect(providerJob.integrations).toEqual([{ type: 'wandb', wandb: tracker }]);

    const missing = await failure(
      client.fineTuning.jobs.create({
        model: 'm',
        training_file: training.id,
        integrations: [{ type: 'tracker_a', wandb: { project: 'p' } } as never],
      }),
    );
    expect([missing.status, (missing.error as { param: string }).param]).toEqual([
      400,
      'integrations[0].tracker_a',
    ]);
  });

  it('refuses bad bodies with a 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: 'm' }, 'training_file'],
      [{ model: 'm', training_file: 'file-x', hyperparameters: { n_epochs: 0 } }, 'hyperparameters.n_epochs'],
      [
        {
          model: 'm',
          training_file: 'file-x',
          integrations: Array(6).fill({ type: 'wandb', wandb: { project: 'p' } }),
        },
        'integrations',
      ],
      [{ model: 'm', training_file: 'file-x', suffix: 'x'.repeat(65) }, 'suffix'],
    ];
    for (const [body, param] of cases) {
      const error = await failure(client.fineTuning.jobs.create(body as never));
      expect(error.status, param).toBe(400);
      expect((error.error as { param: string }).param, JSON.stringify(body)).toBe(param);
    }
    // A gateway file of another purpose, or one that does not exist.
    const batchFile = await client.files.create({
      file: await toFile(Buffer.from('{}\n'), 'b.jsonl'),
      purpose: 'batch',
    });
    const wrong = await failure(client.fineTuning.jobs.create({ model: 'm', training_file: batchFile.id }));
    expect([wrong.status, (wrong.error as { param: string }).param]).toEqual([400, 'training_file']);
    const missing = await failure(client.fineTuning.jobs.create({ model: 'm', training_file: 'file_NOPE' }));
    expect([missing.status, (missing.error as { param: string }).param]).toEqual([404, 'training_file']);

    // Both files are checked before either is sent: a refused validation file sends no training data.
    const training = await gatewayFile('unsent.jsonl');
    const before = fake.requests.length;
    const refused = await failure(
      client.fineTuning.jobs.create({
        model: 'm',
        training_file: training.id,
        validation_file: batchFile.id,
      }),
    );
    expect([refused.status, (refused.error as { param: string }).param]).toEqual([400, 'validation_file']);
    expect(fake.requests.slice(before)).toEqual([]);
  });

  it('answers a provider error in the OpenAI shape without the key', async () => {
    fake.enqueue({
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${SECRET}.`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      },
    });
    const response = await fetch(`${gateway.url}/fine_tuning/jobs`, {
      method: 'POST',
      headers: {
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-virtual-key': 'ft-openai',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', training_file: 'file-abc' }),
    });
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(text).not.toContain(SECRET);
    expect(JSON.parse(text)).toMatchObject({
      error: { code: 'invalid_api_key', type: 'invalid_request_error' },
    });
  });
});

describe('a fine-tuning job created while its node stops', () => {
  const env = {
    GATEWAY_ADMIN_KEY: `gw-test-${randomBytes(16).toString('hex')}`,
    GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
    GATEWAY_SHUTDOWN_GRACE_MS: '500',
  };
  let fake: FakeUpstream;
  let dataDir: string;

  const start = () => startGateway({ env: { ...env, GATEWAY_DATA_DIR: dataDir } });
  const uploads = () => fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/files');

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'ft-stop' });
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-ft-stop-'));
  });
  afterAll(async () => {
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('gives back its claim on the upload it was sending, so a retry on the next node sends the file at once', async () => {
    const first = await start();
    const key = await fetch(`${first.url}/virtual-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': env.GATEWAY_ADMIN_KEY },
      body: JSON.stringify({
        slug: 'ft-stop',
        name: 'ft',
        provider: 'openai',
        api_key: SECRET,
        custom_host: fake.url,
      }),
    });
    expect(key.status, await key.text()).toBe(200);
    const client = sdk(first, { 'x-gateway-virtual-key': 'ft-stop' }, env.GATEWAY_ADMIN_KEY);
    const training = await client.files.create({
      file: await toFile(Buffer.from(TRAINING), 'train.jsonl'),
      purpose: 'fine-tune',
    });
    // The provider takes the file and does not answer (a large file's upload, still under way).
    fake.enqueue({ hang: true });
    const cut = failure(
      client.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: training.id }),
    );
    for (let i = 0; i < 200 && uploads().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(uploads()).toHaveLength(1);
    const started = Date.now();
    await first.server.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    await cut;

    // The client tries again on the next node: the file is sent at once, not after the claim goes stale.
    const next = await start();
    try {
      const job = await sdk(
        next,
        { 'x-gateway-virtual-key': 'ft-stop' },
        env.GATEWAY_ADMIN_KEY,
      ).fineTuning.jobs.create(
        { model: 'gpt-4o-mini-2024-07-18', training_file: training.id },
        { timeout: 5_000 },
      );
      expect(job).toMatchObject({ status: 'validating_files', training_file: training.id });
      expect(uploads()).toHaveLength(2);
    } finally {
      await next.server.close();
    }
  });
});
