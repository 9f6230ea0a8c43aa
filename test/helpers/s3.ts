/**
 * An S3-compatible server for tests: `s3rver` in this process, on loopback, on a free port, in a temporary
 * directory, with one bucket. `env` is what a gateway needs to keep its files there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// s3rver ships no types.
// eslint-disable-next-line @typescript-eslint/ban-ts-comment
// @ts-ignore
import S3rver from 's3rver';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  env: Record<string, string>;
  close(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}

export async function startS3(bucket = 'gateway-files'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'gateway-s3-'));
  const Server = S3rver as unknown as new (options: Record<string, unknown>) => S3rverInstance;
  const server = new Server({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: {
      GATEWAY_S3_BUCKET: bucket,
      GATEWAY_S3_ENDPOINT: endpoint,
      GATEWAY_S3_REGION: 'us-east-1',
      GATEWAY_S3_ACCESS_KEY_ID: 'S3RVER',
      GATEWAY_S3_SECRET_ACCESS_KEY: 'S3RVER',
      GATEWAY_S3_PREFIX: 'gateway/',
    },
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
