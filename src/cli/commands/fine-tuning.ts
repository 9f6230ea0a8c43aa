/**
 * `gateway fine-tuning …`: create a fine-tuning job (a local training file is uploaded first), list, get,
 * cancel, pause or resume it, and read its events and checkpoints. The job runs on the provider the options name.
 */
import { existsSync } from 'node:fs';
import { Command } from 'commander';
import { commandContext } from '../context.js';
import { formatTable } from '../format-table.js';
import type { CliIo } from '../io.js';
import { parseInteger } from '../parse-values.js';
import { providerHeaders, type ProviderOptions } from './batches.js';
import { uploadFile } from './files.js';

/** What may be done to a job, each a `POST /fine_tuning/jobs/{id}/{action}` answered with the job. */
const JOB_ACTIONS = [
  ['cancel', 'Cancel a fine-tuning job'],
  ['pause', 'Pause a running fine-tuning job (where its provider can)'],
  ['resume', 'Resume a paused fine-tuning job'],
] as const;

interface Job {
  id: string;
  status: string;
  model: string;
  fine_tuned_model: string | null;
  created_at: number;
  error: { code: string; message: string; param: string | null } | null;
}

const jobTable = (jobs: Job[]) =>
  formatTable(jobs, [
    { header: 'ID', value: (j) => j.id },
    { header: 'STATUS', value: (j) => j.status },
    { header: 'MODEL', value: (j) => j.model },
    { header: 'FINE-TUNED MODEL', value: (j) => j.fine_tuned_model },
    { header: 'ERROR', value: (j) => (j.error ? `${j.error.code}: ${j.error.message}` : null) },
  ]);

interface CreateOptions extends ProviderOptions {
  trainingFile: string;
  validationFile?: string;
  suffix?: string;
  epochs?: number;
}

function pageQuery(options: { limit?: number; after?: string }): string {
  const query = new URLSearchParams();
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.after) query.set('after', options.after);
  return query.size > 0 ? `?${query}` : '';
}

export function fineTuningCommand(io: CliIo): Command {
  const jobs = new Command('fine-tuning').description(
    'Fine-tuning jobs, run by a provider (OpenAI, Azure OpenAI)',
  );

  jobs
    .command('create <model>')
    .description('Create a fine-tuning job')
    .requiredOption('--training-file <file>', 'a local JSONL file (uploaded first) or a file id')
    .option('--validation-file <file>', 'a local JSONL file (uploaded first) or a file id')
    .option('--suffix <suffix>', "added to the fine-tuned model's name")
    .option('--epochs <n>', 'hyperparameters.n_epochs', parseInteger)
    .option('--config <config>', 'a stored config id or inline JSON (x-gateway-config)')
    .option('--virtual-key <slug>', 'a virtual key (x-gateway-virtual-key)')
    .option('--provider <provider>', 'a provider name or @slug (x-gateway-provider)')
    .option('--provider-key <key>', "the provider's API key, with --provider")
    .action(async (model: string, options: CreateOptions, command) => {
      const ctx = commandContext(command, io);
      const headers = providerHeaders(options);
      const fileId = async (value: string) =>
        existsSync(value) ? (await uploadFile(ctx.api, value, 'fine-tune')).id : value;
      const body = {
        model,
        training_file: await fileId(options.trainingFile),
        ...(options.validationFile && { validation_file: await fileId(options.validationFile) }),
        ...(options.suffix && { suffix: options.suffix }),
        ...(options.epochs !== undefined && { hyperparameters: { n_epochs: options.epochs } }),
      };
      const job = await ctx.api.request<Job>('POST', '/fine_tuning/jobs', body, headers);
      ctx.print(job, () => jobTable([job]));
    });

  jobs
    .command('list')
    .description('List fine-tuning jobs, newest first')
    .option('--limit <n>', 'how many (1 to 100)', parseInteger)
    .option('--after <id>', 'the page after this job')
    .action(async (options: { limit?: number; after?: string }, command) => {
      const ctx = commandContext(command, io);
      const page = await ctx.api.request<{ data: Job[] }>('GET', `/fine_tuning/jobs${pageQuery(options)}`);
      ctx.print(page, () => jobTable(page.data));
    });

  jobs
    .command('get <id>')
    .description('Show a fine-tuning job as its provider has it now')
    .action(async (id: string, _options, command) => {
      const ctx = commandContext(command, io);
      const job = await ctx.api.request<Job>('GET', `/fine_tuning/jobs/${encodeURIComponent(id)}`);
      ctx.print(job, () => jobTable([job]));
    });

  for (const [action, description] of JOB_ACTIONS) {
    jobs
      .command(`${action} <id>`)
      .description(description)
      .action(async (id: string, _options, command) => {
        const ctx = commandContext(command, io);
        const path = `/fine_tuning/jobs/${encodeURIComponent(id)}/${action}`;
        const job = await ctx.api.request<Job>('POST', path);
        ctx.print(job, () => jobTable([job]));
      });
  }

  jobs
    .command('events <id>')
    .description("A fine-tuning job's events, newest first")
    .option('--limit <n>', 'how many', parseInteger)
    .option('--after <id>', 'the page after this event')
    .action(async (id: string, options: { limit?: number; after?: string }, command) => {
      const ctx = commandContext(command, io);
      const page = await ctx.api.request<{
        data: Array<{ id: string; created_at: number; level: string; message: string }>;
      }>('GET', `/fine_tuning/jobs/${encodeURIComponent(id)}/events${pageQuery(options)}`);
      ctx.print(page, () =>
        formatTable(page.data, [
          { header: 'ID', value: (e) => e.id },
          { header: 'CREATED', value: (e) => new Date(e.created_at * 1000).toISOString() },
          { header: 'LEVEL', value: (e) => e.level },
          { header: 'MESSAGE', value: (e) => e.message },
        ]),
      );
    });

  jobs
    .command('checkpoints <id>')
    .description("A fine-tuning job's checkpoints")
    .option('--limit <n>', 'how many', parseInteger)
    .option('--after <id>', 'the page after this checkpoint')
    .action(async (id: string, options: { limit?: number; after?: string }, command) => {
      const ctx = commandContext(command, io);
      const page = await ctx.api.request<{
        data: Array<{ id: string; step_number: number; fine_tuned_model_checkpoint: string }>;
      }>('GET', `/fine_tuning/jobs/${encodeURIComponent(id)}/checkpoints${pageQuery(options)}`);
      ctx.print(page, () =>
        formatTable(page.data, [
          { header: 'ID', value: (c) => c.id },
          { header: 'STEP', value: (c) => c.step_number },
          { header: 'MODEL', value: (c) => c.fine_tuned_model_checkpoint },
        ]),
      );
    });

  return jobs;
}
