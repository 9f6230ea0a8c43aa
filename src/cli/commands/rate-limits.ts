/**
 * `gateway rate-limits create|list|get|update|delete`: rate-limit policies (docs/rate-limits.md).
 * Conditions are given as `--condition key=value` (a comma-separated value means any of them, `*` any value)
 * with `--exclude key=value[,…]` adding `excludes` to the condition on that key; `--group-by key` is
 * repeatable. `--workspace` names another workspace (an organisation-level admin key only).
 */
import { Command, InvalidArgumentError } from 'commander';
import { CliError } from '../api-client.js';
import { commandContext } from '../context.js';
import { formatRecord, formatTable } from '../format-table.js';
import type { CliIo } from '../io.js';

interface PolicyRecord {
  id: string;
  name: string;
  type: string;
  unit: string;
  value: number;
  status: string;
  workspace_id: string;
  conditions: Array<{ key: string; value: string | string[]; excludes?: string | string[] }>;
  group_by: Array<{ key: string }>;
  last_updated_at: string;
}

type Pair = [key: string, values: string[]];

function pair(text: string): Pair {
  const at = text.indexOf('=');
  if (at <= 0 || at === text.length - 1) throw new InvalidArgumentError(`expected key=value, got "${text}"`);
  return [text.slice(0, at), text.slice(at + 1).split(',')];
}

const collectPairs = (text: string, previous: Pair[] = []): Pair[] => [...previous, pair(text)];
const collect = (text: string, previous: string[] = []): string[] => [...previous, text];

function parseValue(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value))
    throw new InvalidArgumentError(`expected a number, got "${text}"`);
  return value;
}

const one = (values: string[]) => (values.length === 1 ? values[0] : values);

/** The conditions of `--condition` and `--exclude`; undefined when neither was given. */
function conditionsOf(options: PolicyOptions): PolicyRecord['conditions'] | undefined {
  if (!options.condition && !options.exclude) return undefined;
  const conditions = (options.condition ?? []).map(([key, values]) => ({
    key,
    value: one(values) as string | string[],
  })) as PolicyRecord['conditions'];
  for (const [key, values] of options.exclude ?? []) {
    const condition = conditions.find((c) => c.key === key);
    if (!condition) throw new CliError(`--exclude ${key}=… needs a --condition on ${key} (e.g. ${key}=*)`);
    condition.excludes = one(values);
  }
  return conditions;
}

interface PolicyOptions {
  name?: string;
  type?: string;
  unit?: string;
  value?: number;
  status?: string;
  condition?: Pair[];
  exclude?: Pair[];
  groupBy?: string[];
  workspace?: string;
}

function fieldsOf(options: PolicyOptions): Record<string, unknown> {
  const conditions = conditionsOf(options);
  return {
    ...(options.name !== undefined && { name: options.name }),
    ...(options.type !== undefined && { type: options.type }),
    ...(options.unit !== undefined && { unit: options.unit }),
    ...(options.value !== undefined && { value: options.value }),
    ...(options.status !== undefined && { status: options.status }),
    ...(conditions && { conditions }),
    ...(options.groupBy && { group_by: options.groupBy.map((key) => ({ key })) }),
  };
}

const base = '/policies/rate-limits';
const withWorkspace = (path: string, workspace: string | undefined) =>
  workspace === undefined ? path : `${path}?workspace_id=${encodeURIComponent(workspace)}`;
const policyPath = (id: string, workspace: string | undefined) =>
  withWorkspace(`${base}/${encodeURIComponent(id)}`, workspace);

function describeConditions(policy: PolicyRecord): string {
  return policy.conditions
    .map((c) => {
      const value = Array.isArray(c.value) ? c.value.join('|') : c.value;
      const excludes = c.excludes === undefined ? '' : ` except ${[c.excludes].flat().join('|')}`;
      return `${c.key}=${value}${excludes}`;
    })
    .join(' and ');
}

function summary(policy: PolicyRecord): string {
  return formatRecord({
    id: policy.id,
    name: policy.name,
    limit: `${policy.value} ${policy.type} ${policy.unit}`,
    status: policy.status,
    when: describeConditions(policy),
    'group by': policy.group_by.map((g) => g.key).join(', '),
    workspace: policy.workspace_id,
    updated: policy.last_updated_at,
  });
}

export function rateLimitsCommand(io: CliIo): Command {
  const policies = new Command('rate-limits').description('Rate-limit policies of the workspace');
  const policyOptions = (command: Command) =>
    command
      .option('--name <name>', 'a display name')
      .option('--type <type>', 'requests or tokens')
      .option('--unit <unit>', 'rpm, rph or rpd')
      .option('--value <number>', 'the limit per unit', parseValue)
      .option(
        '--condition <key=value>',
        'the calls it applies to (repeatable; a,b = any of; * = any)',
        collectPairs,
      )
      .option(
        '--exclude <key=value>',
        'values the condition on key leaves out (comma-separated)',
        collectPairs,
      )
      .option('--group-by <key>', 'a counter per value of key (repeatable)', collect)
      .option('--workspace <id-or-slug>', 'another workspace (an organisation-level admin key only)');

  policyOptions(
    policies
      .command('create')
      .description(
        'Create a policy, e.g. --type requests --unit rpm --value 60 --condition api_key=* --group-by api_key',
      ),
  ).action(async (options: PolicyOptions, command) => {
    const ctx = commandContext(command, io);
    const body = fieldsOf(options);
    for (const [field, option] of [
      ['type', '--type'],
      ['unit', '--unit'],
      ['value', '--value'],
      ['conditions', '--condition'],
      ['group_by', '--group-by'],
    ]) {
      if (body[field] === undefined) throw new CliError(`Give ${option}`);
    }
    const created = await ctx.api.request<{ id: string }>('POST', base, {
      ...body,
      ...(options.workspace !== undefined && { workspace_id: options.workspace }),
    });
    ctx.print(created, () => `Created rate-limit policy ${created.id}\n`);
  });

  policies
    .command('list')
    .description('List policies')
    .option('--type <type>', 'requests or tokens')
    .option('--unit <unit>', 'rpm, rph or rpd')
    .option('--status <status>', 'active (default) or archived')
    .option('--page-size <n>', 'policies per page (default 100)')
    .option('--page <n>', 'the page, from 0')
    .option('--workspace <id-or-slug>', 'another workspace (an organisation-level admin key only)')
    .action(
      async (
        options: {
          type?: string;
          unit?: string;
          status?: string;
          pageSize?: string;
          page?: string;
          workspace?: string;
        },
        command,
      ) => {
        const ctx = commandContext(command, io);
        const query = new URLSearchParams();
        for (const [name, value] of [
          ['workspace_id', options.workspace],
          ['type', options.type],
          ['unit', options.unit],
          ['status', options.status],
          ['page_size', options.pageSize],
          ['current_page', options.page],
        ] as const) {
          if (value !== undefined) query.set(name, value);
        }
        const search = query.size > 0 ? `?${query.toString()}` : '';
        const list = await ctx.api.request<{ data: PolicyRecord[]; total: number }>(
          'GET',
          `${base}${search}`,
        );
        ctx.print(
          list,
          () =>
            formatTable(list.data, [
              { header: 'ID', value: (p) => p.id },
              { header: 'NAME', value: (p) => p.name },
              { header: 'LIMIT', value: (p) => `${p.value} ${p.type} ${p.unit}` },
              { header: 'WHEN', value: describeConditions },
              { header: 'GROUP BY', value: (p) => p.group_by.map((g) => g.key).join(', ') },
              { header: 'STATUS', value: (p) => p.status },
            ]) + `${list.data.length} of ${list.total}\n`,
        );
      },
    );

  policies
    .command('get')
    .description('Show a policy')
    .argument('<id>', 'its id')
    .option('--workspace <id-or-slug>', 'another workspace (an organisation-level admin key only)')
    .action(async (id: string, options: { workspace?: string }, command) => {
      const ctx = commandContext(command, io);
      const policy = await ctx.api.request<PolicyRecord>('GET', policyPath(id, options.workspace));
      ctx.print(policy, () => summary(policy));
    });

  policyOptions(
    policies
      .command('update')
      .description('Change a policy: the options given replace those fields')
      .argument('<id>', 'its id')
      .option('--status <status>', 'active or archived (an archived policy governs nothing)'),
  ).action(async (id: string, options: PolicyOptions, command) => {
    const ctx = commandContext(command, io);
    const body = fieldsOf(options);
    if (Object.keys(body).length === 0) throw new CliError('Give at least one field to change');
    const updated = await ctx.api.request<PolicyRecord>('PUT', policyPath(id, options.workspace), body);
    ctx.print(updated, () => summary(updated));
  });

  policies
    .command('delete')
    .description('Delete a policy')
    .argument('<id>', 'its id')
    .option('--workspace <id-or-slug>', 'another workspace (an organisation-level admin key only)')
    .action(async (id: string, options: { workspace?: string }, command) => {
      const ctx = commandContext(command, io);
      const result = await ctx.api.request<{ id: string }>('DELETE', policyPath(id, options.workspace));
      ctx.print(result, () => `Deleted rate-limit policy ${result.id}\n`);
    });

  return policies;
}
