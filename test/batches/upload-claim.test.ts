/**
 * A gateway file sent to a provider is claimed by the node that sends it (provider-files.ts); another node
 * takes a claim over only once it is stale (10 minutes without news). An honest upload that takes longer
 * keeps its claim fresh while its bytes move, so no other node sends the same file a second time, and the
 * provider's id it gets is remembered. The clock is faked: each chunk of the upload takes four minutes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GatewayDeps } from '../../src/gateway/deps.js';
import { providerCopy } from '../../src/gateway/provider-resources/provider-files.js';
import type { ResourceTarget } from '../../src/gateway/provider-resources/resource-target.js';
import type { UpstreamRequest } from '../../src/providers/types.js';
import { openStore } from '../../src/store/index.js';
import type { StoredFile } from '../../src/store/file-batch-types.js';
import type { Store } from '../../src/store/types.js';

const MINUTE = 60_000;
/** What every node passes as a stale claim's age. */
const STALE_CLAIM_MS = 10 * MINUTE;

let dataDir: string;
let store: Store;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'upload-claim-'));
  store = await openStore({ dataDir, masterKey: randomBytes(32) });
});
afterAll(async () => {
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});
afterEach(() => {
  vi.useRealTimers();
});

const target = {
  adapter: { id: 'openai' },
  account: 'acct',
  target: {},
  resources: { buildRequest: (request: unknown) => request },
} as unknown as ResourceTarget;

describe('a long upload of a file to a provider', () => {
  it('keeps its claim while its bytes move: another node waits rather than sending the file again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const file = {
      id: `file_${randomBytes(6).toString('hex')}`,
      filename: 'in.jsonl',
      bytes: 12,
    } as StoredFile;
    const seenByOtherNode: string[] = [];
    const deps = {
      store,
      settings: {
        fileTransferIdleTimeoutMs: MINUTE,
        defaultRequestTimeoutMs: MINUTE,
        upstreamLimits: { answerBytes: 1 << 20, eventBytes: 1 << 20 },
      },
      blobs: {
        get: () =>
          Promise.resolve(Readable.from(['{"a":1}\n', '{"b":2}\n', '{"c":3}\n'].map((s) => Buffer.from(s)))),
      },
      upstream: {
        async send(request: UpstreamRequest) {
          for await (const chunk of request.body as AsyncIterable<Uint8Array>) {
            void chunk;
            vi.setSystemTime(Date.now() + 4 * MINUTE);
            const other = await store.providerFiles.claim(file.id, target.account, 'openai', STALE_CLAIM_MS);
            seenByOtherNode.push(other.state);
          }
          return {
            statusCode: 200,
            headers: { 'content-type': 'application/json' },
            body: { text: () => Promise.resolve('{"id":"file-abc"}'), destroy: () => undefined },
          };
        },
      },
    } as unknown as GatewayDeps;

    const copy = await providerCopy(deps, target, file, 'batch', 'input_file_id');
    expect(copy).toEqual({ id: 'file-abc', known: false });
    // The upload took some 20 minutes; no other node ever took it over.
    expect(seenByOtherNode.length).toBeGreaterThanOrEqual(4);
    expect(seenByOtherNode.every((state) => state === 'busy')).toBe(true);
    expect(await store.providerFiles.claim(file.id, target.account, 'openai', STALE_CLAIM_MS)).toEqual({
      state: 'known',
      provider_file_id: 'file-abc',
    });
  });

  it('a node waiting for another node that renews its claim waits past the stale age, and gets its id', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const file = {
      id: `file_${randomBytes(6).toString('hex')}`,
      filename: 'in.jsonl',
      bytes: 12,
    } as StoredFile;
    const deps = { store, logger: { warn: () => undefined } } as unknown as GatewayDeps;
    const first = await store.providerFiles.claim(file.id, target.account, 'openai', STALE_CLAIM_MS);
    if (first.state !== 'claimed') throw new Error('not claimed');
    // The other node's upload: its bytes move for 25 minutes, its claim renewed every 4.
    const uploading = (async () => {
      let held = first.claimed_at_ms;
      for (let minute = 1; minute <= 25; minute++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        vi.setSystemTime(Date.now() + MINUTE);
        if (minute % 4 === 0) held = (await store.providerFiles.renew(file.id, target.account, held)) ?? held;
      }
      await store.providerFiles.remember(file.id, target.account, held, 'file-theirs');
    })();
    const copy = await providerCopy(deps, target, file, 'batch', 'input_file_id');
    await uploading;
    expect(copy).toEqual({ id: 'file-theirs', known: true });
  });

  it("a node waiting for another node's upload stops when its own request is gone: 408", async () => {
    const file = {
      id: `file_${randomBytes(6).toString('hex')}`,
      filename: 'in.jsonl',
      bytes: 12,
    } as StoredFile;
    const deps = { store, logger: { warn: () => undefined } } as unknown as GatewayDeps;
    expect((await store.providerFiles.claim(file.id, target.account, 'openai', STALE_CLAIM_MS)).state).toBe(
      'claimed',
    );
    const gone = new AbortController();
    setTimeout(() => gone.abort(), 300);
    await expect(
      providerCopy(deps, target, file, 'batch', 'input_file_id', undefined, gone.signal),
    ).rejects.toMatchObject({ status: 408, code: 'request_timeout', param: 'input_file_id' });
  });

  it('a claim nobody renews is still taken over once stale (its node is gone)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const file = `file_${randomBytes(6).toString('hex')}`;
    const first = await store.providerFiles.claim(file, 'acct', 'openai', STALE_CLAIM_MS);
    expect(first.state).toBe('claimed');
    vi.setSystemTime(Date.now() + 9 * MINUTE);
    expect((await store.providerFiles.claim(file, 'acct', 'openai', STALE_CLAIM_MS)).state).toBe('busy');
    vi.setSystemTime(Date.now() + 2 * MINUTE);
    expect((await store.providerFiles.claim(file, 'acct', 'openai', STALE_CLAIM_MS)).state).toBe('claimed');
  });
});
