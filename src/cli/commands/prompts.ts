/**
 * `gateway prompts create|list|get|update|publish|versions|version|delete|render|run` and
 * `gateway prompts partials create|list|get|update|publish|versions|delete`: stored prompt templates and
 * the partials they include, with their versions. An inline config's credentials come back redacted.
 */
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { CliError } from '../api-client.js';
import { commandContext } from '../context.js';
import { formatRecord, formatTable, formatTime } from '../format-table.js';
import type { CliIo } from '../io.js';
import { parseInteger, parseJsonObject } from '../parse-values.js';

interface VersionedRecord {
  id: string;
  slug: string;
  name: string;
  version: number;
  published_version: number;
  string: string;
  created_at: number;
  updated_at: number;
}

interface VersionRecord {
  version: number;
  string: string;
  parameters?: Record<string, unknown>;
  created_at: number;
}

interface TemplateOptions {
  string?: string;
  file?: string;
}

interface PromptOptions extends TemplateOptions {
  name?: string;
  templateType?: string;
  parameters?: string;
  virtualKey?: string;
  provider?: string;
  config?: string;
}

/** The template from `--string <text>` or `--file <path>`. */
async function readTemplate(options: TemplateOptions, io: CliIo): Promise<string> {
  if ((options.string === undefined) === (options.file === undefined)) {
    throw new CliError('Give the template with one of --string <text> or --file <path>');
  }
  if (options.string !== undefined) return options.string;
  return (io.readFile ?? ((path: string) => readFile(path, 'utf8')))(options.file as string);
}

/** A config option: a stored config's id or slug, or an inline config as JSON. */
function configValue(text: string): string | Record<string, unknown> {
  return text.trim().startsWith('{') ? parseJsonObject(text, '--config') : text;
}

async function promptBody(options: PromptOptions, io: CliIo): Promise<Record<string, unknown>> {
  return {
    string: await readTemplate(options, io),
    ...(options.name !== undefined && { name: options.name }),
    ...(options.templateType !== undefined && { template_type: options.templateType }),
    ...(options.parameters !== undefined && {
      parameters: parseJsonObject(options.parameters, '--parameters'),
    }),
    ...(options.virtualKey !== undefined && { virtual_key: options.virtualKey }),
    ...(options.provider !== undefined && { provider: options.provider }),
    ...(options.config !== undefined && { config: configValue(options.config) }),
  };
}

function summary(record: VersionedRecord): string {
  return formatRecord({
    id: record.id,
    slug: record.slug,
    name: record.name,
    version: record.version,
    published: record.published_version,
    updated: formatTime(record.updated_at),
  });
}

function withPromptOptions(command: Command): Command {
  return command
    .option('--string <text>', 'the template: a JSON messages array as Mustache text (or a text prompt)')
    .option('--file <path>', 'read the template from a file')
    .option('--name <name>', 'a display name (default: the slug)')
    .option('--template-type <type>', 'chat (default) or completion')
    .option(
      '--parameters <json>',
      'request fields as JSON, e.g. {"model": "gpt-4o-mini", "temperature": 0.2}',
    )
    .option('--virtual-key <slug>', 'send calls with this virtual key')
    .option('--provider <provider>', 'send calls to this provider (@slug or a name)')
    .option('--config <id-or-json>', 'send calls under this stored config, or this inline config');
}

const listColumns = [
  { header: 'SLUG', value: (r: VersionedRecord) => r.slug },
  { header: 'NAME', value: (r: VersionedRecord) => r.name },
  { header: 'LATEST', value: (r: VersionedRecord) => r.version },
  { header: 'PUBLISHED', value: (r: VersionedRecord) => r.published_version },
  { header: 'UPDATED', value: (r: VersionedRecord) => formatTime(r.updated_at) },
  { header: 'ID', value: (r: VersionedRecord) => r.id },
];

const versionColumns = [
  { header: 'VERSION', value: (v: VersionRecord) => v.version },
  { header: 'CREATED', value: (v: VersionRecord) => formatTime(v.created_at) },
  { header: 'TEMPLATE', value: (v: VersionRecord) => v.string },
];

/** What --force does on the commands that take it: those the gateway refuses while they would break what
 * depends on them (a partial's publish and delete; a prompt's delete). */
interface Forceable {
  publish?: string;
  delete: string;
}

/** The commands prompts and partials share: list, get, publish, versions, delete. */
function commonCommands(parent: Command, io: CliIo, base: string, noun: string, forceable: Forceable): void {
  const path = (slug: string) => `${base}/${encodeURIComponent(slug)}`;
  const force = (options: { force?: boolean }) => (options.force ? '?force=true' : '');
  const withForce = (command: Command, description: string | undefined) =>
    description === undefined ? command : command.option('--force', description);
  parent
    .command('list')
    .description(`List stored ${noun}s`)
    .option('--name <text>', 'only those whose name contains it')
    .action(async (options: { name?: string }, command) => {
      const ctx = commandContext(command, io);
      const query = options.name === undefined ? '' : `?name=${encodeURIComponent(options.name)}`;
      const list = await ctx.api.request<{ data: VersionedRecord[] }>('GET', `${base}${query}`);
      ctx.print(list, () => formatTable(list.data, listColumns));
    });
  parent
    .command('get')
    .description(`Show a ${noun} (its latest version)`)
    .argument('<slug-or-id>', 'its slug or id')
    .action(async (slug: string, _options, command) => {
      const ctx = commandContext(command, io);
      const record = await ctx.api.request<VersionedRecord>('GET', path(slug));
      ctx.print(record, () => summary(record) + `${record.string}\n`);
    });
  withForce(
    parent
      .command('publish')
      .description(`Publish a version of a ${noun}: what calls without @… use, on every node at once`)
      .argument('<slug-or-id>', 'its slug or id')
      .requiredOption('--version <n>', 'the version to publish', parseInteger),
    forceable.publish,
  ).action(async (slug: string, options: { version: number; force?: boolean }, command) => {
    const ctx = commandContext(command, io);
    const record = await ctx.api.request<VersionedRecord>('PUT', `${path(slug)}/publish${force(options)}`, {
      version: options.version,
    });
    ctx.print(record, () => summary(record));
  });
  parent
    .command('versions')
    .description(`List a ${noun}'s versions, oldest first`)
    .argument('<slug-or-id>', 'its slug or id')
    .action(async (slug: string, _options, command) => {
      const ctx = commandContext(command, io);
      const list = await ctx.api.request<{ data: VersionRecord[] }>('GET', `${path(slug)}/versions`);
      ctx.print(list, () => formatTable(list.data, versionColumns));
    });
  withForce(
    parent.command('delete').description(`Delete a ${noun}`).argument('<slug-or-id>', 'its slug or id'),
    forceable.delete,
  ).action(async (slug: string, options: { force?: boolean }, command) => {
    const ctx = commandContext(command, io);
    const result = await ctx.api.request<{ id: string }>('DELETE', `${path(slug)}${force(options)}`);
    ctx.print(result, () => `Deleted ${noun} ${slug} (${result.id})\n`);
  });
}

function partialsCommand(io: CliIo): Command {
  const partials = new Command('partials').description('Partials that templates include with {{>slug}}');
  partials
    .command('create')
    .description('Store a partial: version 1, published')
    .requiredOption('--slug <slug>', 'how templates name it')
    .option('--name <name>', 'a display name (default: the slug)')
    .option('--string <text>', 'the partial text (Mustache)')
    .option('--file <path>', 'read the text from a file')
    .action(async (options: TemplateOptions & { slug: string; name?: string }, command) => {
      const ctx = commandContext(command, io);
      const stored = await ctx.api.request<VersionedRecord>('POST', '/prompts/partials', {
        slug: options.slug,
        ...(options.name !== undefined && { name: options.name }),
        string: await readTemplate(options, io),
      });
      ctx.print(stored, () => summary(stored));
    });
  partials
    .command('update')
    .description('Store the next version of a partial (not published)')
    .argument('<slug-or-id>', 'its slug or id')
    .option('--name <name>', 'a new display name')
    .option('--string <text>', 'the new text')
    .option('--file <path>', 'read the new text from a file')
    .option('--force', 'even when prompts that include its latest version would fail')
    .action(async (slug: string, options: TemplateOptions & { name?: string; force?: boolean }, command) => {
      const ctx = commandContext(command, io);
      const updated = await ctx.api.request<VersionedRecord>(
        'PUT',
        `/prompts/partials/${encodeURIComponent(slug)}${options.force ? '?force=true' : ''}`,
        {
          ...(options.name !== undefined && { name: options.name }),
          string: await readTemplate(options, io),
        },
      );
      ctx.print(updated, () => summary(updated));
    });
  const breaksPrompts = 'even when prompts that include it would fail';
  commonCommands(partials, io, '/prompts/partials', 'partial', {
    publish: breaksPrompts,
    delete: breaksPrompts,
  });
  return partials;
}

export function promptsCommand(io: CliIo): Command {
  const prompts = new Command('prompts').description(
    'Stored prompt templates of the workspace, with versions',
  );
  const path = (slug: string) => `/prompts/${encodeURIComponent(slug)}`;

  withPromptOptions(
    prompts
      .command('create')
      .description('Store a prompt: version 1, published')
      .requiredOption('--slug <slug>', 'how calls name it'),
  ).action(async (options: PromptOptions & { slug: string }, command) => {
    const ctx = commandContext(command, io);
    const stored = await ctx.api.request<VersionedRecord>('POST', '/prompts', {
      slug: options.slug,
      ...(await promptBody(options, io)),
    });
    ctx.print(stored, () => summary(stored));
  });

  withPromptOptions(
    prompts
      .command('update')
      .description('Store the next version of a prompt (not published: see `prompts publish`)')
      .argument('<slug-or-id>', 'its slug or id'),
  ).action(async (slug: string, options: PromptOptions, command) => {
    const ctx = commandContext(command, io);
    const updated = await ctx.api.request<VersionedRecord>('PUT', path(slug), await promptBody(options, io));
    ctx.print(updated, () => summary(updated));
  });

  prompts
    .command('version')
    .description('Show one version of a prompt')
    .argument('<slug-or-id>', 'its slug or id')
    .argument('<version>', 'the version number', parseInteger)
    .action(async (slug: string, version: number, _options, command) => {
      const ctx = commandContext(command, io);
      const record = await ctx.api.request<VersionRecord>('GET', `${path(slug)}/versions/${version}`);
      ctx.print(record, () => `${JSON.stringify(record, null, 2)}\n`);
    });

  /** A render's answer with the request once, as `body`: the answer gives it again as `data` beside
   * `success`, where some SDKs read it. */
  const renderShown = (answer: unknown): unknown => {
    if (typeof answer !== 'object' || answer === null) return answer;
    const { success: _success, data: _data, ...shown } = answer as Record<string, unknown>;
    return shown;
  };

  for (const [verb, description] of [
    ['render', 'Show the request a prompt makes with these variables, without calling a model'],
    ['run', 'Run a prompt and show its answer (the envelope {status, headers, body})'],
  ] as const) {
    prompts
      .command(verb)
      .description(description)
      .argument('<prompt>', 'its slug or id, @latest or @<n> for a version other than the published one')
      .requiredOption('--variables <json>', 'the variables as JSON, e.g. {"name": "Ada"}')
      .option(
        '--body <json>',
        'other request fields as JSON, overriding the version, e.g. {"temperature": 0}',
      )
      .action(async (prompt: string, options: { variables: string; body?: string }, command) => {
        const ctx = commandContext(command, io);
        const body = {
          ...(options.body !== undefined && parseJsonObject(options.body, '--body')),
          variables: parseJsonObject(options.variables, '--variables'),
        };
        const suffix = verb === 'render' ? 'render' : 'completions';
        const answer = await ctx.api.request<unknown>('POST', `/prompts/${prompt}/${suffix}`, body);
        const shown = verb === 'render' ? renderShown(answer) : answer;
        ctx.print(shown, () => `${JSON.stringify(shown, null, 2)}\n`);
      });
  }

  commonCommands(prompts, io, '/prompts', 'prompt', {
    delete: 'even when targets of stored configs name it (their calls then fail)',
  });
  prompts.addCommand(partialsCommand(io));
  return prompts;
}
