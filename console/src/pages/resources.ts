/**
 * The management pages that share one shape: a list, a JSON body to create, a JSON body to change, delete.
 * Each entry says where the resource lives in the management API (docs/management-api.md) and what its
 * bodies look like.
 */
import { api, query, type ListAnswer } from '../api';
import type { SettingSelect } from '../components/SettingSelects';

type Row = Record<string, unknown>;

export interface Resource {
  /** The console path (`/console/<page>`). */
  page: string;
  title: string;
  /** The singular, for buttons and dialogs. */
  noun: string;
  /** The collection under /v1. */
  path: string;
  description: string;
  /**
   * Every row, a page at a time, when the collection's GET does not answer them all at once: the page
   * shows the first rows while the rest are asked for.
   */
  pages?(): AsyncGenerator<Row[]>;
  /** The id the API addresses a row by. */
  idOf(row: Row): string;
  columns: { label: string; value(row: Row): string }[];
  /** The body a new one starts from. */
  template: Row;
  /** The body of a change, from the row as listed. */
  editBody(row: Row): Row;
  updateMethod: 'PATCH' | 'PUT';
  /** Whether `GET <path>/<id>/versions` lists the row's versions, oldest first. */
  versioned?: boolean;
  /** What a row offers besides Edit and Delete, where `shown`. */
  actions?: { label(row: Row): string; shown(row: Row): boolean; run(row: Row): Promise<unknown> }[];
  /** A member of the body checked against the config schema before saving. */
  configField?: string;
  /**
   * What the gateway refuses (409) for what depends on the row, and makes anyway with `?force=true`
   * (docs/management-api.md): a change (`update`), a delete. The refusal's dependents are shown, and the
   * request is repeated with `force` only when asked.
   */
  forceable?: readonly ('update' | 'delete')[];
  /** Settings of the body chosen, beside the editor, among the values the config schema allows. */
  settingSelects?: SettingSelect[];
}

const text = (value: unknown) =>
  value === null || value === undefined
    ? '—'
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value);
const field = (name: string) => (row: Row) => text(row[name]);
const time = (name: string) => (row: Row) => {
  const value = row[name];
  if (typeof value === 'number') return new Date(value * 1000).toLocaleString(undefined, { hour12: false });
  return typeof value === 'string' ? new Date(value).toLocaleString(undefined, { hour12: false }) : '—';
};
/**
 * Every rate-limit policy: the list answers one status at a time (active unless asked) and a page at a
 * time (100 unless asked), so a policy archived here, or past the first page, would not be listed again.
 */
async function* rateLimitPolicyPages(): AsyncGenerator<Row[]> {
  for (const status of ['active', 'archived']) {
    for (let page = 0, listed = 0; ; page++) {
      const answer = await api<ListAnswer<Row>>(
        `/policies/rate-limits${query({ status, page_size: 1000, current_page: page })}`,
      );
      yield answer.data;
      listed += answer.data.length;
      if (answer.data.length === 0 || listed >= (answer.total ?? 0)) break;
    }
  }
}

const pick = (row: Row, names: string[]) =>
  Object.fromEntries(
    names.filter((name) => row[name] !== undefined && row[name] !== null).map((name) => [name, row[name]]),
  );

export const RESOURCES: Resource[] = [
  {
    page: 'virtual-keys',
    title: 'Virtual keys',
    noun: 'virtual key',
    path: '/virtual-keys',
    description:
      'Provider credentials kept encrypted by the gateway and named by slug. Secrets are never shown: a setting left out of a change is kept, one sent as null is removed.',
    idOf: (row) => String(row.slug),
    columns: [
      { label: 'Slug', value: field('slug') },
      { label: 'Name', value: field('name') },
      { label: 'Provider', value: field('provider') },
      {
        label: 'Secrets set',
        value: (row) => ((row.secret_keys as string[] | undefined) ?? []).join(', ') || '—',
      },
      { label: 'Status', value: field('status') },
      { label: 'Updated', value: time('updated_at') },
    ],
    template: { slug: 'openai-prod', name: 'OpenAI production', provider: 'openai', api_key: 'sk-…' },
    editBody: (row) => ({ name: row.name, provider: row.provider, ...(row.settings as Row) }),
    updateMethod: 'PATCH',
    // Another provider, a delete.
    forceable: ['update', 'delete'],
    settingSelects: [
      { name: 'cloudb_request_type', label: 'Vertex AI request type (cloudb_request_type)' },
      {
        name: 'cloudb_shared_request_type',
        label: 'Vertex AI shared request type (cloudb_shared_request_type)',
      },
    ],
  },
  {
    page: 'configs',
    title: 'Configs',
    noun: 'config',
    path: '/configs',
    description:
      'Stored routing configs, used with x-gateway-config: <slug>. The config is checked against the gateway’s config schema before it is saved. Credentials inside are shown as [REDACTED]: send real values when you change them.',
    idOf: (row) => String(row.slug),
    columns: [
      { label: 'Slug', value: field('slug') },
      { label: 'Name', value: field('name') },
      { label: 'Version', value: field('version') },
      { label: 'Status', value: field('status') },
      { label: 'Updated', value: time('updated_at') },
    ],
    template: {
      slug: 'chat-fallback',
      name: 'Chat with fallback',
      config: {
        strategy: { mode: 'fallback' },
        targets: [{ virtual_key: 'openai-prod' }, { virtual_key: 'anthropic-prod' }],
      },
    },
    editBody: (row) => pick(row, ['name', 'config', 'status']),
    updateMethod: 'PATCH',
    // An archive (`status: archived`), a delete.
    forceable: ['update', 'delete'],
    configField: 'config',
    versioned: true,
  },
  {
    page: 'prompts',
    title: 'Prompts',
    noun: 'prompt',
    path: '/prompts',
    description:
      'Prompt templates (Mustache) with numbered versions. Saving a change makes a new version; calls keep the published version until the new one is published (Publish).',
    idOf: (row) => String(row.slug),
    columns: [
      { label: 'Slug', value: field('slug') },
      { label: 'Name', value: field('name') },
      { label: 'Type', value: field('template_type') },
      { label: 'Version', value: field('version') },
      { label: 'Published', value: field('published_version') },
      { label: 'Updated', value: time('updated_at') },
    ],
    template: {
      slug: 'summary',
      name: 'Summary',
      string: '[{"role":"user","content":"Summarise: {{text}}"}]',
      parameters: { model: 'gpt-4o-mini' },
    },
    editBody: (row) =>
      pick(row, ['name', 'string', 'template_type', 'parameters', 'virtual_key', 'provider', 'config']),
    updateMethod: 'PUT',
    versioned: true,
    forceable: ['delete'],
    actions: [
      {
        label: (row) => `Publish v${text(row.version)}`,
        shown: (row) => row.version !== row.published_version,
        run: (row) =>
          api(`/prompts/${encodeURIComponent(String(row.slug))}/publish`, {
            method: 'PUT',
            body: { version: row.version },
          }),
      },
    ],
  },
  {
    page: 'guardrails',
    title: 'Guardrails',
    noun: 'guardrail',
    path: '/guardrails',
    description:
      'Guardrails kept once and named by slug in any config’s input_guardrails or output_guardrails. Each change makes a new version.',
    idOf: (row) => String(row.slug),
    columns: [
      { label: 'Slug', value: field('slug') },
      { label: 'Name', value: field('name') },
      { label: 'Version', value: field('version') },
      {
        label: 'Checks',
        value: (row) =>
          Object.keys((row.guardrail as Row) ?? {})
            .filter((key) => key.includes('.'))
            .join(', '),
      },
      { label: 'Updated', value: time('updated_at') },
    ],
    template: {
      slug: 'no-secrets',
      name: 'No secrets',
      guardrail: { 'default.regexMatch': { rule: 'sk-[A-Za-z0-9]{20,}', not: true }, deny: true },
    },
    editBody: (row) => pick(row, ['name', 'guardrail']),
    updateMethod: 'PATCH',
    versioned: true,
    forceable: ['delete'],
  },
  {
    page: 'rate-limits',
    title: 'Rate limits',
    noun: 'rate-limit policy',
    path: '/policies/rate-limits',
    pages: rateLimitPolicyPages,
    description:
      'Limits on the requests or tokens of this workspace’s calls per minute, hour or day, counted per group.',
    idOf: (row) => String(row.id),
    columns: [
      { label: 'Name', value: field('name') },
      { label: 'Type', value: field('type') },
      { label: 'Unit', value: field('unit') },
      { label: 'Value', value: field('value') },
      { label: 'Conditions', value: field('conditions') },
      { label: 'Group by', value: field('group_by') },
      { label: 'Status', value: field('status') },
    ],
    template: {
      name: 'Requests per user',
      conditions: [{ key: 'metadata._user', value: '*' }],
      group_by: [{ key: 'metadata._user' }],
      type: 'requests',
      unit: 'rpm',
      value: 60,
    },
    editBody: (row) => pick(row, ['name', 'conditions', 'group_by', 'type', 'unit', 'value', 'status']),
    updateMethod: 'PUT',
  },
];
