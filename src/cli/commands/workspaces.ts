/** `gateway workspaces create|list|delete`: the organisation's workspaces (an organisation-level admin key). */
import { Command } from 'commander';
import { commandContext } from '../context.js';
import { formatRecord, formatTable, formatTime } from '../format-table.js';
import type { CliIo } from '../io.js';

interface WorkspaceRecord {
  id: string;
  slug: string;
  name: string;
  created_at: number;
  admin_key?: { id: string; key: string };
}

export function workspacesCommand(io: CliIo): Command {
  const workspaces = new Command('workspaces').description("The organisation's workspaces");

  workspaces
    .command('create')
    .description('Create a workspace; its first admin key is printed once')
    .requiredOption('--name <name>', 'a display name')
    .requiredOption('--slug <slug>', 'letters, digits, ".", "_", "-"')
    .action(async (options: { name: string; slug: string }, command) => {
      const ctx = commandContext(command, io);
      const workspace = await ctx.api.request<WorkspaceRecord>('POST', '/workspaces', {
        name: options.name,
        slug: options.slug,
      });
      ctx.print(
        workspace,
        () =>
          formatRecord({
            id: workspace.id,
            slug: workspace.slug,
            name: workspace.name,
            'admin key id': workspace.admin_key?.id,
            'admin key': workspace.admin_key?.key,
          }) + 'Keep the admin key now: it cannot be shown again.\n',
      );
    });

  workspaces
    .command('list')
    .description('List workspaces (a workspace admin key sees its own)')
    .action(async (_options, command) => {
      const ctx = commandContext(command, io);
      const list = await ctx.api.request<{ data: WorkspaceRecord[] }>('GET', '/workspaces');
      ctx.print(list, () =>
        formatTable(list.data, [
          { header: 'ID', value: (w) => w.id },
          { header: 'SLUG', value: (w) => w.slug },
          { header: 'NAME', value: (w) => w.name },
          { header: 'CREATED', value: (w) => formatTime(w.created_at) },
        ]),
      );
    });

  workspaces
    .command('delete')
    .description('Delete a workspace: its keys stop working at once (never the home workspace)')
    .argument('<slug>', 'its slug or id')
    .action(async (slug: string, _options, command) => {
      const ctx = commandContext(command, io);
      const result = await ctx.api.request<{ id: string }>(
        'DELETE',
        `/workspaces/${encodeURIComponent(slug)}`,
      );
      ctx.print(result, () => `Deleted workspace ${slug} (${result.id})\n`);
    });

  return workspaces;
}
