/**
 * The `gateway` executable itself, as a shell runs it: output piped into a reader that stops early
 * (`gateway logs list --json | head`) ends the command quietly, as for any command-line tool.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: Server;
let url: string;

beforeAll(async () => {
  // A gateway's answer to GET /v1/logs large enough not to fit in a pipe's buffer.
  const data = Array.from({ length: 2000 }, (_, i) => ({ id: `log_${i}`, request_body: 'x'.repeat(500) }));
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data, has_more: false }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server?.close();
});

describe('gateway, its output closed early', () => {
  it('exits with status 0 and says nothing on stderr', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'logs', 'list', '--json'], {
      env: { ...process.env, GATEWAY_URL: url, GATEWAY_API_KEY: 'gw-some-key-0000000000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Like `head -c 10`: read a little, then close the pipe.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) =>
      child.on('close', (status) => resolve(status)),
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
  }, 30_000);
});
