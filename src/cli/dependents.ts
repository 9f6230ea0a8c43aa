/**
 * `error.dependents` of a 409 `conflict` refusing a change for what depends on it (docs/management-api.md,
 * "Errors"), read from the wire and shown as lines: one per config, prompt or guardrail, with where it
 * names the thing (or which versions), and why its calls would fail where the gateway judged it.
 */

interface Dependent {
  kind: 'config' | 'prompt' | 'guardrail';
  slug: string;
  /** `config.targets[1].virtual_key`, or a prompt's `versions 1, 3`. */
  where: string;
  reason?: string;
}

export interface Dependents {
  named: Dependent[];
  /** `and 2 more configs`, …: the kinds the gateway counted past those it names. */
  more: string[];
}

type Wire = Record<string, unknown>;

const isObject = (value: unknown): value is Wire =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

function entries(value: unknown): Wire[] {
  return Array.isArray(value) ? value.filter((entry): entry is Wire => isObject(entry)) : [];
}

function dependent(kind: Dependent['kind'], entry: Wire, where: unknown): Dependent | undefined {
  if (typeof entry.slug !== 'string' || typeof where !== 'string') return undefined;
  const reason = typeof entry.reason === 'string' && entry.reason.trim() ? oneLine(entry.reason) : undefined;
  return { kind, slug: entry.slug, where, ...(reason ? { reason } : {}) };
}

function versions(entry: Wire): string | undefined {
  const numbers = Array.isArray(entry.versions) ? entry.versions.filter((v) => typeof v === 'number') : [];
  return numbers.length ? `version${numbers.length > 1 ? 's' : ''} ${numbers.join(', ')}` : undefined;
}

function more(count: unknown, kind: string): string[] {
  return typeof count === 'number' && count > 0 ? [`and ${count} more ${kind}${count > 1 ? 's' : ''}`] : [];
}

/** The dependents of an API error object; undefined when it has none (another 409, or not the gateway's). */
export function readDependents(error: unknown): Dependents | undefined {
  const wire = isObject(error) ? error.dependents : undefined;
  if (!isObject(wire)) return undefined;
  const named = [
    ...entries(wire.configs).map((entry) => dependent('config', entry, entry.param)),
    ...entries(wire.prompts).map((entry) => dependent('prompt', entry, versions(entry))),
    ...entries(wire.guardrails).map((entry) => dependent('guardrail', entry, entry.param)),
  ].filter((entry): entry is Dependent => entry !== undefined);
  const left = isObject(wire.more) ? wire.more : {};
  const counted = [
    ...more(left.configs, 'config'),
    ...more(left.prompts, 'prompt'),
    ...more(left.guardrails, 'guardrail'),
  ];
  return named.length + counted.length > 0 ? { named, more: counted } : undefined;
}

/** `  config     support  config.targets[1].virtual_key` lines, columns aligned, the reason last. */
export function formatDependents({ named, more: counted }: Dependents): string {
  const width = (pick: (entry: Dependent) => string) =>
    Math.max(0, ...named.map((entry) => pick(entry).length));
  const kind = width((entry) => entry.kind);
  const slug = width((entry) => entry.slug);
  const where = width((entry) => entry.where);
  const lines = named.map((entry) =>
    entry.reason
      ? `  ${entry.kind.padEnd(kind)}  ${entry.slug.padEnd(slug)}  ${entry.where.padEnd(where)}  ${entry.reason}`
      : `  ${entry.kind.padEnd(kind)}  ${entry.slug.padEnd(slug)}  ${entry.where}`.trimEnd(),
  );
  return [...lines, ...counted.map((line) => `  ${line}`)].map((line) => `${line}\n`).join('');
}
