/**
 * `/v1/batches`, managed by the gateway (`completion_window: "immediate"`): create (the batch records the
 * provider-selection headers of this request, encrypted, and its lines run under them), list, get and
 * cancel. The work is done by each node's batch worker (gateway/batches/); this file only reads and
 * changes the batch's row. A `24h` batch runs on the provider's Batch API
 * (gateway/provider-resources/provider-batches.ts): its row mirrors the provider's batch.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../core/errors.js';
import { VALIDATE_JOB } from '../../gateway/batches/batch-phases.js';
import { HEADERS, readStrictCompat } from '../../gateway/context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import { bearerToken, namesProvider, resolveRequestConfig } from '../../gateway/request-config.js';
import { resolveTarget } from '../../gateway/resolve-target.js';
import {
  cancelProviderBatch,
  createProviderBatch,
} from '../../gateway/provider-resources/provider-batches.js';
import { gatewayFileOf } from '../../gateway/provider-resources/provider-files.js';
import { capturedHeaders } from '../../gateway/provider-resources/stored-call.js';
import { formatCost } from '../../observability/pricing/cost.js';
import type { StoredBatch } from '../../store/file-batch-types.js';
import { validateCreateBatch } from './batch-body.js';
import { BATCH_LIST } from './file-batch-operations.js';
import { notFound, pathParam } from './management/route-helpers.js';
import { afterCursor, integerQuery, listObject, type Query } from './query-params.js';

const EXPIRY_SECONDS = 24 * 60 * 60;

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_body', message, { param });
}

export async function registerBatchRoutes(
  app: FastifyInstance,
  deps: GatewayDeps,
  batchesChanged: () => void,
): Promise<void> {
  const { store } = deps;

  /** The batch object: its counts and usage are kept on its row as its lines settle. */
  function batchView(batch: StoredBatch) {
    return {
      id: batch.id,
      object: 'batch' as const,
      endpoint: batch.endpoint,
      errors: batch.errors ? { object: 'list', data: batch.errors } : null,
      input_file_id: batch.input_file_id,
      completion_window: batch.completion_window,
      status: batch.status,
      output_file_id: batch.output_file_id,
      error_file_id: batch.error_file_id,
      created_at: batch.created_at,
      in_progress_at: batch.in_progress_at,
      expires_at: batch.expires_at,
      finalizing_at: batch.finalizing_at,
      completed_at: batch.completed_at,
      failed_at: batch.failed_at,
      expired_at: batch.expired_at,
      cancelling_at: batch.cancelling_at,
      cancelled_at: batch.cancelled_at,
      request_counts: { total: batch.total, completed: batch.completed, failed: batch.failed },
      usage: batch.usage,
      metadata: batch.metadata,
    };
  }

  async function batchOf(request: FastifyRequest): Promise<StoredBatch> {
    const id = pathParam(request.params, 'batchId');
    const batch = await store.batches.get(request.gw.apiKey.workspace_id, id);
    if (!batch) throw notFound('batch', id, 'batch_id');
    return batch;
  }

  app.post('/batches', async (request) => {
    const input = validateCreateBatch(request.body);
    const { apiKey } = request.gw;
    if (input.completion_window === '24h') {
      // A gateway file is checked here and sent to the provider by the submission; any other id is the
      // provider's own file (uploaded with `x-gateway-files: provider`), passed on as a fine-tuning job's is.
      await gatewayFileOf(deps, apiKey.workspace_id, input.input_file_id, 'batch', 'input_file_id');
      const { gw } = request;
      const batch = await createProviderBatch(
        deps,
        { apiKey, headers: gw.headers, metadata: gw.metadata, traceId: gw.traceId },
        {
          endpoint: input.endpoint,
          input_file_id: input.input_file_id,
          metadata: input.metadata ?? null,
          output_expires_after: input.output_expires_after?.seconds ?? null,
        },
      );
      batchesChanged();
      return batchView(batch);
    }
    // A managed batch's lines are read by the gateway: its input is a gateway file.
    const file = await store.files.get(apiKey.workspace_id, input.input_file_id);
    if (!file) throw notFound('file', input.input_file_id, 'input_file_id');
    if (file.purpose !== 'batch') {
      throw invalid(
        'input_file_id',
        `File ${file.id} was uploaded with purpose "${file.purpose}", not "batch"`,
      );
    }
    // The lines will run under these headers: refuse now what would fail every line — a malformed
    // header, a config that does not resolve, and a config of one target whose provider, virtual key or
    // host cannot be used.
    // Headers that name no provider leave it to each line's body `model` (`@<provider_slug>/<model>`),
    // as a direct call's: the validation refuses a line whose model names none.
    readStrictCompat(request.headers);
    if (namesProvider(request.headers)) {
      const { config } = await resolveRequestConfig(request.headers, apiKey.workspace_id, deps.lookups);
      if (!config.targets?.length) {
        await resolveTarget(
          config,
          '',
          apiKey.workspace_id,
          bearerToken(request.headers),
          deps.lookups,
          deps.settings.customHostPolicy,
        );
      }
    }
    const headers = capturedHeaders(request.headers);
    const now = Math.floor(Date.now() / 1000);
    const batch = await store.transaction(async (tx) => {
      const created = await tx.batches.create({
        workspace_id: apiKey.workspace_id,
        endpoint: input.endpoint,
        input_file_id: file.id,
        completion_window: 'immediate',
        metadata: input.metadata ?? null,
        concurrency: input.concurrency ?? null,
        expires_at: now + EXPIRY_SECONDS,
        output_expires_after: input.output_expires_after?.seconds ?? null,
        call: {
          caller: {
            id: apiKey.id,
            organisation_id: apiKey.organisation_id,
            workspace_id: apiKey.workspace_id,
          },
          headers,
          metadata: request.gw.metadata,
          trace_id: request.gw.traceId,
        },
      });
      await tx.jobs.enqueue({
        kind: VALIDATE_JOB,
        workspace_id: apiKey.workspace_id,
        payload: { batch_id: created.id },
        max_attempts: 5,
      });
      return created;
    });
    batchesChanged();
    return batchView(batch);
  });

  app.get('/batches', async (request) => {
    const query = request.query as Query;
    const limit = integerQuery(query, 'limit', 1, BATCH_LIST.maxLimit, BATCH_LIST.defaultLimit);
    const after = afterCursor(query);
    const page = await store.batches.list(request.gw.apiKey.workspace_id, { limit, after });
    return listObject(page.data.map(batchView), page.has_more);
  });

  /** A managed batch's answer says what its lines cost so far, as a call's answer does (a provider
   * batch's lines are priced into the log once it has ended). */
  function withCost(reply: FastifyReply, batch: StoredBatch) {
    if (batch.completion_window === 'immediate' && batch.cost !== null) {
      void reply.header(HEADERS.cost, formatCost(batch.cost));
    }
    return batchView(batch);
  }

  app.get('/batches/:batchId', async (request, reply) => withCost(reply, await batchOf(request)));

  app.post('/batches/:batchId/cancel', async (request) => {
    const batch = await batchOf(request);
    if (batch.status === 'cancelling' || batch.status === 'cancelled') return batchView(batch);
    if (batch.completion_window === '24h') {
      const cancelled = await cancelProviderBatch(deps, batch);
      batchesChanged();
      return batchView(cancelled);
    }
    // A finished batch is refused for what it is: one that completed or failed a day ago is past its
    // expiry too, but it did not expire.
    if (batch.status !== 'validating' && batch.status !== 'in_progress') {
      throw new GatewayError('conflict', `A batch that is ${batch.status} cannot be cancelled`, {
        param: 'batch_id',
      });
    }
    // Past its expiry a batch is ending as `expired` (its status stays `in_progress` until the worker has
    // finalized it): a cancel is refused as for a finished batch, rather than answered `cancelling`.
    const now = Math.floor(Date.now() / 1000);
    if (batch.expires_at !== null && batch.expires_at <= now) {
      throw new GatewayError('conflict', 'A batch that has expired cannot be cancelled', {
        param: 'batch_id',
      });
    }
    const cancelled = await store.batches.update(batch.id, { status: 'cancelling', cancelling_at: now }, [
      'validating',
      'in_progress',
    ]);
    if (!cancelled) {
      const current = (await store.batches.getById(batch.id)) ?? batch;
      // Another cancel (a retry, through this node or another) changed it first: answered as a second one.
      if (current.status === 'cancelling' || current.status === 'cancelled') return batchView(current);
      throw new GatewayError('conflict', `A batch that is ${current.status} cannot be cancelled`, {
        param: 'batch_id',
      });
    }
    batchesChanged();
    return batchView(cancelled);
  });
}
