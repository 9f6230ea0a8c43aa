/**
 * Fine-tuning jobs, run by the provider the request's routing names (resource-target.ts): the gateway
 * sends the job to the provider's fine-tuning API (its training and validation files first, when they are
 * gateway files: provider-files.ts), keeps a row that maps its own job id to the provider's (with the
 * provider's object as last seen), and answers every read with the provider's object under the gateway's
 * ids. Retrieve, cancel, events and checkpoints go to the provider that holds the job.
 */
import { randomInt } from 'node:crypto';
import { CallAbort, type AbortSignalLike } from '../../core/abort.js';
import { GatewayError, ProviderError } from '../../core/errors.js';
import { METADATA_LIMITS } from '../../core/metadata-limits.js';
import { newId } from '../../store/ids.js';
import {
  FINISHED_FINE_TUNING_STATUSES,
  type FineTuningJobQuery,
  type StoredFineTuningJob,
} from '../../store/provider-job-types.js';
import type { GatewayDeps } from '../deps.js';
import { createWithCopies, gatewayFileOf, type FileToSend } from './provider-files.js';
import { ListOrder } from './list-order.js';
import { newestFirstPage } from './newest-first-list.js';
import { callResource, jsonBody, listPages, pageQuery } from './resource-client.js';
import { resourceTarget, type ResourceTarget } from './resource-target.js';
import { storedCallOf, type CallOrigin } from './stored-call.js';

const FILE_FIELDS = ['training_file', 'validation_file'] as const;

/** The metadata key that names the gateway's job on the provider's (where it keeps metadata). */
export const GATEWAY_JOB_KEY = 'gateway_job_id';
/** Pages of the account's newest jobs read to find the job a create whose answer was lost made. */
const MAX_SEARCH_PAGES = 10;
/** How far the provider's clock may run behind ours when telling jobs older than ours apart. */
const CLOCK_SKEW_SECONDS = 300;

type Json = Record<string, unknown>;

export interface CreateFineTuningJob extends Json {
  model: string;
  training_file: string;
  validation_file?: string | null;
  metadata?: Record<string, string> | null;
}

function statusOf(object: Json): string {
  return typeof object.status === 'string' ? object.status : 'queued';
}

/** A provider's job error as the spec's `{code, message, param}`; null when there is none (OpenAI answers a
 * job that has not failed with an error object whose fields are all null), except for a failed job, whose
 * error the interface promises: one its provider does not explain gets a generic one. */
function errorOf(
  error: unknown,
  status: unknown,
): { code: string; message: string; param: string | null } | null {
  const given = error && typeof error === 'object' ? (error as Json) : {};
  const { code, message, param } = given;
  if (code == null && message == null && status !== 'failed') return null;
  return {
    code: typeof code === 'string' ? code : 'job_failed',
    message: typeof message === 'string' ? message : 'The fine-tuning job failed',
    param: typeof param === 'string' ? param : null,
  };
}

/** The job object a client sees: the provider's, under the gateway's job and file ids. */
export function jobView(job: StoredFineTuningJob, object: Json = job.object): Json {
  const fileId = (id: unknown) => (typeof id === 'string' ? (job.file_ids[id] ?? id) : (id ?? null));
  return {
    ...object,
    object: 'fine_tuning.job',
    id: job.id,
    training_file: fileId(object.training_file),
    validation_file: fileId(object.validation_file),
    error: errorOf(object.error, object.status),
    metadata: clientMetadata(job, object.metadata),
  };
}

/** The job's metadata as the client gave it: the provider's echo without the gateway's own key (unless the
 * client set that key itself), or the client's own when the provider does not echo it. */
function clientMetadata(job: StoredFineTuningJob, echoed: unknown): unknown {
  if (!echoed || typeof echoed !== 'object' || !(GATEWAY_JOB_KEY in echoed)) return echoed ?? job.metadata;
  if (job.metadata && GATEWAY_JOB_KEY in job.metadata) return echoed;
  const { [GATEWAY_JOB_KEY]: _own, ...rest } = echoed as Record<string, unknown>;
  return Object.keys(rest).length > 0 ? rest : job.metadata;
}

/** The metadata the provider's job is created with: the client's, and the gateway's id when the provider
 * keeps metadata and there is room. */
function providerMetadata(
  target: ResourceTarget,
  id: string,
  metadata: Record<string, string> | null | undefined,
): Record<string, string> | null | undefined {
  const own = metadata ?? {};
  if (!target.resources.jobMetadata) return metadata;
  if (Object.keys(own).length >= METADATA_LIMITS.pairs || GATEWAY_JOB_KEY in own) return metadata;
  return { ...own, [GATEWAY_JOB_KEY]: id };
}

/** How the provider's job that a create made is told among the account's, should the create's answer be
 * lost: what the create sends beside the client's body, and whether a job (in OpenAI's shape) is the one
 * the body `sent` made. */
interface JobMark {
  send: { metadata?: Record<string, string> | null; seed?: number };
  made?: (job: Json, sent: CreateFineTuningJob) => boolean;
}

/**
 * The gateway's id in the job's metadata where the provider keeps it (OpenAI); else, when the client sets
 * no seed, a seed the gateway draws (31 random bits), which every job object carries (Azure OpenAI keeps
 * no metadata): a provider draws one for a job without it all the same, so the job trains as it would
 * have. A job the client seeds itself, with no room for the id, cannot be told from another of the same
 * body: none is marked; nor is one whose create takes no seed (Azure's API versions before
 * 2024-05-01-preview).
 */
function jobMark(target: ResourceTarget, id: string, body: CreateFineTuningJob): JobMark {
  const metadata = providerMetadata(target, id, body.metadata);
  if (metadata?.[GATEWAY_JOB_KEY] === id) {
    return {
      send: { metadata },
      made: (job) => (job.metadata as Record<string, unknown> | null | undefined)?.[GATEWAY_JOB_KEY] === id,
    };
  }
  const seeded = body.seed !== undefined && body.seed !== null;
  if (seeded || target.resources.jobSeed?.(target.target) === false) return { send: {} };
  const seed = randomInt(1, 2 ** 31);
  return {
    send: { seed },
    made: (job, sent) => job.seed === seed && job.training_file === sent.training_file,
  };
}

/** A failure of the create that says nothing of whether the provider made the job: its answer was cut,
 * did not come in time, or was the provider's own failure. */
function answerLost(err: unknown): boolean {
  if (err instanceof ProviderError) return err.status >= 500;
  return (
    err instanceof GatewayError && (err.code === 'upstream_unreachable' || err.code === 'request_timeout')
  );
}

/**
 * The provider's job that a create whose answer was lost made, found by its mark among the account's jobs,
 * down to the first one older than the create once the list has shown itself newest first (OpenAI's; Azure's
 * reference does not say its order): a job older than the one before it shows that order, and no job newer
 * than the one before it has belied it. Until then (jobs of one second tell nothing) the list is read
 * through, page by page. Undefined when there is none (or the provider cannot say). `stop` is the node's
 * alone, never the request's: a client that went away (the SDK's timeout) may have done so while the
 * provider made the job, which the gateway must then find and keep all the same.
 */
async function lostCreation(
  deps: GatewayDeps,
  target: ResourceTarget,
  made: (job: Json) => boolean,
  sentAt: number,
  stop?: AbortSignalLike,
): Promise<Json | undefined> {
  const order = new ListOrder();
  try {
    for await (const { data } of listPages(deps, target, '/fine_tuning/jobs', MAX_SEARCH_PAGES, stop)) {
      for (const item of data) {
        const job = openAIJob(target, item);
        if (typeof job.id === 'string' && made(job)) return job;
        const at = job.created_at;
        order.see(at);
        if (order.newestFirst && typeof at === 'number' && at < sentAt - CLOCK_SKEW_SECONDS) return undefined;
      }
    }
  } catch {
    // The provider cannot say: the create's own failure is the answer.
  }
  return undefined;
}

/** The provider's job object in OpenAI's shape (Azure OpenAI's is translated), as it is stored and shown. */
function openAIJob(target: ResourceTarget, object: Json): Json {
  return target.resources.fineTuningJob ? target.resources.fineTuningJob(object) : object;
}

async function targetOf(
  deps: GatewayDeps,
  job: StoredFineTuningJob,
  kind: 'fine_tuning' | 'fine_tuning_pause' = 'fine_tuning',
): Promise<ResourceTarget> {
  const call = await deps.store.fineTuningJobs.callOf(job.id);
  if (!call)
    throw new GatewayError('not_found', `No fine-tuning job "${job.id}"`, { param: 'fine_tuning_job_id' });
  return resourceTarget(deps, call.headers, job.workspace_id, kind);
}

function jobPath(job: StoredFineTuningJob, rest = ''): string {
  return `/fine_tuning/jobs/${encodeURIComponent(job.provider_job_id)}${rest}`;
}

/** The job's gateway files, checked. Both are checked before either is sent: a refused validation file
 * must not leave the training data at the provider. */
async function gatewayFilesOf(deps: GatewayDeps, workspaceId: string, body: CreateFineTuningJob) {
  const named = await Promise.all(
    FILE_FIELDS.map(async (param): Promise<FileToSend<(typeof FILE_FIELDS)[number]> | undefined> => {
      const id = body[param];
      if (typeof id !== 'string') return undefined;
      const file = await gatewayFileOf(deps, workspaceId, id, 'fine-tune', param);
      return file && { param, file };
    }),
  );
  return named.filter((n) => n !== undefined);
}

export async function createFineTuningJob(
  deps: GatewayDeps,
  origin: CallOrigin,
  body: CreateFineTuningJob,
  /** The request's: waiting for another node's upload of a file ends with it. */
  signal?: AbortSignalLike,
  /** This node's stop: its own uploads of the files end then too, and give their claims back. */
  stop?: AbortSignalLike,
): Promise<Json> {
  const workspaceId = origin.apiKey.workspace_id;
  const target = await resourceTarget(deps, origin.headers, workspaceId, 'fine_tuning');
  const files = await gatewayFilesOf(deps, workspaceId, body);
  // The job's id is chosen before it is sent, so that the provider's job carries it (jobMark).
  const id = newId('ftjob');
  const mark = jobMark(target, id, body);
  const { answer: object, sent } = await createWithCopies(
    deps,
    target,
    'fine-tune',
    files,
    async (copies) => {
      const send: CreateFineTuningJob = { ...body, ...mark.send };
      for (const { param, copy } of copies) send[param] = copy.id;
      const call = { method: 'POST', path: '/fine_tuning/jobs', ...jsonBody(send) } as const;
      const sentAt = Math.floor(Date.now() / 1000);
      try {
        return openAIJob(target, await callResource(deps, target, call));
      } catch (err) {
        // The provider may have made the job all the same. A failure here would have the client (the SDK
        // tries a create again after a 5xx or a cut connection) make a second job, each one trained and
        // billed, and the first one unknown to the gateway: the job found is answered instead, and kept
        // though the client has gone (the search is not under its signal, as the create is not).
        const made = mark.made;
        const found =
          made && answerLost(err)
            ? await lostCreation(deps, target, (job) => made(job, send), sentAt, stop)
            : undefined;
        if (!found) throw err;
        return found;
      }
    },
    signal,
    stop,
  );
  const fileIds = Object.fromEntries(sent.map(({ file, copy }) => [copy.id, file.id]));
  if (typeof object.id !== 'string') {
    throw new GatewayError(
      'upstream_invalid_response',
      `${target.adapter.id} answered the job without an id`,
    );
  }
  const job = await deps.store.fineTuningJobs.create({
    id,
    workspace_id: workspaceId,
    provider: target.adapter.id,
    provider_job_id: object.id,
    account: target.account,
    status: statusOf(object),
    object,
    file_ids: fileIds,
    metadata: body.metadata ?? null,
    call: storedCallOf(origin),
  });
  return jobView(job);
}

/** The job as the provider has it now (and remembered as last seen). */
export async function refreshFineTuningJob(
  deps: GatewayDeps,
  job: StoredFineTuningJob,
  signal?: AbortSignalLike,
): Promise<Json> {
  const target = await targetOf(deps, job);
  const object = openAIJob(
    target,
    await callResource(deps, target, { method: 'GET', path: jobPath(job) }, signal),
  );
  await deps.store.fineTuningJobs.saw(job.id, statusOf(object), object);
  return jobView(job, object);
}

/** What may be done to a job at its provider: `POST /fine_tuning/jobs/{id}/{action}`. */
export type FineTuningJobAction = 'cancel' | 'pause' | 'resume';

/** Cancels, pauses or resumes the job at the provider that holds it, under the provider's job id; the
 * answer is remembered as last seen. Pause and resume are refused (400 `unsupported_endpoint`) for a
 * provider without them. `signal` (the request's) cuts the call; the job is then read back all the same. */
export async function actOnFineTuningJob(
  deps: GatewayDeps,
  job: StoredFineTuningJob,
  action: FineTuningJobAction,
  signal?: AbortSignalLike,
): Promise<Json> {
  const target = await targetOf(deps, job, action === 'cancel' ? 'fine_tuning' : 'fine_tuning_pause');
  let object: Json;
  try {
    object = openAIJob(
      target,
      await callResource(deps, target, { method: 'POST', path: jobPath(job, `/${action}`) }, signal),
    );
  } catch (err) {
    // The provider may have acted all the same; the SDK, trying again after the failure, would be refused
    // (a cancelled job cannot be cancelled). The job as it is now answers when it shows the action done.
    // A call cut by the client's leaving may have reached the provider too: the job is read back without
    // the request's signal (under the request timeout), so that the gateway keeps it as the provider has it.
    const done = answerLost(err) ? await actedOn(deps, target, job, action) : undefined;
    if (!done) throw err;
    object = done;
  }
  await deps.store.fineTuningJobs.saw(job.id, statusOf(object), object);
  return jobView(job, object);
}

/** The states a job is in once an action took: a resumed job's may be any, and tell nothing. */
const ACTED: Partial<Record<FineTuningJobAction, readonly string[]>> = {
  cancel: ['cancelled'],
  pause: ['pausing', 'paused'],
};

/** The job as the provider has it now, when its state shows `action` done; else undefined. */
async function actedOn(
  deps: GatewayDeps,
  target: ResourceTarget,
  job: StoredFineTuningJob,
  action: FineTuningJobAction,
): Promise<Json | undefined> {
  const states = ACTED[action];
  if (!states) return undefined;
  try {
    const object = openAIJob(target, await callResource(deps, target, { method: 'GET', path: jobPath(job) }));
    return states.includes(statusOf(object)) ? object : undefined;
  } catch {
    // The provider cannot say: the action's own failure is the answer.
    return undefined;
  }
}

/** How long the list waits for the providers to say how unfinished jobs stand: one provider that does
 * not answer must not hold the whole list for the request timeout. */
export const LIST_REFRESH_MS = 3_000;

/** A page of the workspace's jobs, newest first; the jobs not yet finished are read from their providers
 * at once, and a job whose provider has not answered within LIST_REFRESH_MS (or fails) is shown as last
 * seen. */
export async function listFineTuningJobs(
  deps: GatewayDeps,
  workspaceId: string,
  query: FineTuningJobQuery,
): Promise<{ object: 'list'; data: Json[]; has_more: boolean }> {
  const page = await deps.store.fineTuningJobs.list(workspaceId, query);
  const deadline = new CallAbort();
  const timer = setTimeout(
    () => deadline.abort(),
    Math.min(LIST_REFRESH_MS, deps.settings.defaultRequestTimeoutMs),
  );
  try {
    const data = await Promise.all(
      page.data.map(async (job) => {
        if ((FINISHED_FINE_TUNING_STATUSES as readonly string[]).includes(job.status)) return jobView(job);
        try {
          return await refreshFineTuningJob(deps, job, deadline);
        } catch {
          return jobView(job);
        }
      }),
    );
    return { object: 'list', data, has_more: page.has_more };
  } finally {
    clearTimeout(timer);
  }
}

/** One page of a job's list at the provider (`/events`, `/checkpoints`), newest first as OpenAI's: its
 * items, `has_more`, the provider's page when it is the provider's own, and whether the list the gateway
 * turned round was cut short (newest-first-list.ts). */
async function providerPage(
  deps: GatewayDeps,
  job: StoredFineTuningJob,
  list: '/events' | '/checkpoints',
  query: { after?: string; limit: number },
  signal?: AbortSignalLike,
): Promise<{ data: Json[]; has_more: boolean; page: Json; truncated: boolean }> {
  const target = await targetOf(deps, job);
  if (target.resources.listsOldestFirst) {
    const settled = (FINISHED_FINE_TUNING_STATUSES as readonly string[]).includes(job.status);
    const found = await newestFirstPage(
      deps,
      target,
      { key: `${job.id}${list}`, path: jobPath(job, list), settled },
      query,
      signal,
    );
    return { ...found, page: {} };
  }
  const page = await callResource(
    deps,
    target,
    { method: 'GET', path: jobPath(job, `${list}${pageQuery(query)}`) },
    signal,
  );
  return {
    data: Array.isArray(page.data) ? (page.data as Json[]) : [],
    has_more: page.has_more === true,
    page,
    truncated: false,
  };
}

/** A page of a job's list as the client is answered with it, and whether the list was cut short: the
 * gateway read the first 10,000 items only of a longer list it turns round (newest-first-list.ts). */
export interface JobListPage {
  list: Json;
  truncated: boolean;
}

export async function fineTuningJobEvents(
  deps: GatewayDeps,
  job: StoredFineTuningJob,
  query: { after?: string; limit: number },
  /** The request's: the provider's pages are no longer read once it ends. */
  signal?: AbortSignalLike,
): Promise<JobListPage> {
  const { data, has_more, truncated } = await providerPage(deps, job, '/events', query, signal);
  return { list: { object: 'list', data, has_more }, truncated };
}

export async function fineTuningJobCheckpoints(
  deps: GatewayDeps,
  job: StoredFineTuningJob,
  query: { after?: string; limit: number },
  /** The request's: the provider's pages are no longer read once it ends. */
  signal?: AbortSignalLike,
): Promise<JobListPage> {
  const {
    data: checkpoints,
    has_more,
    page,
    truncated,
  } = await providerPage(deps, job, '/checkpoints', query, signal);
  const data: Json[] = checkpoints.map((checkpoint) => ({ ...checkpoint, fine_tuning_job_id: job.id }));
  const list = {
    object: 'list',
    data,
    first_id:
      typeof page.first_id === 'string' ? page.first_id : ((data[0]?.id as string | undefined) ?? null),
    last_id:
      typeof page.last_id === 'string' ? page.last_id : ((data.at(-1)?.id as string | undefined) ?? null),
    has_more,
  };
  return { list, truncated };
}
