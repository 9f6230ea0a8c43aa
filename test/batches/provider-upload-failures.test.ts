/**
 * Provider batches whose provider cannot be reached, on S3-compatible storage: the first try of each
 * submission opens the input file in the blob storage to send it, and the send fails before the file is
 * read. The blob's download must be given back all the same: S3's client has 50 sockets, and a download
 * left unread holds one for good, so once 50 such tries had failed every read and write of the gateway's
 * files hung (the submissions too, their batches left validating).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toFile } from 'openai';
import { freePort } from '../helpers/free-port.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { chatLine, finished, jsonl, sdk, SLOW_TEST_MS, upload, waitFor } from './support.js';

describe('provider batches whose provider cannot be reached, on S3-compatible storage', () => {
  let s3: TestS3;
  let gateway: TestGateway;

  beforeAll(async () => {
    s3 = await startS3();
    gateway = await startGateway({ env: { ...s3.env, GATEWAY_BATCH_POLL_MS: '10' } });
  });
  afterAll(async () => {
    await gateway?.close();
    await s3?.close();
  });

  it(
    'gives back the input opened for each failed upload: the files stay readable after 55 of them',
    async () => {
      const unreachable = {
        provider: 'openai',
        api_key: 'sk-gone',
        custom_host: `http://127.0.0.1:${await freePort()}/v1`,
      };
      const client = sdk(gateway.url, gateway.adminKey, unreachable);
      // A client with a deadline of its own, so that a read that hangs fails the test rather than time it out.
      const reader = sdk(gateway.url, gateway.adminKey).withOptions({ timeout: 10_000 });
      // Larger than what S3 sends with its answer's head: the download stays open until it is read.
      const text = jsonl([chatLine('u-1', 'gpt-4o-mini', 'x'.repeat(300_000)), chatLine('u-2')]);
      const input = await upload(client, text);
      // The first try of each submission uploads the input; the later ones look for the batch it made.
      const batches = [];
      for (let i = 0; i < 55; i++) {
        batches.push(
          await client.batches.create({
            input_file_id: input.id,
            endpoint: '/v1/chat/completions',
            completion_window: '24h',
          }),
        );
      }
      const deadline = Date.now() + SLOW_TEST_MS - 20_000;
      for (const batch of batches) {
        const done = await waitFor(reader, batch.id, finished, Math.max(deadline - Date.now(), 0));
        expect(done.status).toBe('failed');
        expect(done.errors?.data?.[0]?.code).toBe('provider_unreachable');
      }
      expect(await (await reader.files.content(input.id)).text()).toBe(text);
      const another = await reader.files.create({
        file: await toFile(Buffer.from('still here'), 'after.txt'),
        purpose: 'assistants',
      });
      expect(await (await reader.files.content(another.id)).text()).toBe('still here');
    },
    SLOW_TEST_MS,
  );
});
