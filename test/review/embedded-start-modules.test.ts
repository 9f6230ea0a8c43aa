/**
 * A single-node gateway on its embedded store never loads the clients of what it does not use: the
 * PostgreSQL driver, the Redis client, Google's auth library (Vertex service accounts) and the AWS signer
 * (Bedrock), the S3 client (files on S3-compatible storage). Each is loaded where it is first needed; at start they cost about 17 MB of memory together.
 * Run in a child process, so the modules this test runner itself loaded do not count.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

const SCRIPT = `
import { createRequire } from 'node:module';
const { createGatewayServer } = await import(process.env.ROOT + '/src/gateway-server.ts');
const { loadSettings } = await import(process.env.ROOT + '/src/settings.ts');
const server = await createGatewayServer(loadSettings());
await server.listen();
const cache = createRequire(import.meta.url).cache;
const packages = new Set();
for (const file of Object.keys(cache)) {
  const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file);
  if (match) packages.add(match[1]);
}
await server.close();
console.log(JSON.stringify([...packages]));
`;

describe('an embedded gateway at start', () => {
  it('has not loaded the PostgreSQL, Redis, Google auth or AWS signing clients', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gateway-modules-'));
    try {
      // A file, not `-e` with --input-type=module: worker threads inherit the flags, and the log thread's
      // script is CommonJS.
      const script = join(dataDir, 'probe.mjs');
      writeFileSync(script, SCRIPT);
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], {
        cwd: root,
        timeout: 60_000,
        env: {
          ...process.env,
          ROOT: root,
          PORT: '0',
          HOST: '127.0.0.1',
          GATEWAY_DATA_DIR: dataDir,
          LOG_LEVEL: 'warn',
          DATABASE_URL: '',
          REDIS_URL: '',
        },
      });
      const loaded = JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as string[];
      // The probe sees CommonJS packages: fastify being there shows it works.
      expect(loaded).toContain('fastify');
      for (const name of [
        'pg',
        'ioredis',
        'google-auth-library',
        '@smithy/signature-v4',
        '@aws-sdk/client-s3',
      ]) {
        expect(loaded, `${name} is loaded at start`).not.toContain(name);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
