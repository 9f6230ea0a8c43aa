/**
 * Files list newest first by when they were created, then by id, and page by a file id in either order:
 * a batch's result files are named after the batch, so their ids do not sort by creation time.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { resultFileIds } from '../../src/gateway/batches/batch-phases.js';
import { newId } from '../../src/store/ids.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';

let dataDir: string;
let store: Store;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'files-order-'));
  store = await openStore({ dataDir, masterKey: randomBytes(32) });
});

afterEach(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it('lists by creation time whatever the ids, and pages through them both ways', async () => {
  const org = await store.createOrganisation({ name: 'Files' });
  const workspace = await store.createWorkspace({ organisation_id: org.id, name: 'F', slug: 'f' });
  const t0 = Date.now();
  const file = (id: string, createdAt: number) =>
    store.files.create({
      id,
      workspace_id: workspace.id,
      purpose: 'batch',
      filename: `${id}.jsonl`,
      bytes: 1,
      line_count: 1,
      created_at: createdAt,
    });
  // A batch made first, an upload after it, then (later still) the batch's output file.
  const batchId = newId('batch', t0);
  const upload = await file(newId('file', t0 + 1_000), Math.floor(t0 / 1000) + 1);
  const output = await file(resultFileIds(batchId).output, Math.floor(t0 / 1000) + 5);
  const upload2 = await file(newId('file', t0 + 2_000), Math.floor(t0 / 1000) + 5);
  // The two of the same second by id; the output's id sorts before the first upload's.
  expect(upload2.id > output.id && output.id < upload.id).toBe(true);
  const newestFirst = [upload2.id, output.id, upload.id];

  const all = await store.files.list(workspace.id, { limit: 10, order: 'desc' });
  expect(all.data.map((f) => f.id)).toEqual(newestFirst);
  const asc = await store.files.list(workspace.id, { limit: 10, order: 'asc' });
  expect(asc.data.map((f) => f.id)).toEqual([...newestFirst].reverse());

  for (const order of ['desc', 'asc'] as const) {
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.files.list(workspace.id, { limit: 1, order, after });
      seen.push(...page.data.map((f) => f.id));
      if (!page.has_more) break;
      after = page.data.at(-1)!.id;
    }
    expect(seen).toEqual(order === 'desc' ? newestFirst : [...newestFirst].reverse());
  }
});
