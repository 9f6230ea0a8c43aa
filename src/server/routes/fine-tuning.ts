/**
 * `/v1/fine_tuning/jobs`: create, list, get, cancel, pause, resume, events, checkpoints. The provider runs
 * the job (gateway/provider-resources/fine-tuning.ts); the gateway keeps the mapping, so every operation
 * reaches the provider that holds the job and the list shows only this workspace's jobs.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { METADATA_LIMITS } from '../../core/metadata-limits.js';
import type { Operation } from '../../core/operation.js';
import { HEADERS } from '../../gateway/context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import type { NodeStop } from '../../gateway/node-stop.js';
import {
  actOnFineTuningJob,
  createFineTuningJob,
  fineTuningJobCheckpoints,
  fineTuningJobEvents,
  listFineTuningJobs,
  refreshFineTuningJob,
} from '../../gateway/provider-resources/fine-tuning.js';
import type { StoredFineTuningJob } from '../../store/provider-job-types.js';
import { CreateFineTuningJobBody, validateCreateFineTuningJob } from './fine-tuning-body.js';
import { notFound, pathParam } from './management/route-helpers.js';
import { afterCursor, deepObjectQuery, integerQuery, type Query } from './query-params.js';

/** Most jobs one page of the list holds; `has_more` says there are others. */
const MAX_JOBS_PAGE = 100;

/** Each list's page size when the query leaves `limit` out (the interface's: jobs 20, checkpoints 10). */
const DEFAULT_LIMIT = { jobs: 20, events: 20, checkpoints: 10 } as const;

/** A job's metadata limits (core/metadata-limits.ts), which a filter cannot exceed either. */
const FILTER_LIMITS = {
  maxKeys: METADATA_LIMITS.pairs,
  maxKeyLength: METADATA_LIMITS.keyLength,
  maxValueLength: METADATA_LIMITS.valueLength,
};

export async function registerFineTuningRoutes(
  app: FastifyInstance,
  deps: GatewayDeps,
  stop: NodeStop,
): Promise<void> {
  async function jobOf(request: FastifyRequest): Promise<StoredFineTuningJob> {
    const id = pathParam(request.params, 'jobId');
    const job = await deps.store.fineTuningJobs.get(request.gw.apiKey.workspace_id, id);
    if (!job) throw notFound('fine-tuning job', id, 'fine_tuning_job_id');
    return job;
  }

  /** `limit` and `after` of a list. OpenAI sets `limit` no maximum: any positive one is taken (the job list
   * answers at most MAX_JOBS_PAGE of them a page; events and checkpoints pass it to the provider). */
  function page(request: FastifyRequest, defaultLimit: number) {
    const query = request.query as Query;
    const after = afterCursor(query);
    return {
      limit: integerQuery(query, 'limit', 1, Number.MAX_SAFE_INTEGER, defaultLimit),
      ...(after !== undefined && { after }),
    };
  }

  app.post('/fine_tuning/jobs', async (request) => {
    const body = validateCreateFineTuningJob(request.body);
    const { gw } = request;
    // Held by the node's stop: an upload of the job's files it cuts gives its claim back before the store
    // closes, so that a retry on another node sends the file at once.
    return stop.hold(
      createFineTuningJob(
        deps,
        { apiKey: gw.apiKey, headers: gw.headers, metadata: gw.metadata, traceId: gw.traceId },
        body,
        gw.signal,
        stop.signal,
      ),
    );
  });

  app.get('/fine_tuning/jobs', async (request) => {
    const metadata = deepObjectQuery(request.query as Query, 'metadata', FILTER_LIMITS);
    const { limit, ...after } = page(request, DEFAULT_LIMIT.jobs);
    return listFineTuningJobs(deps, request.gw.apiKey.workspace_id, {
      ...after,
      // Each job not yet finished is read from its provider as the page is answered.
      limit: Math.min(limit, MAX_JOBS_PAGE),
      ...(metadata !== undefined && { metadata }),
    });
  });

  // Under the request's signal: a client that goes away cuts the call to the provider.
  app.get('/fine_tuning/jobs/:jobId', async (request) =>
    refreshFineTuningJob(deps, await jobOf(request), request.gw.signal),
  );

  for (const action of ['cancel', 'pause', 'resume'] as const) {
    app.post(`/fine_tuning/jobs/:jobId/${action}`, async (request) =>
      actOnFineTuningJob(deps, await jobOf(request), action, request.gw.signal),
    );
  }

  // A job's lists; one cut short says so (fine-tuning.ts: JobListPage).
  const lists = [
    ['events', fineTuningJobEvents, DEFAULT_LIMIT.events],
    ['checkpoints', fineTuningJobCheckpoints, DEFAULT_LIMIT.checkpoints],
  ] as const;
  for (const [name, read, defaultLimit] of lists) {
    app.get(`/fine_tuning/jobs/:jobId/${name}`, async (request, reply) => {
      const job = await jobOf(request);
      const { list, truncated } = await read(deps, job, page(request, defaultLimit), request.gw.signal);
      if (truncated) void reply.header(HEADERS.listTruncated, 'true');
      return list;
    });
  }
}

const jobId = [
  { name: 'fine_tuning_job_id', in: 'path' as const, required: true, schema: { type: 'string' } },
];
function paging(defaultLimit: number) {
  return [
    { name: 'after', in: 'query' as const, schema: { type: 'string' } },
    { name: 'limit', in: 'query' as const, schema: { type: 'integer', minimum: 1, default: defaultLimit } },
  ];
}

/** For the OpenAPI document (shapes: OpenAI's). */
export const FINE_TUNING_OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/fine_tuning/jobs',
    summary: "Create a fine-tuning job on the provider the request's routing names (its first target)",
    tags: ['Fine-tuning'],
    requestBody: CreateFineTuningJobBody,
  },
  {
    method: 'get',
    path: '/fine_tuning/jobs',
    summary:
      "List the workspace's fine-tuning jobs, newest first (limit default 20; after; metadata[k]=v, or metadata=null)",
    tags: ['Fine-tuning'],
    parameters: [
      ...paging(DEFAULT_LIMIT.jobs),
      {
        name: 'metadata',
        in: 'query' as const,
        style: 'deepObject' as const,
        explode: true,
        schema: { type: 'object', additionalProperties: { type: 'string' } },
        description:
          'Only the jobs with each of these metadata pairs (`metadata[k]=v`); `metadata=null`: only those without metadata.',
      },
    ],
  },
  {
    method: 'get',
    path: '/fine_tuning/jobs/{fine_tuning_job_id}',
    summary: 'Get a fine-tuning job',
    tags: ['Fine-tuning'],
    parameters: jobId,
  },
  {
    method: 'post',
    path: '/fine_tuning/jobs/{fine_tuning_job_id}/cancel',
    summary: 'Cancel a fine-tuning job',
    tags: ['Fine-tuning'],
    parameters: jobId,
  },
  {
    method: 'post',
    path: '/fine_tuning/jobs/{fine_tuning_job_id}/pause',
    summary: 'Pause a fine-tuning job (OpenAI, Azure OpenAI)',
    tags: ['Fine-tuning'],
    parameters: jobId,
  },
  {
    method: 'post',
    path: '/fine_tuning/jobs/{fine_tuning_job_id}/resume',
    summary: 'Resume a paused fine-tuning job',
    tags: ['Fine-tuning'],
    parameters: jobId,
  },
  {
    method: 'get',
    path: '/fine_tuning/jobs/{fine_tuning_job_id}/events',
    summary: "A fine-tuning job's events (limit default 20; after)",
    tags: ['Fine-tuning'],
    parameters: [...jobId, ...paging(DEFAULT_LIMIT.events)],
  },
  {
    method: 'get',
    path: '/fine_tuning/jobs/{fine_tuning_job_id}/checkpoints',
    summary: "A fine-tuning job's checkpoints (limit default 10; after)",
    tags: ['Fine-tuning'],
    parameters: [...jobId, ...paging(DEFAULT_LIMIT.checkpoints)],
  },
];
