/**
 * The lines of a provider batch in the request log, once the batch has ended: one record per line of its
 * output and error files (as copied into the gateway's file store), under the trace and metadata of the
 * request that created the batch, with the model, status and usage of the line's answer and its cost at
 * the provider's batch price (`batch_discount` of the price table, docs/cost.md). Written after the
 * batch's final state is committed, through the batched log writer: a node that dies in between leaves
 * the lines unrecorded rather than recorded twice.
 */
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type { Usage } from '../../core/openai-types.js';
import { longerThan, METADATA_LIMITS } from '../../core/metadata-limits.js';
import { usageCost } from '../../observability/pricing/cost.js';
import type { BatchCall, StoredBatch } from '../../store/file-batch-types.js';
import { batchEndpoint } from '../batches/batch-endpoints.js';
import { fileKey } from '../batches/batch-phases.js';
import { newSpanId } from '../context.js';
import type { GatewayDeps } from '../deps.js';
import { buildLogRecord, type RecordContext } from '../log-record.js';

interface BatchLine {
  custom_id?: string;
  response?: {
    status_code?: number;
    body?: { model?: unknown; usage?: Usage; error?: { code?: unknown; message?: unknown } };
  } | null;
  error?: { code?: unknown; message?: unknown } | null;
}

/** The error codes of the lines a batch never ran, as it expired or was cancelled first: no call was made,
 * so none is recorded (a managed batch records none for them either). */
const NEVER_RAN = new Set(['batch_expired', 'batch_cancelled']);

export async function logProviderBatchLines(
  deps: GatewayDeps,
  batch: StoredBatch,
  call: BatchCall,
  provider: string,
  fileIds: readonly string[],
): Promise<void> {
  const endpoint = batchEndpoint(batch.endpoint)?.kind ?? batch.endpoint;
  const ctx: RecordContext = {
    apiKey: call.caller,
    traceId: call.trace_id,
    spanId: newSpanId(),
    parentSpanId: null,
    spanName: null,
    startedAt: performance.now(),
    startedAtMs: Date.now(),
    metadata: call.metadata,
  };
  for (const id of fileIds) {
    const content = await deps.blobs.get(fileKey(id));
    if (!content) continue;
    for await (const text of createInterface({ input: content, crlfDelay: Infinity })) {
      if (text.trim() === '') continue;
      let line: BatchLine;
      try {
        line = JSON.parse(text) as BatchLine;
      } catch {
        continue;
      }
      if (!line.response && typeof line.error?.code === 'string' && NEVER_RAN.has(line.error.code)) continue;
      const body = line.response?.body;
      const model = typeof body?.model === 'string' ? body.model : null;
      const usage = body?.usage && typeof body.usage.prompt_tokens === 'number' ? body.usage : undefined;
      const match = model ? deps.prices.lookup(provider, model) : undefined;
      const status = line.response?.status_code ?? 500;
      const error = line.error ?? body?.error;
      deps.logWriter.enqueue(
        buildLogRecord(
          {
            ...ctx,
            spanId: newSpanId(),
            parentSpanId: ctx.spanId,
            metadata: {
              ...call.metadata,
              batch_id: batch.id,
              // A custom_id longer than a metadata value may be is left out, as a managed batch's line's.
              ...(typeof line.custom_id === 'string' &&
                !longerThan(line.custom_id, METADATA_LIMITS.valueLength) && { custom_id: line.custom_id }),
            },
          },
          {
            endpoint,
            method: 'POST',
            path: batch.endpoint,
            status,
            provider,
            model,
            target: null,
            stream: false,
            isAttempt: false,
            ttfbMs: null,
            usage,
            cost: status >= 400 ? 0 : usage && match ? usageCost(match, usage, { tier: 'batch' }) : null,
            cacheStatus: null,
            retryCount: 0,
            errorCode: error && typeof error.code === 'string' ? error.code : null,
            errorMessage: error && typeof error.message === 'string' ? error.message : null,
            requestBody: null,
            responseBody: null,
            endedAt: ctx.startedAt,
          },
        ),
      );
    }
  }
}
