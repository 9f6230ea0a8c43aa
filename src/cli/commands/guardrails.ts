/**
 * `gateway guardrails create|list|get|update|versions|delete`: stored guardrails, which a config lists by
 * slug in `input_guardrails` / `output_guardrails`. Credentials inside (a webhook's headers) come back
 * redacted.
 */
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { CliError } from '../api-client.js';
import { commandContext } from '../context.js';
import { formatRecord, formatTable, formatTime } from '../format-table.js';
import type { CliIo } from '../io.js';
import { parseJsonObject } from '../parse-values.js';

interface GuardrailRecord {
  id: string;
  slug: string;
  name: string;
  version: number;
  guardrail: Record<string, unknown>;
  created_at: number;
  updated_at: number;
}

interface GuardrailVersionRecord {
  version: number;
  guardrail: Record<string, unknown>;
  created_at: number;
}

interface DefinitionOptions {
  guardrail?: string;
  file?: string;
}

/** The definition from `--guardrail <json>` or `--file <path>`; undefined when neither is given. */
async function readDefinition(
  options: DefinitionOptions,
  io: CliIo,
): Promise<Record<string, unknown> | undefined> {
  if (options.guardrail !== undefined && options.file !== undefined) {
    throw new CliError('Give the guardrail with only one of --guardrail <json> or --file <path>');
  }
  if (options.guardrail !== undefined) return parseJsonObject(options.guardrail, '--guardrail');
  if (options.file === undefined) return undefined;
  const text = await (io.readFile ?? ((path: string) => readFile(path, 'utf8')))(options.file);
  return parseJsonObject(text, `The file ${options.file}`);
}

const path = (slug: string) => `/guardrails/${encodeURIComponent(slug)}`;

function summary(guardrail: GuardrailRecord): string {
  return formatRecord({
    id: guardrail.id,
    slug: guardrail.slug,
    name: guardrail.name,
    version: guardrail.version,
    updated: formatTime(guardrail.updated_at),
  });
}

export function guardrailsCommand(io: CliIo): Command {
  const guardrails = new Command('guardrails').description('Stored guardrails of the workspace');

  guardrails
    .command('create')
    .description('Store a guardrail (listed in a config as "input_guardrails": ["<slug>"])')
    .requiredOption('--slug <slug>', 'how configs name it')
    .option('--name <name>', 'a display name (default: the slug)')
    .option('--guardrail <json>', 'the definition as JSON, e.g. {"default.contains": {…}, "deny": true}')
    .option('--file <path>', 'read the definition from a JSON file')
    .action(async (options: DefinitionOptions & { slug: string; name?: string }, command) => {
      const ctx = commandContext(command, io);
      const guardrail = await readDefinition(options, io);
      if (guardrail === undefined) {
        throw new CliError('Give the guardrail with one of --guardrail <json> or --file <path>');
      }
      const stored = await ctx.api.request<GuardrailRecord>('POST', '/guardrails', {
        slug: options.slug,
        ...(options.name !== undefined && { name: options.name }),
        guardrail,
      });
      ctx.print(stored, () => summary(stored));
    });

  guardrails
    .command('list')
    .description('List stored guardrails')
    .action(async (_options, command) => {
      const ctx = commandContext(command, io);
      const list = await ctx.api.request<{ data: GuardrailRecord[] }>('GET', '/guardrails');
      ctx.print(list, () =>
        formatTable(list.data, [
          { header: 'SLUG', value: (g) => g.slug },
          { header: 'NAME', value: (g) => g.name },
          { header: 'VERSION', value: (g) => g.version },
          { header: 'UPDATED', value: (g) => formatTime(g.updated_at) },
          { header: 'ID', value: (g) => g.id },
        ]),
      );
    });

  guardrails
    .command('get')
    .description('Show a stored guardrail (its latest version)')
    .argument('<slug-or-id>', 'its slug or id')
    .action(async (slug: string, _options, command) => {
      const ctx = commandContext(command, io);
      const guardrail = await ctx.api.request<GuardrailRecord>('GET', path(slug));
      ctx.print(guardrail, () => summary(guardrail) + `${JSON.stringify(guardrail.guardrail, null, 2)}\n`);
    });

  guardrails
    .command('update')
    .description('Rename a guardrail, or store a new definition as its next version')
    .argument('<slug-or-id>', 'its slug or id')
    .option('--name <name>', 'a new display name')
    .option('--guardrail <json>', 'the new definition as JSON')
    .option('--file <path>', 'read the new definition from a JSON file')
    .action(async (slug: string, options: DefinitionOptions & { name?: string }, command) => {
      const ctx = commandContext(command, io);
      const guardrail = await readDefinition(options, io);
      if (guardrail === undefined && options.name === undefined) {
        throw new CliError('Give --name, or the new definition with --guardrail <json> or --file <path>');
      }
      const updated = await ctx.api.request<GuardrailRecord>('PATCH', path(slug), {
        ...(options.name !== undefined && { name: options.name }),
        ...(guardrail !== undefined && { guardrail }),
      });
      ctx.print(updated, () => summary(updated));
    });

  guardrails
    .command('versions')
    .description("List a guardrail's versions, oldest first")
    .argument('<slug-or-id>', 'its slug or id')
    .action(async (slug: string, _options, command) => {
      const ctx = commandContext(command, io);
      const list = await ctx.api.request<{ data: GuardrailVersionRecord[] }>('GET', `${path(slug)}/versions`);
      ctx.print(list, () =>
        formatTable(list.data, [
          { header: 'VERSION', value: (v) => v.version },
          { header: 'CREATED', value: (v) => formatTime(v.created_at) },
          { header: 'GUARDRAIL', value: (v) => v.guardrail },
        ]),
      );
    });

  guardrails
    .command('delete')
    .description('Delete a guardrail; refused while configs or prompts list it')
    .argument('<slug-or-id>', 'its slug or id')
    .option('--force', 'even when configs or prompts list it (their calls then fail)')
    .action(async (slug: string, options: { force?: boolean }, command) => {
      const ctx = commandContext(command, io);
      const query = options.force ? '?force=true' : '';
      const result = await ctx.api.request<{ id: string }>('DELETE', `${path(slug)}${query}`);
      ctx.print(result, () => `Deleted guardrail ${slug} (${result.id})\n`);
    });

  return guardrails;
}
