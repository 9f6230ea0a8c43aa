// OpenAI's Files, fine-tuning and Batch APIs, faked in their real wire format (shapes from the OpenAPI
// document: OpenAIFile, FineTuningJob, FineTuningJobEvent, FineTuningJobCheckpoint, Batch). State lives in
// memory; every read of a job or batch moves it one state on, so a test sees the whole life cycle:
//   job:   validating_files → queued → running → succeeded (model `fake-ft-fail…` → failed); a queued
//          or running job pauses (`paused`) until resumed (`queued`)
//   batch: validating → in_progress → finalizing → completed (output and error files written then)
// Paths are OpenAI's after `/v1`; the Azure fake mounts the same under `/openai`.
import { chatCompletion, planChat, type ChatRequest } from './chat.js';
import { unixNow } from './ids.js';

export interface ResourceAnswer {
  status: number;
  body: unknown;
  /** Raw file contents instead of JSON. */
  raw?: Buffer;
  /** The work is done but the connection is cut before the answer: a lost answer. */
  lost?: boolean;
}

export interface FakeFile {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: 'processed';
  status_details: null;
  content: Buffer;
}

type Json = Record<string, unknown>;

let counter = 0;
const nextId = (prefix: string) =>
  `${prefix}${(++counter).toString(36).padStart(6, '0')}${Math.random().toString(36).slice(2, 10)}`;

function error(status: number, message: string, param: string | null = null, code: string | null = null) {
  return { status, body: { error: { message, type: 'invalid_request_error', param, code } } };
}

const JOB_STEPS = ['validating_files', 'queued', 'running', 'succeeded'] as const;
const BATCH_STEPS = ['validating', 'in_progress', 'finalizing', 'completed'] as const;

export class FakeResources {
  readonly files = new Map<string, FakeFile>();
  readonly jobs = new Map<string, Json>();
  readonly batches = new Map<string, Json>();
  private readonly events = new Map<string, Json[]>();
  /** Batch creations still to be answered by cutting the connection once the batch exists. */
  loseBatchAnswers = 0;
  /** Fine-tuning job creations still to be answered by cutting the connection once the job exists. */
  loseJobAnswers = 0;
  /** Lists the account's fine-tuning jobs oldest first (Azure's reference does not say its order). */
  jobsOldestFirst = false;
  /** Lists the account's batches oldest first (Azure's reference does not say its order). */
  batchesOldestFirst = false;
  /** Fine-tuning job cancels still to be answered by cutting the connection once the job is cancelled. */
  loseCancelAnswers = 0;
  /** While set, a fine-tuning job cancel is done at once and answered once it resolves (a slow answer). */
  holdCancelAnswers: Promise<void> | undefined;
  /** While set, a batch creation waits for it before it is answered (a slow provider). */
  holdBatchCreates: Promise<void> | undefined;
  /** While set, a fine-tuning job creation waits for it before the job is made (a slow provider). */
  holdJobCreates: Promise<void> | undefined;
  /** Lists a job's events and checkpoints newest first even as Azure (whose v1 API's order is not documented). */
  jobListsNewestFirst = false;
  /** While set, a read of a job's events or checkpoints waits for it before it is answered. */
  holdJobLists: Promise<void> | undefined;
  /** While set, every read of a batch is answered with it (an outage, or a batch the provider lost). */
  batchReads: ResourceAnswer | undefined;

  constructor(private readonly name: string) {}

  /** Answers a request of these APIs; undefined for any other path. */
  async handle(
    method: string,
    path: string,
    query: Record<string, string | string[]>,
    contentType: string | undefined,
    raw: Buffer,
  ): Promise<ResourceAnswer | undefined> {
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const body = (): Json => {
      try {
        return JSON.parse(raw.toString('utf8')) as Json;
      } catch {
        return {};
      }
    };
    const limit = Number(query.limit ?? 20);
    const after = typeof query.after === 'string' ? query.after : undefined;
    if (parts[0] === 'files') {
      if (method === 'POST' && parts.length === 1) return this.upload(contentType, raw);
      if (method === 'GET' && parts.length === 1)
        return {
          status: 200,
          body: { object: 'list', data: [...this.files.values()].map(fileObject), has_more: false },
        };
      const file = this.files.get(parts[1]);
      if (!file) return error(404, `No such File object: ${parts[1]}`, 'id');
      if (method === 'GET' && parts.length === 2) return { status: 200, body: fileObject(file) };
      if (method === 'DELETE' && parts.length === 2) {
        this.files.delete(file.id);
        return { status: 200, body: { id: file.id, object: 'file', deleted: true } };
      }
      if (method === 'GET' && parts[2] === 'content') return { status: 200, body: null, raw: file.content };
      return undefined;
    }
    if (parts[0] === 'fine_tuning' && parts[1] === 'jobs') {
      if (method === 'POST' && parts.length === 2) {
        if (this.holdJobCreates) await this.holdJobCreates;
        const created = this.createJob(body());
        if (created.status !== 200 || this.loseJobAnswers === 0) return created;
        this.loseJobAnswers -= 1;
        return { ...created, lost: true };
      }
      if (method === 'GET' && parts.length === 2) {
        const jobs = [...this.jobs.values()];
        return { status: 200, body: page(this.jobsOldestFirst ? jobs : jobs.reverse(), limit, after) };
      }
      const job = this.jobs.get(parts[2]);
      if (!job) return error(404, `Could not find fine-tune: ${parts[2]}`, null, 'fine_tune_not_found');
      if (method === 'GET' && parts.length === 3) return { status: 200, body: this.advanceJob(job) };
      if (method === 'POST' && parts[3] === 'cancel') {
        const cancelled = this.cancelJob(job);
        if (this.holdCancelAnswers) await this.holdCancelAnswers;
        if (cancelled.status !== 200 || this.loseCancelAnswers === 0) return cancelled;
        this.loseCancelAnswers -= 1;
        return { ...cancelled, lost: true };
      }
      if (method === 'POST' && parts[3] === 'pause') return this.pauseJob(job);
      if (method === 'POST' && parts[3] === 'resume') return this.resumeJob(job);
      if (method === 'GET' && this.holdJobLists && ['events', 'checkpoints'].includes(parts[3]))
        await this.holdJobLists;
      // OpenAI lists a job's events and checkpoints newest first; Azure's reference, oldest first.
      const inOrder = (items: Json[]) =>
        this.name === 'azure' && !this.jobListsNewestFirst ? items : [...items].reverse();
      if (method === 'GET' && parts[3] === 'events')
        return { status: 200, body: page(inOrder(this.events.get(job.id as string) ?? []), limit, after) };
      if (method === 'GET' && parts[3] === 'checkpoints')
        return {
          status: 200,
          body: withEnds(page(inOrder(this.checkpoints(job)), Number(query.limit ?? 10), after)),
        };
      return undefined;
    }
    if (parts[0] === 'batches') {
      if (method === 'POST' && parts.length === 1) {
        if (this.holdBatchCreates) await this.holdBatchCreates;
        const created = this.createBatch(body());
        if (created.status !== 200 || this.loseBatchAnswers === 0) return created;
        this.loseBatchAnswers -= 1;
        return { ...created, lost: true };
      }
      if (method === 'GET' && parts.length === 1) {
        const batches = [...this.batches.values()];
        const listed = this.batchesOldestFirst ? batches : batches.reverse();
        return { status: 200, body: withEnds(page(listed, limit, after)) };
      }
      if (method === 'GET' && parts.length === 2 && this.batchReads) return this.batchReads;
      const batch = this.batches.get(parts[1]);
      if (!batch) return error(404, `No batch found with id '${parts[1]}'.`, null, 'batch_not_found');
      if (method === 'GET' && parts.length === 2) return { status: 200, body: this.advanceBatch(batch) };
      if (method === 'POST' && parts[2] === 'cancel') return this.cancelBatch(batch);
      return undefined;
    }
    return undefined;
  }

  addFile(filename: string, purpose: string, content: Buffer): FakeFile {
    const file: FakeFile = {
      id: nextId('file-'),
      object: 'file',
      bytes: content.length,
      created_at: unixNow(),
      filename,
      purpose,
      status: 'processed',
      status_details: null,
      content,
    };
    this.files.set(file.id, file);
    return file;
  }

  private async upload(contentType: string | undefined, raw: Buffer): Promise<ResourceAnswer> {
    if (!contentType?.startsWith('multipart/form-data')) return error(400, 'Expected multipart/form-data');
    const form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
    const purpose = form.get('purpose');
    const file = form.get('file');
    if (typeof purpose !== 'string') return error(400, "Missing required parameter: 'purpose'.", 'purpose');
    if (!file || typeof file === 'string') return error(400, "Missing required parameter: 'file'.", 'file');
    const stored = this.addFile(file.name, purpose, Buffer.from(await file.arrayBuffer()));
    return { status: 200, body: fileObject(stored) };
  }

  /** `count` metrics events more of the job (a long training logs one a step); made now, or a second apart
   * from `firstAt` on. */
  addMetricsEvents(jobId: string, count: number, firstAt?: number): void {
    for (let step = 1; step <= count; step++) {
      this.event(jobId, `Step ${step}: training loss=0.5`, 'metrics');
      if (firstAt !== undefined) this.events.get(jobId)!.at(-1)!.created_at = firstAt + step - 1;
    }
  }

  private event(
    jobId: string,
    message: string,
    type: 'message' | 'metrics' = 'message',
    level = 'info',
  ): void {
    const list = this.events.get(jobId) ?? [];
    list.push({
      object: 'fine_tuning.job.event',
      id: nextId('ftevent-'),
      created_at: unixNow(),
      level,
      message,
      data: {},
      type,
    });
    this.events.set(jobId, list);
  }

  private createJob(req: Json): ResourceAnswer {
    if (typeof req.model !== 'string') return error(400, 'Missing required parameter: model', 'model');
    const training = this.files.get(String(req.training_file));
    if (!training)
      return error(
        400,
        `invalid training_file: ${String(req.training_file)}`,
        'training_file',
        'invalid_training_file',
      );
    if (training.purpose !== 'fine-tune')
      return error(
        400,
        `File ${training.id} has purpose ${training.purpose}, expected fine-tune`,
        'training_file',
        'invalid_training_file',
      );
    if (req.validation_file != null && !this.files.has(String(req.validation_file))) {
      return error(
        400,
        `invalid validation_file: ${String(req.validation_file)}`,
        'validation_file',
        'invalid_validation_file',
      );
    }
    const id = nextId('ftjob-');
    const hyper = (req.hyperparameters ?? {}) as Json;
    const job: Json = {
      object: 'fine_tuning.job',
      id,
      model: req.model,
      created_at: unixNow(),
      finished_at: null,
      fine_tuned_model: null,
      organization_id: 'org-fake',
      result_files: [],
      status: 'validating_files',
      validation_file: req.validation_file ?? null,
      training_file: req.training_file,
      hyperparameters: {
        batch_size: hyper.batch_size ?? 'auto',
        learning_rate_multiplier: hyper.learning_rate_multiplier ?? 'auto',
        n_epochs: hyper.n_epochs ?? 'auto',
      },
      trained_tokens: null,
      error: null,
      user_provided_suffix: req.suffix ?? null,
      seed: typeof req.seed === 'number' ? req.seed : 42,
      estimated_finish: null,
      integrations: req.integrations ?? null,
      metadata: req.metadata ?? null,
      method: {
        type: 'supervised',
        supervised: {
          hyperparameters: { batch_size: 'auto', learning_rate_multiplier: 'auto', n_epochs: 'auto' },
        },
      },
    };
    this.jobs.set(id, job);
    this.event(id, 'Validating training file: ' + training.id);
    return { status: 200, body: job };
  }

  private advanceJob(job: Json): Json {
    const at = JOB_STEPS.indexOf(job.status as (typeof JOB_STEPS)[number]);
    if (at < 0 || at === JOB_STEPS.length - 1) return job;
    const id = job.id as string;
    if (String(job.model).startsWith('fake-ft-fail') && job.status === 'running') {
      Object.assign(job, {
        status: 'failed',
        finished_at: unixNow(),
        error: {
          code: 'invalid_training_file',
          message: 'The training file has too few examples.',
          param: 'training_file',
        },
      });
      this.event(id, 'Job failed', 'message', 'error');
      return job;
    }
    job.status = JOB_STEPS[at + 1];
    if (job.status === 'queued') this.event(id, 'Files validated, moving job to queued state');
    if (job.status === 'running') this.event(id, 'Fine-tuning job started');
    if (job.status === 'succeeded') {
      const results = this.addFile(
        'step_metrics.csv',
        'fine-tune-results',
        Buffer.from('step,train_loss\n1,0.5\n'),
      );
      const suffix = job.user_provided_suffix ? `${String(job.user_provided_suffix)}:` : '';
      Object.assign(job, {
        finished_at: unixNow(),
        fine_tuned_model: `ft:${String(job.model)}:org-fake:${suffix}${id.slice(6, 14)}`,
        result_files: [results.id],
        trained_tokens: 5768,
      });
      this.event(id, 'Step 3/3: training loss=0.12', 'metrics');
      this.event(id, 'The job has successfully completed');
    }
    return job;
  }

  private cancelJob(job: Json): ResourceAnswer {
    if (['succeeded', 'failed', 'cancelled'].includes(job.status as string)) {
      return error(400, `Job has already completed: ${String(job.id)}`, null, 'invalid_request_error');
    }
    Object.assign(job, { status: 'cancelled', finished_at: unixNow() });
    this.event(job.id as string, 'Job cancelled');
    return { status: 200, body: job };
  }

  /** A queued or running job pauses (`paused`, where it stays); a paused one resumes as `queued`. */
  private pauseJob(job: Json): ResourceAnswer {
    if (!['queued', 'running'].includes(job.status as string)) {
      return error(400, `Job ${String(job.id)} cannot be paused while ${String(job.status)}`);
    }
    job.status = 'paused';
    this.event(job.id as string, 'Job paused');
    return { status: 200, body: job };
  }

  private resumeJob(job: Json): ResourceAnswer {
    if (job.status !== 'paused') return error(400, `Job ${String(job.id)} is not paused`);
    job.status = 'queued';
    this.event(job.id as string, 'Job resumed');
    return { status: 200, body: job };
  }

  private checkpoints(job: Json): Json[] {
    if (job.status !== 'succeeded') return [];
    return [1, 2, 3].map((step) => ({
      object: 'fine_tuning.job.checkpoint',
      id: `ftckpt_${String(job.id).slice(6)}${step}`,
      created_at: unixNow(),
      fine_tuned_model_checkpoint: `${String(job.fine_tuned_model)}:ckpt-step-${step}`,
      fine_tuning_job_id: job.id,
      step_number: step,
      metrics: {
        step,
        train_loss: 1 / step,
        train_mean_token_accuracy: 0.5 + step / 10,
        valid_loss: 1.1 / step,
        valid_mean_token_accuracy: 0.4 + step / 10,
        full_valid_loss: 1.2 / step,
        full_valid_mean_token_accuracy: 0.3 + step / 10,
      },
    }));
  }

  private createBatch(req: Json): ResourceAnswer {
    const input = this.files.get(String(req.input_file_id));
    if (!input) return error(400, `No such File object: ${String(req.input_file_id)}`, 'input_file_id');
    if (req.completion_window !== '24h')
      return error(400, "Invalid value for 'completion_window': must be '24h'.", 'completion_window');
    const id = nextId('batch_');
    const batch: Json = {
      id,
      object: 'batch',
      endpoint: req.endpoint,
      errors: null,
      input_file_id: input.id,
      completion_window: '24h',
      status: 'validating',
      output_file_id: null,
      error_file_id: null,
      created_at: unixNow(),
      in_progress_at: null,
      expires_at: unixNow() + 86400,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: 0, completed: 0, failed: 0 },
      metadata: req.metadata ?? null,
    };
    this.batches.set(id, batch);
    return { status: 200, body: batch };
  }

  private advanceBatch(batch: Json): Json {
    if (batch.status === 'cancelling') {
      Object.assign(batch, { status: 'cancelled', cancelled_at: unixNow() });
      return batch;
    }
    const at = BATCH_STEPS.indexOf(batch.status as (typeof BATCH_STEPS)[number]);
    if (at < 0 || at === BATCH_STEPS.length - 1) return batch;
    batch.status = BATCH_STEPS[at + 1];
    const lines = (this.files.get(batch.input_file_id as string)?.content.toString('utf8') ?? '')
      .split('\n')
      .filter((l) => l.trim());
    if (batch.status === 'in_progress') {
      Object.assign(batch, {
        in_progress_at: unixNow(),
        request_counts: { total: lines.length, completed: 0, failed: 0 },
      });
    }
    if (batch.status === 'finalizing') batch.finalizing_at = unixNow();
    if (batch.status === 'completed') {
      const output: string[] = [];
      const errors: string[] = [];
      lines.forEach((text, index) => {
        const line = JSON.parse(text) as { custom_id: string; body: ChatRequest };
        const requestId = `req_${index}`;
        if (String(line.body.model).startsWith('fake-status-')) {
          const status = Number(String(line.body.model).slice('fake-status-'.length));
          errors.push(
            JSON.stringify({
              id: `batch_req_${index}`,
              custom_id: line.custom_id,
              response: {
                status_code: status,
                request_id: requestId,
                body: {
                  error: { message: 'fake failure', type: 'invalid_request_error', param: null, code: null },
                },
              },
              error: null,
            }),
          );
        } else {
          output.push(
            JSON.stringify({
              id: `batch_req_${index}`,
              custom_id: line.custom_id,
              response: {
                status_code: 200,
                request_id: requestId,
                body: chatCompletion(planChat(this.name, line.body)),
              },
              error: null,
            }),
          );
        }
      });
      const outputFile = output.length
        ? this.addFile(
            'batch_output.jsonl',
            'batch_output',
            Buffer.from(output.map((l) => `${l}\n`).join('')),
          )
        : undefined;
      const errorFile = errors.length
        ? this.addFile(
            'batch_errors.jsonl',
            'batch_output',
            Buffer.from(errors.map((l) => `${l}\n`).join('')),
          )
        : undefined;
      Object.assign(batch, {
        completed_at: unixNow(),
        output_file_id: outputFile?.id ?? null,
        error_file_id: errorFile?.id ?? null,
        request_counts: { total: lines.length, completed: output.length, failed: errors.length },
      });
    }
    return batch;
  }

  private cancelBatch(batch: Json): ResourceAnswer {
    if (!['validating', 'in_progress', 'finalizing'].includes(batch.status as string)) {
      return error(400, `Cannot cancel a batch with status '${String(batch.status)}'.`);
    }
    Object.assign(batch, { status: 'cancelling', cancelling_at: unixNow() });
    return { status: 200, body: batch };
  }
}

function fileObject(file: FakeFile): Json {
  const { content: _content, ...object } = file;
  return object;
}

function page(
  items: Json[],
  limit: number,
  after: string | undefined,
): { object: 'list'; data: Json[]; has_more: boolean } {
  const start = after === undefined ? 0 : items.findIndex((item) => item.id === after) + 1;
  const data = items.slice(start, start + limit);
  return { object: 'list', data, has_more: start + limit < items.length };
}

function withEnds(list: { object: 'list'; data: Json[]; has_more: boolean }) {
  return {
    ...list,
    first_id: (list.data[0]?.id as string | undefined) ?? null,
    last_id: (list.data.at(-1)?.id as string | undefined) ?? null,
  };
}
