/** `gateway files …` and `gateway batches …` against a real gateway and a fake provider. */
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
  upstream = await startFakeOpenAI({ name: 'cli-batches', models: { broken: { status: 400 } } });
  gateway = await startGateway({ env: { GATEWAY_BATCH_POLL_MS: '50' } });
  dir = mkdtempSync(join(tmpdir(), 'gateway-cli-batches-'));
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[]) => runCliAgainst(gateway, args);

describe('gateway files', () => {
  it('uploads, lists, downloads and deletes', async () => {
    const path = join(dir, 'notes.txt');
    writeFileSync(path, 'hello files\n');
    const uploaded = await cli(['--json', 'files', 'upload', path, '--purpose', 'vision']);
    expect(uploaded.code, uploaded.stderr).toBe(0);
    const id = uploaded.json().id as string;
    expect(uploaded.json()).toMatchObject({ filename: 'notes.txt', purpose: 'vision', bytes: 12 });

    const listed = await cli(['files', 'list', '--purpose', 'vision']);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('notes.txt');

    const printed = await cli(['files', 'download', id]);
    expect(printed.stdout).toBe('hello files\n');
    const saved = join(dir, 'copy.txt');
    expect((await cli(['files', 'download', id, '--output', saved])).code).toBe(0);
    expect(readFileSync(saved, 'utf8')).toBe('hello files\n');

    expect((await cli(['files', 'delete', id])).stdout).toContain(`Deleted ${id}`);
    const gone = await cli(['files', 'get', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('HTTP 404');
  });
  it('refuses to upload a path that is not a readable file, naming it', async () => {
    const missing = join(dir, 'missing.jsonl');
    const gone = await cli(['files', 'upload', missing]);
    expect([gone.code, gone.stderr.trim()]).toEqual([1, `error: Cannot read ${missing}: no such file`]);
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    const directory = await cli(['files', 'upload', folder, '--purpose', 'fine-tune']);
    expect([directory.code, directory.stderr.trim()]).toEqual([
      1,
      `error: ${folder} is not a file (it is a directory)`,
    ]);
  });

  it('downloads to stdout byte for byte: characters split across chunks, binary files', async () => {
    // ~1.5 MB of 3-byte characters: many network chunks, most of them ending inside a character.
    const line = JSON.stringify({ messages: [{ role: 'user', content: '日本語のテキスト'.repeat(20) }] });
    const text = Buffer.from(`${Array(3000).fill(line).join('\n')}\n`);
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00, 0x80]);
    for (const [name, bytes] of [
      ['train-ja.jsonl', text],
      ['image.png', binary],
    ] as const) {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      const uploaded = await cli(['--json', 'files', 'upload', path, '--purpose', 'vision']);
      expect(uploaded.code, uploaded.stderr).toBe(0);
      const printed = await cli(['files', 'download', uploaded.json().id as string]);
      expect(printed.code, printed.stderr).toBe(0);
      expect(printed.stdoutBytes.equals(bytes), name).toBe(true);
    }
  });
});

describe('gateway batches', () => {
  it('creates a batch from a local JSONL, watches it with a progress bar and downloads its files', async () => {
    const input = join(dir, 'requests.jsonl');
    writeFileSync(
      input,
      jsonl([chatLine('one'), chatLine('two'), chatLine('three', 'broken'), chatLine('four')]),
    );
    const output = join(dir, 'output.jsonl');
    const errors = join(dir, 'errors.jsonl');
    const run = await cli([
      'batches',
      'create',
      input,
      '--config',
      JSON.stringify(target(upstream)),
      '--metadata',
      'team=search',
      '--watch',
      '--interval',
      '50',
      '--output',
      output,
      '--errors',
      errors,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('[##############################] 4/4 100%  failed 1  completed');
    expect(run.stdout).toContain('completed');
    const answered = readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(answered.map((line) => line.custom_id)).toEqual(['one', 'two', 'four']);
    const failed = readFileSync(errors, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(failed.map((line) => line.custom_id)).toEqual(['three']);

    const listed = await cli(['--json', 'batches', 'list', '--limit', '1']);
    expect(listed.json().data[0]).toMatchObject({ status: 'completed', metadata: { team: 'search' } });
    const id = listed.json().data[0].id as string;
    expect((await cli(['batches', 'get', id])).stdout).toContain(id);
    const cancel = await cli(['batches', 'cancel', id]);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain('HTTP 409');
  });

  it('prints the invalid lines of a failed batch, and needs a provider', async () => {
    const input = join(dir, 'invalid.jsonl');
    writeFileSync(input, jsonl([chatLine('a'), { ...chatLine('b'), url: '/v1/embeddings' }]));
    const run = await cli([
      'batches',
      'create',
      input,
      '--config',
      JSON.stringify(target(upstream)),
      '--watch',
      '--interval',
      '50',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('failed');
    expect(run.stdout).toContain('line 2: mismatched_endpoint (url)');

    const noProvider = await cli(['batches', 'create', input]);
    expect(noProvider.code).toBe(1);
    expect(noProvider.stderr).toContain('--config');
  });
});
