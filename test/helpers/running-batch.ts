/**
 * A managed batch in a store of its own organisation and workspace, its `lines` stored and the batch
 * `in_progress`: what the batch worker claims lines of, set up without the files and validation before it.
 */
import type { Store } from '../../src/store/types.js';

export async function runningBatch(store: Store, lines: number, name: string) {
  const org = await store.createOrganisation({ name });
  const workspace = await store.createWorkspace({
    organisation_id: org.id,
    name: name.slice(0, 1),
    slug: name.slice(0, 1).toLowerCase(),
  });
  // The batch's lines run as this key, which must still be active for them to run.
  const { key } = await store.createApiKey({
    organisation_id: org.id,
    workspace_id: workspace.id,
    name,
    role: 'admin',
    expires_at: null,
    metadata: {},
  });
  const batch = await store.batches.create({
    workspace_id: workspace.id,
    endpoint: '/v1/chat/completions',
    input_file_id: 'file-x',
    completion_window: 'immediate',
    metadata: null,
    concurrency: null,
    expires_at: Math.floor(Date.now() / 1000) + 3600,
    call: {
      caller: { id: key.id, organisation_id: org.id, workspace_id: workspace.id },
      headers: {},
      metadata: {},
      trace_id: 't',
    },
  });
  await store.batches.insertLines(
    batch.id,
    Array.from({ length: lines }, (_, i) => ({ line: i, custom_id: `c-${i}`, body: '{}' })),
  );
  await store.batches.update(batch.id, { status: 'in_progress', total: lines });
  return batch;
}
