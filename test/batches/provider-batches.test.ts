/**
 * `completion_window: "24h"` with the official `openai` SDK: the batch runs on the fake OpenAI's own Batch
 * API (its Files and Batch endpoints in OpenAI's wire format). The gateway sends the input file once, polls
 * the provider's batch, mirrors its status and counts, copies the output and error files into its own file
 * store, forwards cancel, and turns a provider's refusal into a failed batch.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { randomBytes } from 'node:crypto';
import { resourceTarget } from '../../src/gateway/provider-resources/resource-target.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { chatLine, contentLines, finished, jsonl, SLOW_TEST_MS, upload, waitFor } from './support.js';

const SECRET = 'sk-batch-secret-0123456789';

function sdk(gateway: TestGateway, headers: Record<string, string>): OpenAI {
  return new OpenAI({
    baseURL: gateway.url,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, ...headers },
  });
}

describe('provider batches (completion_window 24h)', () => {
  let fake: FakeUpstream;
  let gateway: TestGateway;
  let client: OpenAI;
  const uploads = () => fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/files');
  const creates = () => fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/batches');

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'pb' });
    gateway = await startGateway({ env: { GATEWAY_BATCH_POLL_MS: '20' } });
    const created = await fetch(`${gateway.url}/virtual-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey },
      body: JSON.stringify({
        slug: 'pb-openai',
        name: 'pb',
        provider: 'openai',
        api_key: SECRET,
        custom_host: fake.url,
      }),
    });
    expect(created.status, await created.text()).toBe(200);
    client = sdk(gateway, { 'x-gateway-virtual-key': 'pb-openai' });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  /** The provider's batch the gateway's batch `batchId` made (its metadata names it). */
  const providerBatchOf = (batchId: string) =>
    [...fake.resources.batches.values()].find(
      (b) => (b.metadata as Record<string, string> | null)?.gateway_batch_id === batchId,
    );

  /** A gateway file of two lines, not yet sent to the provider. */
  async function freshInput(name: string): Promise<string> {
    const text = jsonl([chatLine(`${name}-1`), chatLine(`${name}-2`)]);
    return (await upload(client, text, `${name}.jsonl`)).id;
  }

  /** A gateway file the provider already holds a copy of (sent for a batch run to its end), and that copy's
   * id at the provider. */
  async function sentInput(name: string): Promise<{ id: string; copy: string }> {
    const id = await freshInput(name);
    const batch = await client.batches.create({
      input_file_id: id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const done = await waitFor(client, batch.id, finished);
    expect(done.status, JSON.stringify(done.errors)).toBe('completed');
    return { id, copy: providerBatchOf(batch.id)!.input_file_id as string };
  }

  it(
    'runs on the provider, mirrors it, and copies its output and error files into the gateway',
    async () => {
      const input = await upload(
        client,
        jsonl([chatLine('a'), chatLine('b', 'fake-status-400'), chatLine('c')]),
      );
      const uploadsBefore = uploads().length;
      const filesBefore = new Set(fake.resources.files.keys());
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        metadata: { team: 'x' },
      });
      expect(batch).toMatchObject({ object: 'batch', status: 'validating', completion_window: '24h' });
      expect(batch.id).toMatch(/^batch_/);

      const statuses = new Set<string>();
      const done = await waitFor(client, batch.id, (b) => {
        statuses.add(b.status);
        return finished(b);
      });
      expect(done.status).toBe('completed');
      expect(statuses.has('in_progress') || statuses.has('finalizing')).toBe(true);
      expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
      expect(done.completed_at).toBeGreaterThan(0);
      expect(done.in_progress_at).toBeGreaterThan(0);
      expect(done.metadata).toEqual({ team: 'x' });

      // The provider got the file once (multipart, purpose batch, with the key) and a batch naming it.
      const sent = uploads().slice(uploadsBefore);
      expect(sent).toHaveLength(1);
      expect(sent[0].headers.authorization).toBe(`Bearer ${SECRET}`);
      const providerInput = [...fake.resources.files.values()].filter(
        (f) => f.purpose === 'batch' && !filesBefore.has(f.id),
      );
      expect(providerInput).toHaveLength(1);
      const asked = creates().filter(
        (r) => (r.body as { metadata?: Record<string, string> }).metadata?.gateway_batch_id === batch.id,
      );
      expect(asked).toHaveLength(1);
      expect(asked[0].body).toMatchObject({
        input_file_id: providerInput[0].id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        metadata: { team: 'x' },
      });

      // The output and error files are the gateway's own now, read by their gateway ids.
      expect(done.output_file_id).toMatch(/^file_/);
      expect(done.error_file_id).toMatch(/^file_/);
      const output = await contentLines(client, done.output_file_id);
      expect(output.map((line) => line.custom_id)).toEqual(['a', 'c']);
      expect(output[0].response?.body).toMatchObject({ object: 'chat.completion' });
      const errors = await contentLines(client, done.error_file_id);
      expect(errors.map((line) => [line.custom_id, line.response?.status_code])).toEqual([['b', 400]]);
      const outputFile = await client.files.retrieve(done.output_file_id!);
      expect(outputFile).toMatchObject({ purpose: 'batch_output' });

      expect((await client.batches.list()).data.map((b) => b.id)).toContain(batch.id);

      // Each line is in the log under the batch's id, priced at the provider's batch price (half).
      type LogRow = {
        status: number;
        model: string | null;
        provider: string;
        prompt_tokens: number | null;
        completion_tokens: number | null;
        cost: number | null;
        metadata: Record<string, string>;
      };
      let records: LogRow[] = [];
      for (let i = 0; i < 100 && records.length < 3; i++) {
        const logs = await fetch(`${gateway.url}/logs?metadata.batch_id=${batch.id}`, {
          headers: { 'x-gateway-api-key': gateway.adminKey },
        });
        records = ((await logs.json()) as { data: LogRow[] }).data;
        if (records.length < 3) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(records.map((r) => [r.metadata.custom_id, r.status]).sort()).toEqual([
        ['a', 200],
        ['b', 400],
        ['c', 200],
      ]);
      for (const record of records.filter((r) => r.status === 200)) {
        expect(record).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini' });
        const full = (record.prompt_tokens! * 0.15 + record.completion_tokens! * 0.6) / 1e6;
        expect(record.cost).toBeCloseTo(full / 2, 12);
        expect(record.cost).toBeGreaterThan(0);
      }
    },
    SLOW_TEST_MS,
  );

  it(
    'forwards cancel to the provider and ends cancelled; the input is not sent again',
    async () => {
      const input = await sentInput('cancel');
      const uploadsBefore = uploads().length;
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      // Wait until the provider has it, then cancel.
      const deadline = Date.now() + 30_000;
      while (!providerBatchOf(batch.id)) {
        if (Date.now() > deadline) throw new Error('the batch never reached the provider');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(uploads()).toHaveLength(uploadsBefore);
      expect(providerBatchOf(batch.id)!.input_file_id).toBe(input.copy);
      const cancelling = await client.batches.cancel(batch.id);
      expect(cancelling.status).toBe('cancelling');
      expect(cancelling.cancelling_at).toBeGreaterThan(0);
      const cancelPath = `/v1/batches/${providerBatchOf(batch.id)!.id as string}/cancel`;
      expect(fake.requests.some((r) => r.method === 'POST' && r.path === cancelPath)).toBe(true);
      const done = await waitFor(client, batch.id, finished);
      expect(done.status).toBe('cancelled');
      expect(done.cancelled_at).toBeGreaterThan(0);
    },
    SLOW_TEST_MS,
  );

  it(
    'ends cancelled, at once, when its workspace is deleted with the virtual key that reached the provider',
    async () => {
      const admin = { 'content-type': 'application/json', 'x-gateway-api-key': gateway.adminKey };
      const made = await fetch(`${gateway.url}/workspaces`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'Doomed', slug: 'pb-doomed' }),
      });
      const workspace = (await made.json()) as { id: string; admin_key: { key: string } };
      expect(made.status).toBe(200);
      const ownKey = workspace.admin_key.key;
      const vk = await fetch(`${gateway.url}/virtual-keys`, {
        method: 'POST',
        headers: { ...admin, 'x-gateway-api-key': ownKey },
        body: JSON.stringify({
          slug: 'pb-doomed-openai',
          name: 'pb',
          provider: 'openai',
          api_key: SECRET,
          custom_host: fake.url,
        }),
      });
      expect(vk.status, await vk.text()).toBe(200);
      const own = new OpenAI({
        baseURL: gateway.url,
        apiKey: 'unused',
        maxRetries: 0,
        defaultHeaders: { 'x-gateway-api-key': ownKey, 'x-gateway-virtual-key': 'pb-doomed-openai' },
      });
      const input = await upload(own, jsonl([chatLine('a')]));
      let release!: () => void;
      fake.resources.holdBatchCreates = new Promise((resolve) => (release = resolve));
      const before = creates().length;
      try {
        const batch = await own.batches.create({
          input_file_id: input.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        });
        const deadline = Date.now() + 30_000;
        while (creates().length === before) {
          if (Date.now() > deadline) throw new Error('the batch never reached the provider');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        // Deleted while the provider is creating the batch: the cancel is forwarded once it exists, and
        // then nothing of the workspace's can reach the provider again.
        const deleted = await fetch(`${gateway.url}/workspaces/${workspace.id}`, {
          method: 'DELETE',
          headers: { 'x-gateway-api-key': gateway.adminKey },
        });
        expect(deleted.status, await deleted.text()).toBe(200);
        release();
        const { store } = gateway.server.deps;
        let row = await store.batches.getById(batch.id);
        for (let i = 0; i < 100 && row?.status !== 'cancelled'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          row = await store.batches.getById(batch.id);
        }
        expect(row?.status).toBe('cancelled');
        expect(row?.cancelled_at).toBeGreaterThan(0);
        expect(row?.errors ?? null).toBeNull();
        const cancelPath = `/v1/batches/${providerBatchOf(batch.id)!.id as string}/cancel`;
        expect(fake.requests.some((r) => r.method === 'POST' && r.path === cancelPath)).toBe(true);
      } finally {
        release();
        fake.resources.holdBatchCreates = undefined;
      }
    },
    SLOW_TEST_MS,
  );

  it(
    'sends the input file again when the provider no longer has the copy it was given',
    async () => {
      const { id: inputId, copy: lost } = await sentInput('lost');
      fake.resources.files.delete(lost); // deleted in the provider's dashboard, or by its retention
      const before = uploads().length;
      const batch = await client.batches.create({
        input_file_id: inputId,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      const done = await waitFor(client, batch.id, finished);
      expect(done.status, JSON.stringify(done.errors)).toBe('completed');
      expect(done.input_file_id).toBe(inputId);
      expect(uploads()).toHaveLength(before + 1);
      const copy = creates().at(-1)!.body as { input_file_id: string };
      expect(copy.input_file_id).not.toBe(lost);
      expect(fake.resources.files.has(copy.input_file_id)).toBe(true);
      const again = await client.batches.create({
        input_file_id: inputId,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      expect((await waitFor(client, again.id, finished)).status).toBe('completed');
      expect(uploads()).toHaveLength(before + 1);
    },
    SLOW_TEST_MS,
  );

  it(
    'forwards a cancel made while the provider was still being asked for the batch',
    async () => {
      let release!: () => void;
      fake.resources.holdBatchCreates = new Promise((resolve) => (release = resolve));
      try {
        const inputId = await freshInput('asked');
        const before = creates().length;
        const batch = await client.batches.create({
          input_file_id: inputId,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        });
        // The submission is waiting on the provider's answer when the cancel comes.
        const deadline = Date.now() + 30_000;
        while (creates().length === before) {
          if (Date.now() > deadline) throw new Error('the batch never reached the provider');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const cancelling = await client.batches.cancel(batch.id);
        expect(cancelling.status).toBe('cancelling');
        release();
        const done = await waitFor(client, batch.id, finished);
        expect(done.status).toBe('cancelled');
        expect(done.cancelled_at).toBeGreaterThan(0);
        const providerId = [...fake.resources.batches.values()].find(
          (b) => (b.metadata as Record<string, string> | null)?.gateway_batch_id === batch.id,
        )?.id;
        expect(
          fake.requests.some((r) => r.method === 'POST' && r.path === `/v1/batches/${providerId}/cancel`),
        ).toBe(true);
      } finally {
        fake.resources.holdBatchCreates = undefined;
        release();
      }
    },
    SLOW_TEST_MS,
  );

  it(
    'a submission tried again after its answer was lost takes the batch it created, not a second one',
    async () => {
      const inputId = await freshInput('lost-answer');
      fake.resources.loseBatchAnswers = 1;
      const batch = await client.batches.create({
        input_file_id: inputId,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        metadata: { team: 'y' },
      });
      const done = await waitFor(client, batch.id, finished);
      expect(done.status, JSON.stringify(done.errors)).toBe('completed');
      expect(done.metadata).toEqual({ team: 'y' });
      expect(fake.resources.loseBatchAnswers).toBe(0);
      // The provider holds one batch for it, named in its metadata, and was asked to create it once.
      const atProvider = [...fake.resources.batches.values()].filter(
        (b) => (b.metadata as Record<string, string> | null)?.gateway_batch_id === batch.id,
      );
      expect(atProvider).toHaveLength(1);
      expect(atProvider[0].metadata).toEqual({ team: 'y', gateway_batch_id: batch.id });
      const asked = creates().filter(
        (r) => (r.body as { metadata?: Record<string, string> }).metadata?.gateway_batch_id === batch.id,
      );
      expect(asked).toHaveLength(1);
      expect(fake.requests.some((r) => r.method === 'GET' && r.path === '/v1/batches')).toBe(true);
    },
    SLOW_TEST_MS,
  );

  it(
    "fails the batch with the provider's error when the provider refuses it",
    async () => {
      // Already at the provider: the next request the fake gets is the batch's creation.
      const { id: inputId } = await sentInput('refused');
      fake.enqueue({
        status: 400,
        body: {
          error: {
            message: 'The batch input file is not valid.',
            type: 'invalid_request_error',
            param: 'input_file_id',
            code: 'invalid_file',
          },
        },
      });
      const batch = await client.batches.create({
        input_file_id: inputId,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      const done = await waitFor(client, batch.id, finished);
      expect(done.status).toBe('failed');
      expect(done.errors?.data).toEqual([
        {
          code: 'invalid_file',
          message: 'The batch input file is not valid.',
          param: 'input_file_id',
          line: null,
        },
      ]);
    },
    SLOW_TEST_MS,
  );

  /** Another node claims the upload of a new input file to the provider's account and keeps its claim
   * fresh, for ever: a bug, or a disk so slow that its bytes trickle. Resolves with the file and the stop. */
  async function heldByAnotherNode(name: string) {
    const input = await upload(client, jsonl([chatLine(name)]), `${name}.jsonl`);
    const { deps } = gateway.server;
    const workspaces = (await (
      await fetch(`${gateway.url}/workspaces`, { headers: { 'x-gateway-api-key': gateway.adminKey } })
    ).json()) as { data: Array<{ id: string }> };
    const headers = { 'x-gateway-virtual-key': 'pb-openai' };
    const { account } = await resourceTarget(deps, headers, workspaces.data[0].id, 'batches');
    const claim = await deps.store.providerFiles.claim(input.id, account, 'openai', 10 * 60_000);
    if (claim.state !== 'claimed') throw new Error(`not claimed: ${claim.state}`);
    let held = claim.claimed_at_ms;
    const renewing = setInterval(() => {
      void deps.store.providerFiles.renew(input.id, account, held).then((at) => (held = at ?? held));
    }, 50);
    const sentFor = () =>
      creates().some((r) => (r.body as { input_file_id?: string }).input_file_id === input.id);
    return { input, sentFor, stop: () => clearInterval(renewing) };
  }

  it(
    "gives up waiting for another node's upload of its input at the end of its window: failed, saying why",
    async () => {
      const held = await heldByAnotherNode('window');
      try {
        const batch = await client.batches.create({
          input_file_id: held.input.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        });
        // The batch's window ends in a second (it is 24 hours from its creation).
        const expiresAt = Math.floor(Date.now() / 1000) + 1;
        await gateway.server.deps.store.batches.update(batch.id, { expires_at: expiresAt });
        const done = await waitFor(client, batch.id, finished, 20_000);
        expect(done.status).toBe('failed');
        expect(done.failed_at).toBeGreaterThanOrEqual(expiresAt);
        expect(done.errors?.data).toEqual([
          {
            code: 'input_file_upload_timeout',
            message: expect.stringContaining(held.input.id),
            param: 'input_file_id',
            line: null,
          },
        ]);
        expect(held.sentFor()).toBe(false);
      } finally {
        held.stop();
      }
    },
    SLOW_TEST_MS,
  );

  it(
    "is cancelled while it waits for another node's upload of its input, without reaching the provider",
    async () => {
      const held = await heldByAnotherNode('cancel-wait');
      try {
        const batch = await client.batches.create({
          input_file_id: held.input.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        });
        await new Promise((resolve) => setTimeout(resolve, 300)); // its submission is waiting
        expect((await client.batches.cancel(batch.id)).status).toBe('cancelling');
        const done = await waitFor(client, batch.id, finished, 20_000);
        expect(done.status).toBe('cancelled');
        expect(done.cancelled_at).toBeGreaterThan(0);
        expect(held.sentFor()).toBe(false);
      } finally {
        held.stop();
      }
    },
    SLOW_TEST_MS,
  );

  it(
    'sends the provider a batch file saved with a byte order mark without it, as the gateway read it',
    async () => {
      const text = `\uFEFF${jsonl([chatLine('bom-1'), chatLine('bom-2')]).replace(/\n/g, '\r\n')}`;
      const input = await client.files.create({
        file: await toFile(Buffer.from(text), 'bom.jsonl'),
        purpose: 'batch',
      });
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      let sent: Buffer | undefined;
      for (let i = 0; i < 200 && !sent; i++) {
        sent = [...fake.resources.files.values()].find((f) => f.filename === 'bom.jsonl')?.content;
        if (!sent) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Bytes as uploaded, the BOM's three apart: a provider reading line 1 as JSON meets no U+FEFF.
      expect(sent?.equals(Buffer.from(text).subarray(3))).toBe(true);
      const done = await waitFor(client, batch.id, finished);
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    },
    SLOW_TEST_MS,
  );

  it('refuses a provider without a Batch API, naming it', async () => {
    const inputId = await freshInput('anthropic');
    const anthropic = sdk(gateway, { 'x-gateway-provider': 'anthropic', authorization: 'Bearer sk-ant-x' });
    const error = (await anthropic.batches
      .create({ input_file_id: inputId, endpoint: '/v1/chat/completions', completion_window: '24h' })
      .catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(400);
    expect(error.message).toContain('"anthropic"');
    expect((error.error as { param: string }).param).toBe('x-gateway-provider');
  });

  it(
    "runs on an input file the client uploaded to the provider itself, passing the provider's id on",
    async () => {
      const atProvider = sdk(gateway, {
        'x-gateway-virtual-key': 'pb-openai',
        'x-gateway-files': 'provider',
      });
      const own = await atProvider.files.create({
        file: await toFile(Buffer.from(jsonl([chatLine('own-1'), chatLine('own-2')])), 'own.jsonl'),
        purpose: 'batch',
      });
      expect(own.id).not.toMatch(/^file_/);
      const sentBefore = uploads().length;
      // The same client, its x-gateway-files header and all, as the SDK sends it on every call.
      const batch = await atProvider.batches.create({
        input_file_id: own.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      expect(batch.input_file_id).toBe(own.id);
      const done = await waitFor(client, batch.id, finished);
      expect(done.status, JSON.stringify(done.errors)).toBe('completed');
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
      expect((creates().at(-1)!.body as { input_file_id: string }).input_file_id).toBe(own.id);
      expect(uploads()).toHaveLength(sentBefore);
      const output = await contentLines(client, done.output_file_id);
      expect(output.map((line) => line.custom_id)).toEqual(['own-1', 'own-2']);

      // A managed batch reads its input itself: only a gateway file will do.
      const managed = (await client.batches
        .create({
          input_file_id: own.id,
          endpoint: '/v1/chat/completions',
          completion_window: 'immediate' as '24h',
        })
        .catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
      expect(managed.status).toBe(404);
      expect((managed.error as { param: string }).param).toBe('input_file_id');
    },
    SLOW_TEST_MS,
  );

  it(
    'records the lines an expired batch ran, not those it never ran (batch_expired)',
    async () => {
      const input = await upload(client, jsonl([chatLine('ran'), chatLine('never')]));
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      // The provider's batch ends expired, one line answered, the other never run.
      const deadline = Date.now() + 30_000;
      let remote: Record<string, unknown> | undefined;
      while (!remote) {
        remote = providerBatchOf(batch.id);
        if (Date.now() > deadline) throw new Error('the batch never reached the provider');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const answered = {
        custom_id: 'ran',
        response: {
          status_code: 200,
          request_id: 'req_ran',
          body: { model: 'gpt-4o-mini', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
        },
        error: null,
      };
      const never = {
        custom_id: 'never',
        response: null,
        error: {
          code: 'batch_expired',
          message: 'This request could not be executed before the completion window expired.',
        },
      };
      const output = fake.resources.addFile(
        'out.jsonl',
        'batch_output',
        Buffer.from(`${JSON.stringify(answered)}\n`),
      );
      const errors = fake.resources.addFile(
        'err.jsonl',
        'batch_output',
        Buffer.from(`${JSON.stringify(never)}\n`),
      );
      Object.assign(remote, {
        status: 'expired',
        expired_at: Math.floor(Date.now() / 1000),
        output_file_id: output.id,
        error_file_id: errors.id,
        request_counts: { total: 2, completed: 1, failed: 1 },
      });
      expect((await waitFor(client, batch.id, finished)).status).toBe('expired');
      const logged = async () => {
        const logs = await fetch(`${gateway.url}/logs?metadata.batch_id=${batch.id}`, {
          headers: { 'x-gateway-api-key': gateway.adminKey },
        });
        return ((await logs.json()) as { data: Array<{ status: number; metadata: Record<string, string> }> })
          .data;
      };
      for (let i = 0; i < 100 && (await logged()).length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await logged()).map((r) => [r.metadata.custom_id, r.status])).toEqual([['ran', 200]]);
    },
    SLOW_TEST_MS,
  );

  it(
    "records a line whose custom_id is longer than a metadata value without it, as a managed batch's",
    async () => {
      const long = 'x'.repeat(513);
      // As long as a metadata value may be: 512 characters, an emoji one (code points, not UTF-16 units).
      const emoji = '\u{1F600}'.repeat(512);
      const input = await upload(client, jsonl([chatLine('short'), chatLine(long), chatLine(emoji)]));
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      expect((await waitFor(client, batch.id, finished)).status).toBe('completed');
      let records: Array<{ metadata: Record<string, string> }> = [];
      for (let i = 0; i < 100 && records.length < 3; i++) {
        const logs = await fetch(`${gateway.url}/logs?metadata.batch_id=${batch.id}`, {
          headers: { 'x-gateway-api-key': gateway.adminKey },
        });
        records = ((await logs.json()) as { data: typeof records }).data;
        if (records.length < 3) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(records.map((r) => r.metadata.custom_id ?? null).sort()).toEqual([null, 'short', emoji]);
    },
    SLOW_TEST_MS,
  );
});

describeWithPostgres('provider batches on PostgreSQL and S3-compatible storage, two nodes', () => {
  let fake: FakeUpstream;
  let s3: TestS3;
  let nodes: TestGateway[] = [];
  const schema = freshSchemaName('provider_batches');
  const adminKey = `gw-test-${randomBytes(8).toString('hex')}`;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'pb-pg' });
    s3 = await startS3();
    const env = {
      ...s3.env,
      GATEWAY_BATCH_POLL_MS: '20',
      GATEWAY_ADMIN_KEY: adminKey,
      GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
    };
    const postgres = { url: postgresUrl(), schema };
    nodes = [await startGateway({ env, postgres }), await startGateway({ env, postgres })];
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await fake?.close();
    await s3?.close();
    await dropSchema(schema);
  });

  it(
    'submits once and polls one chain at a time, whichever node runs the job',
    async () => {
      const config = {
        'x-gateway-api-key': adminKey,
        'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'sk-pg', custom_host: fake.url }),
      };
      const [a, b] = nodes.map((node) => sdk(node, config));
      const input = await upload(a, jsonl([chatLine('p'), chatLine('q')]));
      const batch = await a.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      const done = await waitFor(b, batch.id, finished);
      expect(done.status, JSON.stringify(done.errors)).toBe('completed');
      expect((await contentLines(b, done.output_file_id)).map((l) => l.custom_id)).toEqual(['p', 'q']);
      const providerId = [...fake.resources.batches.keys()][0];
      const polls = fake.requests.filter((r) => r.method === 'GET' && r.path === `/v1/batches/${providerId}`);
      // validating → in_progress → finalizing → completed: three reads, none twice.
      expect(polls).toHaveLength(3);
      expect(fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/batches')).toHaveLength(1);
      expect(fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/files')).toHaveLength(1);
    },
    SLOW_TEST_MS,
  );
});
