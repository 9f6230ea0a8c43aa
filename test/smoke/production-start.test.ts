/**
 * The production build as a user starts it (the command of `npm start`, flags included): health, the
 * first-start admin key printed once, a chat completion through the official SDK, and the web console.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCommand } from '../../scripts/start-command.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { freePort } from '../helpers/free-port.js';

const root = resolve(import.meta.dirname, '../..');
const entry = resolve(root, 'dist/main.js');

/** `npm start`'s arguments to node (package.json), run from the repository root. */
function startArguments(): string[] {
  const { command, args } = startCommand(root);
  expect(command).toBe('node');
  expect(args.at(-1)).toBe('dist/main.js');
  return args;
}

interface Started {
  child: ChildProcess;
  output: () => string;
  origin: string;
}

async function startBuilt(dataDir: string, env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, startArguments(), {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr?.on('data', (data: Buffer) => (output += data.toString()));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${origin}/health`);
      if (response.status === 200) return { child, output: () => output, origin };
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`gateway exited: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`gateway did not become healthy: ${output}`);
}

async function stop(started: Started): Promise<number | null> {
  started.child.kill('SIGTERM');
  return new Promise((r) => started.child.once('exit', (code) => r(code)));
}

describe.runIf(existsSync(entry))('production build', () => {
  let fake: FakeUpstream;
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-smoke-'));

  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'smoke' });
  });
  afterAll(async () => {
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts, prints a first admin key once, answers through the SDK, and stops cleanly', async () => {
    const first = await startBuilt(dataDir);
    const key = /Admin API key \(shown once, keep it safe\): (\S+)/.exec(first.output())?.[1];
    expect(key).toMatch(/^gw-/);
    const client = new OpenAI({
      baseURL: `${first.origin}/v1`,
      apiKey: 'sk-smoke',
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': key!,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': fake.url,
      },
    });
    const answer = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'smoke' }],
    });
    expect(answer.choices[0].message.content).toBe('[smoke] smoke');
    expect(await stop(first)).toBe(0);

    // The second start reuses the store: no new key is printed, the old one still works.
    const second = await startBuilt(dataDir);
    expect(second.output()).not.toContain('Admin API key');
    const health = await fetch(`${second.origin}/v1/logs`, { headers: { 'x-gateway-api-key': key! } });
    expect(health.status).toBe(200);
    const logs = (await health.json()) as { data: unknown[] };
    expect(logs.data.length).toBeGreaterThan(0);
    // The build includes the web console, served from dist/console.
    const consolePage = await fetch(`${second.origin}/console/logs`);
    expect(consolePage.status).toBe(200);
    expect(await consolePage.text()).toContain('<div id="root"></div>');
    expect(await stop(second)).toBe(0);
  });
});

describe.runIf(!existsSync(entry))('production build (missing)', () => {
  it.skip('dist/main.js is not built: run `npm run build` (npm ci does it)', () => {});
});
