/** `gateway fine-tuning …` and `gateway batches create --window 24h` against a real gateway and the fake
 * OpenAI's Files, fine-tuning and Batch APIs. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatLine, jsonl, target } from '../batches/support.js';
import { runCliAgainst } from './run-cli.js';

let gateway: TestGateway;
let upstream: FakeUpstream;
let dir: string;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'cli-ft' });
  gateway = await startGateway({ env: { GATEWAY_BATCH_POLL_MS: '20' } });
  dir = mkdtempSync(join(tmpdir(), 'gateway-cli-ft-'));
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[]) => runCliAgainst(gateway, args);

/** `gateway --json fine-tuning create` of a one-line training file written as `name`. */
function createJob(name: string, options: string[] = []) {
  const training = join(dir, name);
  writeFileSync(training, '{"messages":[]}\n');
  const config = JSON.stringify(target(upstream));
  return cli([
    '--json',
    'fine-tuning',
    'create',
    'gpt-4o-mini',
    '--training-file',
    training,
    ...options,
    '--config',
    config,
  ]);
}

describe('gateway fine-tuning', () => {
  it('creates a job from a local file, follows it, and reads its events and checkpoints', async () => {
    const created = await createJob('train.jsonl', ['--suffix', 'cli', '--epochs', '2']);
    expect(created.code, created.stderr).toBe(0);
    const id = created.json().id as string;
    expect(created.json()).toMatchObject({ status: 'validating_files', hyperparameters: { n_epochs: 2 } });
    expect([...upstream.resources.files.values()][0].content.toString()).toBe('{"messages":[]}\n');

    let status = '';
    for (let i = 0; i < 5 && status !== 'succeeded'; i++) {
      status = (await cli(['--json', 'fine-tuning', 'get', id])).json().status as string;
    }
    expect(status).toBe('succeeded');
    const listed = await cli(['fine-tuning', 'list']);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('ft:gpt-4o-mini:org-fake:cli:');
    expect((await cli(['fine-tuning', 'events', id])).stdout).toContain('successfully completed');
    // The table shows the event ids that --after takes.
    const firstPage = (await cli(['--json', 'fine-tuning', 'events', id, '--limit', '2'])).json();
    const table = await cli(['fine-tuning', 'events', id, '--limit', '2']);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+CREATED\s+LEVEL\s+MESSAGE/);
    for (const event of firstPage.data as Array<{ id: string }>) expect(table.stdout).toContain(event.id);
    const next = await cli([
      '--json',
      'fine-tuning',
      'events',
      id,
      '--after',
      firstPage.data[1].id as string,
    ]);
    expect(next.json().data[0].id).not.toBe(firstPage.data[0].id);
    expect((await cli(['fine-tuning', 'checkpoints', id])).stdout).toContain('ckpt-step-3');
    const cancel = await cli(['fine-tuning', 'cancel', id]);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain('HTTP 400');
  });
  it('pauses and resumes a job', async () => {
    const created = await createJob('pause.jsonl');
    const id = created.json().id as string;
    let status = created.json().status as string;
    for (let i = 0; i < 5 && status === 'validating_files'; i++) {
      status = (await cli(['--json', 'fine-tuning', 'get', id])).json().status as string;
    }
    const paused = await cli(['--json', 'fine-tuning', 'pause', id]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.json()).toMatchObject({ id, status: 'paused' });
    const resumed = await cli(['fine-tuning', 'resume', id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('queued');
  });
});

describe('gateway fine-tuning create with a training file that cannot be read', () => {
  it('names the path (a directory), not an unreachable gateway', async () => {
    const folder = join(dir, 'data');
    mkdirSync(folder);
    const run = await cli([
      'fine-tuning',
      'create',
      'gpt-4o-mini',
      '--training-file',
      folder,
      '--config',
      JSON.stringify(target(upstream)),
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${folder} is not a file`);
  });
});

describe('gateway batches create --window 24h', () => {
  it("runs the batch on the provider's Batch API and downloads its output", async () => {
    const input = join(dir, 'requests.jsonl');
    writeFileSync(input, jsonl([chatLine('one'), chatLine('two')]));
    const output = join(dir, 'output.jsonl');
    const run = await cli([
      'batches',
      'create',
      input,
      '--window',
      '24h',
      '--config',
      JSON.stringify(target(upstream)),
      '--watch',
      '--interval',
      '30',
      '--output',
      output,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('2/2 100%  failed 0  completed');
    const answered = readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { custom_id: string });
    expect(answered.map((line) => line.custom_id)).toEqual(['one', 'two']);
    expect(upstream.requests.some((r) => r.method === 'POST' && r.path === '/v1/batches')).toBe(true);
  });
});
