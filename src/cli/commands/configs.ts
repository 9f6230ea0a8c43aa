/** `gateway configs create|list|get|delete`: stored configs (credentials inside are shown redacted). */
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { CliError } from '../api-client.js';
import { commandContext } from '../context.js';
import { formatRecord, formatTable, formatTime } from '../format-table.js';
import type { CliIo } from '../io.js';
import { parseJsonObject } from '../parse-values.js';

interface ConfigRecord {
  id: string;
  slug: string;
  name: string;
  version: number;
  status: string;
  config: Record<string, unknown>;
  created_at: number;
  updated_at: number;
}

export function configsCommand(io: CliIo): Command {
  const configs = new Command('configs').description('Stored configs of the workspace');

  configs
    .command('create')
    .description('Store a config (used as x-gateway-config: <slug>)')
    .requiredOption('--slug <slug>', 'how requests name it')
    .option('--name <name>', 'a display name (default: the slug)')
    .option('--config <json>', 'the config object as JSON')
    .option('--file <path>', 'read the config object from a JSON file')
    .action(async (options: { slug: string; name?: string; config?: string; file?: string }, command) => {
      const ctx = commandContext(command, io);
      if ((options.config === undefined) === (options.file === undefined)) {
        throw new CliError('Give the config with exactly one of --config <json> or --file <path>');
      }
      const text =
        options.config ??
        (await (io.readFile ?? ((path: string) => readFile(path, 'utf8')))(options.file as string));
      const config = parseJsonObject(text, options.file ? `The file ${options.file}` : '--config');
      const stored = await ctx.api.request<ConfigRecord>('POST', '/configs', {
        slug: options.slug,
        ...(options.name !== undefined && { name: options.name }),
        config,
      });
      ctx.print(stored, () =>
        formatRecord({ id: stored.id, slug: stored.slug, name: stored.name, version: stored.version }),
      );
    });

  configs
    .command('list')
    .description('List stored configs')
    .action(async (_options, command) => {
      const ctx = commandContext(command, io);
      const list = await ctx.api.request<{ data: ConfigRecord[] }>('GET', '/configs');
      ctx.print(list, () =>
        formatTable(list.data, [
          { header: 'SLUG', value: (c) => c.slug },
          { header: 'NAME', value: (c) => c.name },
          { header: 'VERSION', value: (c) => c.version },
          { header: 'STATUS', value: (c) => c.status },
          { header: 'UPDATED', value: (c) => formatTime(c.updated_at) },
          { header: 'ID', value: (c) => c.id },
        ]),
      );
    });

  configs
    .command('get')
    .description('Show a stored config')
    .argument('<slug-or-id>', 'its slug or id')
    .action(async (slug: string, _options, command) => {
      const ctx = commandContext(command, io);
      const config = await ctx.api.request<ConfigRecord>('GET', `/configs/${encodeURIComponent(slug)}`);
      ctx.print(
        config,
        () =>
          formatRecord({
            id: config.id,
            slug: config.slug,
            name: config.name,
            version: config.version,
            status: config.status,
            updated: formatTime(config.updated_at),
          }) + `${JSON.stringify(config.config, null, 2)}\n`,
      );
    });

  configs
    .command('delete')
    .description('Delete a stored config')
    .argument('<slug-or-id>', 'its slug or id')
    .option(
      '--force',
      'even when prompts send their calls to it, or configs, prompts or guardrails embed or judge through it (those calls then fail)',
    )
    .action(async (slug: string, options: { force?: boolean }, command) => {
      const ctx = commandContext(command, io);
      const query = options.force ? '?force=true' : '';
      const result = await ctx.api.request<{ id: string }>(
        'DELETE',
        `/configs/${encodeURIComponent(slug)}${query}`,
      );
      ctx.print(result, () => `Deleted config ${slug} (${result.id})\n`);
    });

  return configs;
}
