/** `gateway logs list`: the workspace's request log, newest first. */
import { Command } from 'commander';
import { commandContext } from '../context.js';
import { formatTable } from '../format-table.js';
import type { CliIo } from '../io.js';
import { parseInteger } from '../parse-values.js';

interface LogRecord {
  id: string;
  created_at_ms: number;
  method: string;
  path: string;
  provider: string | null;
  model: string | null;
  status: number;
  latency_ms: number;
  total_tokens: number | null;
  /** US dollars; null when unpriced. */
  cost: number | null;
  is_attempt: boolean;
  trace_id: string;
  error_code: string | null;
}

interface LogOptions {
  limit?: number;
  traceId?: string;
  provider?: string;
  model?: string;
  status?: number;
  after?: string;
}

export function logsCommand(io: CliIo): Command {
  const logs = new Command('logs').description('The request log of the workspace');

  logs
    .command('list')
    .description('List log records, newest first')
    .option('--limit <n>', 'how many (1 to 1000)', parseInteger, 20)
    .option('--trace-id <id>', 'only this trace')
    .option('--provider <provider>', 'only this provider')
    .option('--model <model>', 'only this model')
    .option('--status <code>', 'only this HTTP status', parseInteger)
    .option('--after <id>', 'the page after this record id')
    .action(async (options: LogOptions, command) => {
      const ctx = commandContext(command, io);
      const query = new URLSearchParams();
      const filters: Array<[string, unknown]> = [
        ['limit', options.limit],
        ['trace_id', options.traceId],
        ['provider', options.provider],
        ['model', options.model],
        ['status', options.status],
        ['after', options.after],
      ];
      for (const [name, value] of filters) if (value !== undefined) query.set(name, String(value));
      const page = await ctx.api.request<{ data: LogRecord[]; has_more: boolean }>('GET', `/logs?${query}`);
      ctx.print(
        page,
        () =>
          formatTable(page.data, [
            { header: 'TIME', value: (r) => new Date(r.created_at_ms).toISOString() },
            { header: 'STATUS', value: (r) => r.status },
            { header: 'ENDPOINT', value: (r) => `${r.method} ${r.path}${r.is_attempt ? ' (attempt)' : ''}` },
            { header: 'PROVIDER', value: (r) => r.provider },
            { header: 'MODEL', value: (r) => r.model },
            { header: 'MS', value: (r) => Math.round(r.latency_ms) },
            { header: 'TOKENS', value: (r) => r.total_tokens },
            { header: 'COST $', value: (r) => (r.cost === null ? null : r.cost.toFixed(6)) },
            { header: 'ERROR', value: (r) => r.error_code },
            { header: 'ID', value: (r) => r.id },
          ]) + (page.has_more ? `More: --after ${page.data.at(-1)?.id}\n` : ''),
      );
    });

  return logs;
}
