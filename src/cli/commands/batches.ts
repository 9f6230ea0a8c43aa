/**
 * `gateway batches …`: create a batch from a local JSONL file (uploaded first; managed, or with
 * `--window 24h` on the provider's Batch API), watch its progress with a progress bar, download its output
 * and error files, list, get and cancel.
 */
import { Command } from 'commander';
import { CliError, type ApiClient } from '../api-client.js';
import { commandContext } from '../context.js';
import { formatTable } from '../format-table.js';
import type { CliIo } from '../io.js';
import { collectPair, parseInteger } from '../parse-values.js';
import { downloadFile, uploadFile } from './files.js';

interface Batch {
  id: string;
  status: string;
  endpoint: string;
  created_at: number;
  output_file_id: string | null;
  error_file_id: string | null;
  request_counts: { total: number; completed: number; failed: number };
  errors: {
    data: Array<{ line: number | null; code: string; message: string; param: string | null }>;
  } | null;
}

const FINISHED = ['completed', 'failed', 'cancelled', 'expired'];
const BAR_WIDTH = 30;

/** `[#########.........]  310/1000  31%  failed 2  in_progress` */
export function progressLine(batch: Batch): string {
  const { total, completed, failed } = batch.request_counts;
  const done = completed + failed;
  const share = total > 0 ? done / total : 0;
  const filled = Math.round(share * BAR_WIDTH);
  return (
    `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${done}/${total} ` +
    `${Math.floor(share * 100)}%  failed ${failed}  ${batch.status}`
  );
}

function batchTable(batches: Batch[]): string {
  return formatTable(batches, [
    { header: 'ID', value: (b) => b.id },
    { header: 'STATUS', value: (b) => b.status },
    { header: 'ENDPOINT', value: (b) => b.endpoint },
    {
      header: 'DONE',
      value: (b) => `${b.request_counts.completed + b.request_counts.failed}/${b.request_counts.total}`,
    },
    { header: 'FAILED', value: (b) => b.request_counts.failed },
    { header: 'OUTPUT', value: (b) => b.output_file_id },
    { header: 'ERRORS', value: (b) => b.error_file_id },
  ]);
}

function describeErrors(batch: Batch): string {
  return (batch.errors?.data ?? [])
    .map((e) => `  line ${e.line ?? '-'}: ${e.code}${e.param ? ` (${e.param})` : ''}: ${e.message}\n`)
    .join('');
}

interface WatchOptions {
  output?: string;
  errors?: string;
  intervalMs?: number;
}

/** Polls until the batch is finished, drawing the progress bar on stderr; then downloads its files. */
async function watch(api: ApiClient, io: CliIo, id: string, options: WatchOptions): Promise<Batch> {
  const interval = options.intervalMs ?? 1000;
  let batch: Batch;
  for (;;) {
    batch = await api.request<Batch>('GET', `/batches/${encodeURIComponent(id)}`);
    io.stderr(`\r${progressLine(batch)}`);
    if (FINISHED.includes(batch.status)) break;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
  io.stderr('\n');
  if (options.output && batch.output_file_id)
    await downloadFile(api, io, batch.output_file_id, options.output);
  if (options.errors && batch.error_file_id) await downloadFile(api, io, batch.error_file_id, options.errors);
  return batch;
}

interface CreateOptions extends WatchOptions {
  endpoint: string;
  config?: string;
  provider?: string;
  virtualKey?: string;
  providerKey?: string;
  metadata?: Record<string, string>;
  concurrency?: number;
  window: string;
  watch?: boolean;
  interval?: number;
}

export interface ProviderOptions {
  config?: string;
  provider?: string;
  virtualKey?: string;
  providerKey?: string;
}

export function providerHeaders(options: ProviderOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.config) headers['x-gateway-config'] = options.config;
  if (options.provider) headers['x-gateway-provider'] = options.provider;
  if (options.virtualKey) headers['x-gateway-virtual-key'] = options.virtualKey;
  if (options.providerKey) headers.authorization = `Bearer ${options.providerKey}`;
  if (Object.keys(headers).length === 0) {
    throw new CliError('Say which provider the lines call: --config, --virtual-key or --provider');
  }
  return headers;
}

export function batchesCommand(io: CliIo): Command {
  const batches = new Command('batches').description(
    'Managed batches: every line of a JSONL file through the gateway',
  );

  batches
    .command('create <jsonl>')
    .description('Upload a JSONL file and run it as a batch')
    .option('--endpoint <path>', 'the endpoint of every line', '/v1/chat/completions')
    .option('--config <config>', 'a stored config id or inline JSON (x-gateway-config)')
    .option('--virtual-key <slug>', 'a virtual key (x-gateway-virtual-key)')
    .option('--provider <provider>', 'a provider name or @slug (x-gateway-provider)')
    .option('--provider-key <key>', "the provider's API key, with --provider")
    .option('--metadata <key=value>', 'metadata of the batch (repeatable)', collectPair)
    .option('--concurrency <n>', 'lines this batch runs at once on a node', parseInteger)
    .option('--window <window>', "immediate (managed) or 24h (the provider's Batch API)", 'immediate')
    .option('--watch', 'show progress until the batch is finished')
    .option('--output <path>', 'with --watch: write the output file here')
    .option('--errors <path>', 'with --watch: write the error file here')
    .option('--interval <ms>', 'with --watch: how often to look', parseInteger)
    .action(async (path: string, options: CreateOptions, command) => {
      const ctx = commandContext(command, io);
      const headers = providerHeaders(options);
      const file = await uploadFile(ctx.api, path, 'batch');
      const body = {
        input_file_id: file.id,
        endpoint: options.endpoint,
        completion_window: options.window,
        ...(options.metadata && { metadata: options.metadata }),
        ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
      };
      let batch = await ctx.api.request<Batch>('POST', '/batches', body, headers);
      if (options.watch) {
        batch = await watch(ctx.api, io, batch.id, { ...options, intervalMs: options.interval });
      }
      ctx.print(batch, () => batchTable([batch]) + describeErrors(batch));
    });

  batches
    .command('watch <id>')
    .description('Show progress until the batch is finished, then download its files')
    .option('--output <path>', 'write the output file here')
    .option('--errors <path>', 'write the error file here')
    .option('--interval <ms>', 'how often to look', parseInteger)
    .action(async (id: string, options: WatchOptions & { interval?: number }, command) => {
      const ctx = commandContext(command, io);
      const batch = await watch(ctx.api, io, id, { ...options, intervalMs: options.interval });
      ctx.print(batch, () => batchTable([batch]) + describeErrors(batch));
    });

  batches
    .command('list')
    .description('List batches, newest first')
    .option('--limit <n>', 'how many (1 to 100)', parseInteger)
    .option('--after <id>', 'the page after this batch')
    .action(async (options: { limit?: number; after?: string }, command) => {
      const ctx = commandContext(command, io);
      const query = new URLSearchParams();
      if (options.limit !== undefined) query.set('limit', String(options.limit));
      if (options.after) query.set('after', options.after);
      const page = await ctx.api.request<{ data: Batch[] }>('GET', `/batches?${query}`);
      ctx.print(page, () => batchTable(page.data));
    });

  batches
    .command('get <id>')
    .description('Show a batch')
    .action(async (id: string, _options, command) => {
      const ctx = commandContext(command, io);
      const batch = await ctx.api.request<Batch>('GET', `/batches/${encodeURIComponent(id)}`);
      ctx.print(batch, () => batchTable([batch]) + describeErrors(batch));
    });

  batches
    .command('cancel <id>')
    .description('Cancel a batch (the lines answered so far are kept)')
    .action(async (id: string, _options, command) => {
      const ctx = commandContext(command, io);
      const batch = await ctx.api.request<Batch>('POST', `/batches/${encodeURIComponent(id)}/cancel`);
      ctx.print(batch, () => batchTable([batch]));
    });

  return batches;
}
