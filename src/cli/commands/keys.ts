/**
 * `gateway keys create|list|rotate|revoke|delete`: the workspace's gateway API keys; `gateway whoami`: the
 * calling key itself.
 */
import { Command, Option } from 'commander';
import { commandContext } from '../context.js';
import { formatRecord, formatTable, formatTime } from '../format-table.js';
import type { CliIo } from '../io.js';
import { collectPair, parseInteger } from '../parse-values.js';

interface ApiKeyRecord {
  id: string;
  name: string;
  role: string;
  status: string;
  key_prefix: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  key?: string;
}

export function keysCommand(io: CliIo): Command {
  const keys = new Command('keys').description('Gateway API keys of the workspace');

  keys
    .command('create')
    .description('Create an API key; its value is printed once')
    .requiredOption('--name <name>', 'a name to tell the key apart')
    .addOption(
      new Option('--role <role>', 'what the key may do').choices(['admin', 'member']).default('member'),
    )
    .option('--expires-at <unix-seconds>', 'when the key stops working', parseInteger)
    .option('--metadata <key=value>', 'metadata pair (repeatable)', collectPair)
    .action(
      async (options: { name: string; role: string; expiresAt?: number; metadata?: object }, command) => {
        const ctx = commandContext(command, io);
        const key = await ctx.api.request<ApiKeyRecord>('POST', '/api-keys', {
          name: options.name,
          role: options.role,
          ...(options.expiresAt !== undefined && { expires_at: options.expiresAt }),
          ...(options.metadata !== undefined && { metadata: options.metadata }),
        });
        ctx.print(
          key,
          () =>
            formatRecord({
              id: key.id,
              name: key.name,
              role: key.role,
              expires: formatTime(key.expires_at),
              key: key.key,
            }) + 'Keep the key now: it cannot be shown again.\n',
        );
      },
    );

  keys
    .command('list')
    .description('List API keys')
    .action(async (_options, command) => {
      const ctx = commandContext(command, io);
      const list = await ctx.api.request<{ data: ApiKeyRecord[] }>('GET', '/api-keys');
      ctx.print(list, () =>
        formatTable(list.data, [
          { header: 'ID', value: (k) => k.id },
          { header: 'NAME', value: (k) => k.name },
          { header: 'ROLE', value: (k) => k.role },
          { header: 'STATUS', value: (k) => k.status },
          { header: 'PREFIX', value: (k) => k.key_prefix },
          { header: 'CREATED', value: (k) => formatTime(k.created_at) },
          { header: 'EXPIRES', value: (k) => formatTime(k.expires_at) },
          { header: 'LAST USED', value: (k) => formatTime(k.last_used_at) },
        ]),
      );
    });

  keys
    .command('revoke')
    .description('Revoke an API key; it stops working at once')
    .argument('<id>', 'the key id')
    .action(async (id: string, _options, command) => {
      const ctx = commandContext(command, io);
      const key = await ctx.api.request<ApiKeyRecord>('POST', `/api-keys/${encodeURIComponent(id)}/revoke`);
      ctx.print(key, () => `Revoked ${key.id} (${key.name})\n`);
    });

  keys
    .command('rotate')
    .description('Give an API key a new value, printed once; the old value stops working at once')
    .argument('<id>', 'the key id')
    .action(async (id: string, _options, command) => {
      const ctx = commandContext(command, io);
      const key = await ctx.api.request<ApiKeyRecord>('POST', `/api-keys/${encodeURIComponent(id)}/rotate`);
      ctx.print(
        key,
        () =>
          formatRecord({ id: key.id, name: key.name, role: key.role, key: key.key }) +
          'Keep the key now: it cannot be shown again.\n',
      );
    });

  keys
    .command('delete')
    .description('Delete an API key; it stops working at once')
    .argument('<id>', 'the key id')
    .action(async (id: string, _options, command) => {
      const ctx = commandContext(command, io);
      const deleted = await ctx.api.request<{ id: string }>('DELETE', `/api-keys/${encodeURIComponent(id)}`);
      ctx.print(deleted, () => `Deleted ${deleted.id}\n`);
    });

  return keys;
}

interface SelfRecord extends ApiKeyRecord {
  workspace: { id: string; slug: string; name: string } | null;
  scope: string;
}

export function whoamiCommand(io: CliIo): Command {
  return new Command('whoami')
    .description('The API key in use: its name, role, workspace and scope (never its value)')
    .action(async (_options, command) => {
      const ctx = commandContext(command, io);
      const self = await ctx.api.request<SelfRecord>('GET', '/api-keys/self');
      ctx.print(self, () =>
        formatRecord({
          id: self.id,
          name: self.name,
          role: self.role,
          workspace: self.workspace?.slug,
          scope: self.scope,
          expires: formatTime(self.expires_at),
        }),
      );
    });
}
