/**
 * `gateway semantic-cache delete|clear`: removing semantic cache entries (docs/cache.md#invalidation).
 * `--workspace` names another workspace (an organisation-level admin key only).
 */
import { Command } from 'commander';
import { commandContext } from '../context.js';
import type { CliIo } from '../io.js';

const base = '/cache/semantic/entries';

function withQuery(path: string, query: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, value);
  return search.size > 0 ? `${path}?${search.toString()}` : path;
}

export function semanticCacheCommand(io: CliIo): Command {
  const cache = new Command('semantic-cache').description('Entries of the semantic cache');

  cache
    .command('delete')
    .description('Remove one entry (the x-gateway-cache-entry-id of an answer)')
    .argument('<id>', 'its id')
    .option('--workspace <id-or-slug>', 'another workspace (an organisation-level admin key only)')
    .action(async (id: string, options: { workspace?: string }, command) => {
      const ctx = commandContext(command, io);
      const path = withQuery(`${base}/${encodeURIComponent(id)}`, { workspace_id: options.workspace });
      const result = await ctx.api.request<{ id: string }>('DELETE', path);
      ctx.print(result, () => `Deleted semantic cache entry ${result.id}\n`);
    });

  cache
    .command('clear')
    .description('Remove every entry of a cache namespace')
    .requiredOption('--namespace <name>', "the namespace ('' for requests sent without one)")
    .option('--workspace <id-or-slug>', 'another workspace (an organisation-level admin key only)')
    .action(async (options: { namespace: string; workspace?: string }, command) => {
      const ctx = commandContext(command, io);
      const path = withQuery(base, { namespace: options.namespace, workspace_id: options.workspace });
      const result = await ctx.api.request<{ deleted: number }>('DELETE', path);
      ctx.print(result, () => `Deleted ${result.deleted} semantic cache entries\n`);
    });

  return cache;
}
