/**
 * `gateway virtual-keys …` and `gateway providers …`: stored provider credentials. Secrets can be read
 * from an environment variable (`--api-key-env`) so they stay out of shell history and process lists.
 */
import { Command } from 'commander';
import { CliError } from '../api-client.js';
import { commandContext } from '../context.js';
import { formatRecord, formatTable, formatTime } from '../format-table.js';
import type { CliIo } from '../io.js';
import { collectPair, collectSetting } from '../parse-values.js';

interface CredentialRecord {
  id: string;
  slug: string;
  name: string;
  provider: string;
  status: string;
  secret_keys: string[];
  api_key_hint: string | null;
  settings: Record<string, unknown>;
  created_at: number;
}

interface CreateOptions {
  slug: string;
  provider: string;
  name?: string;
  apiKey?: string;
  apiKeyEnv?: string;
  customHost?: string;
  set?: Record<string, unknown>;
  setEnv?: Record<string, string>;
}

export function credentialCommand(
  io: CliIo,
  spec: {
    name: string;
    path: string;
    noun: string;
    usage: (slug: string) => string;
    /** What names one and keeps it from being deleted without --force. */
    namedBy: string;
  },
): Command {
  const group = new Command(spec.name).description(`Stored provider credentials: ${spec.noun}s`);

  group
    .command('create')
    .description(`Create a ${spec.noun}`)
    .requiredOption('--slug <slug>', `how requests name it (${spec.usage('<slug>')})`)
    .requiredOption('--provider <provider>', 'provider name, e.g. openai, anthropic, bedrock')
    .option('--name <name>', 'a display name (default: the slug)')
    .option('--api-key <key>', 'the provider API key')
    .option('--api-key-env <variable>', 'read the provider API key from this environment variable')
    .option('--custom-host <url>', 'base URL of a privately hosted, provider-compatible endpoint')
    .option(
      '--set <key=value>',
      'any other provider setting, e.g. cloudc_region=us-east-1 (repeatable; JSON values allowed)',
      collectSetting,
    )
    .option(
      '--set-env <key=VARIABLE>',
      'a provider setting read from an environment variable, e.g. cloudc_secret_access_key=AWS_SECRET (repeatable)',
      collectPair,
    )
    .action(async (options: CreateOptions, command) => {
      const ctx = commandContext(command, io);
      let apiKey = options.apiKey;
      if (options.apiKeyEnv !== undefined) {
        apiKey = io.env[options.apiKeyEnv];
        if (!apiKey) throw new CliError(`The environment variable ${options.apiKeyEnv} is not set`);
      }
      const fromEnv: Record<string, string> = {};
      for (const [key, variable] of Object.entries(options.setEnv ?? {})) {
        const value = io.env[variable];
        if (!value) throw new CliError(`The environment variable ${variable} is not set`);
        fromEnv[key] = value;
      }
      const credential = await ctx.api.request<CredentialRecord>('POST', spec.path, {
        ...options.set,
        ...fromEnv,
        slug: options.slug,
        provider: options.provider,
        ...(options.name !== undefined && { name: options.name }),
        ...(apiKey !== undefined && { api_key: apiKey }),
        ...(options.customHost !== undefined && { custom_host: options.customHost }),
      });
      ctx.print(
        credential,
        () =>
          formatRecord({
            id: credential.id,
            slug: credential.slug,
            provider: credential.provider,
            secrets: credential.secret_keys,
            api_key: credential.api_key_hint,
          }) + `Use it as ${spec.usage(credential.slug)}\n`,
      );
    });

  group
    .command('list')
    .description(`List ${spec.noun}s`)
    .action(async (_options, command) => {
      const ctx = commandContext(command, io);
      const list = await ctx.api.request<{ data: CredentialRecord[] }>('GET', spec.path);
      ctx.print(list, () =>
        formatTable(list.data, [
          { header: 'SLUG', value: (c) => c.slug },
          { header: 'NAME', value: (c) => c.name },
          { header: 'PROVIDER', value: (c) => c.provider },
          { header: 'SECRETS', value: (c) => c.secret_keys },
          { header: 'API KEY', value: (c) => c.api_key_hint },
          { header: 'CREATED', value: (c) => formatTime(c.created_at) },
          { header: 'ID', value: (c) => c.id },
        ]),
      );
    });

  group
    .command('delete')
    .description(`Delete a ${spec.noun}`)
    .argument('<slug>', 'its slug or id')
    .option('--force', `even when ${spec.namedBy} name it (their calls then fail)`)
    .action(async (slug: string, options: { force?: boolean }, command) => {
      const ctx = commandContext(command, io);
      const query = options.force ? '?force=true' : '';
      const result = await ctx.api.request<{ id: string }>(
        'DELETE',
        `${spec.path}/${encodeURIComponent(slug)}${query}`,
      );
      ctx.print(result, () => `Deleted ${spec.noun} ${slug} (${result.id})\n`);
    });

  return group;
}

export const virtualKeysCommand = (io: CliIo) =>
  credentialCommand(io, {
    name: 'virtual-keys',
    path: '/virtual-keys',
    noun: 'virtual key',
    usage: (slug) => `x-gateway-virtual-key: ${slug}`,
    // A stored guardrail's model judge calls through a virtual key, never a catalog provider.
    namedBy: 'configs, prompts or guardrails',
  });

export const providersCommand = (io: CliIo) =>
  credentialCommand(io, {
    name: 'providers',
    path: '/providers',
    noun: 'model catalog provider',
    usage: (slug) => `x-gateway-provider: @${slug}`,
    namedBy: 'configs or prompts',
  });
