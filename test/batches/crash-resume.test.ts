/**
 * A gateway process SIGKILLed in the middle of a batch loses nothing: restarted on the same data
 * directory, it takes the batch up again once the dead process's line leases run out; every line appears
 * exactly once in the output, and no line whose answer was committed before the kill is sent upstream
 * again (the fake counts the requests of each line). The gateway runs as a real child process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { freePort } from '../helpers/free-port.js';
import {
  chatLine,
  contentLines,
  createBatch,
  finished,
  jsonl,
  sdk,
  target,
  upload,
  waitFor,
  SLOW_TEST_MS,
} from './support.js';

const root = resolve(import.meta.dirname, '../..');
const LINES = 300;

let upstream: FakeUpstream;
let dataDir: string;
let child: ChildProcess | undefined;
const adminKey = `gw-crash-${randomBytes(12).toString('hex')}`;
const masterKey = randomBytes(32).toString('hex');

/** Starts `src/main.ts` in a child process and waits until it answers /health. */
async function startNode(port: number): Promise<ChildProcess> {
  const node = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_KEY: adminKey,
      GATEWAY_MASTER_KEY: masterKey,
      DATABASE_URL: '',
      REDIS_URL: '',
      LOG_LEVEL: 'silent',
      GATEWAY_BATCH_LEASE_MS: '1000',
      GATEWAY_BATCH_POLL_MS: '50',
      GATEWAY_BATCH_CONCURRENCY: '8',
    },
  });
  let stderr = '';
  node.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (node.exitCode !== null) throw new Error(`the gateway exited: ${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`)
      .then((res) => res.ok)
      .catch(() => false);
    if (ok) return node;
    await new Promise((done) => setTimeout(done, 100));
  }
  node.kill('SIGKILL');
  throw new Error(`the gateway did not start: ${stderr}`);
}

function kill(node: ChildProcess): Promise<void> {
  return new Promise((done) => {
    node.once('exit', () => done());
    node.kill('SIGKILL');
  });
}

/** The lines whose results the store had committed: read from the SQLite file itself. */
function committedLines(batchId: string): string[] {
  const db = new Database(join(dataDir, 'gateway.db'), { readonly: true });
  try {
    const rows = db
      .prepare("select custom_id from batch_lines where batch_id = ? and state in ('succeeded', 'failed')")
      .all(batchId) as Array<{ custom_id: string }>;
    return rows.map((row) => row.custom_id);
  } finally {
    db.close();
  }
}

/** Requests the fake received per line (each line's message is its custom_id). */
function upstreamCalls(): Map<string, number> {
  const calls = new Map<string, number>();
  for (const request of upstream.requests) {
    const body = request.body as { messages: Array<{ content: string }> };
    const id = body.messages[0].content;
    calls.set(id, (calls.get(id) ?? 0) + 1);
  }
  return calls;
}

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'crash', latencyMs: 20 });
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-crash-'));
});

afterAll(async () => {
  if (child && child.exitCode === null) await kill(child);
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a gateway killed mid-batch', () => {
  it(
    'resumes on restart with no line lost, duplicated or answered twice',
    async () => {
      const port = await freePort();
      child = await startNode(port);
      const client = sdk(`http://127.0.0.1:${port}/v1`, adminKey, target(upstream));
      const lines = Array.from({ length: LINES }, (_, i) => chatLine(`line-${i}`));
      const file = await upload(client, jsonl(lines));
      const created = await createBatch(client, file.id);
      await waitFor(client, created.id, (batch) => (batch.request_counts?.completed ?? 0) >= 60);

      await kill(child);
      const committed = committedLines(created.id);
      expect(committed.length).toBeGreaterThanOrEqual(60);
      expect(committed.length).toBeLessThan(LINES);

      child = await startNode(port);
      const batch = await waitFor(client, created.id, finished, SLOW_TEST_MS - 10_000);
      expect(batch.status).toBe('completed');
      expect(batch.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });

      const output = await contentLines(client, batch.output_file_id);
      expect(output.map((line) => line.custom_id)).toEqual(lines.map((line) => line.custom_id));

      const calls = upstreamCalls();
      for (const id of committed) expect(calls.get(id), `${id} was answered before the kill`).toBe(1);
      for (const line of lines) expect(calls.get(line.custom_id), line.custom_id).toBeGreaterThanOrEqual(1);
      // Only the lines in flight at the kill (at most the concurrency) were sent twice.
      const repeated = [...calls.values()].filter((count) => count > 1).length;
      expect(repeated).toBeLessThanOrEqual(8);
    },
    SLOW_TEST_MS,
  );
});
