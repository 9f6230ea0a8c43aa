/**
 * What a `409 conflict` of the management API names as depending on the change it refused: the gateway
 * gives them in `error.dependents` (docs/management-api.md, "Errors") — `{configs: [{slug, param}],
 * prompts: [{slug, versions}], guardrails: [{slug, param}], more?}`, each with `reason` where the gateway
 * judged why its calls would fail, at most a few of each named and the rest counted in `more`.
 */
export interface NamingConfig {
  slug: string;
  /** Where it names what was changed: `config.targets[1].virtual_key`. */
  param: string;
  reason?: string;
}

export interface NamingPrompt {
  slug: string;
  versions: number[];
  reason?: string;
}

export interface Dependents {
  configs: NamingConfig[];
  prompts: NamingPrompt[];
  guardrails: NamingConfig[];
  /** How many of each kind the gateway counted without naming them. */
  more?: { configs: number; prompts: number; guardrails: number };
}

/** One dependent as the console lists it. */
export interface Dependent {
  kind: 'config' | 'prompt' | 'guardrail';
  slug: string;
  /** Where it names what was changed (`config.targets[1].virtual_key`), or its versions (`version 2`). */
  where: string;
  /** Why its calls would fail, where the gateway says. */
  reason?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const optionalText = (value: unknown) => value === undefined || typeof value === 'string';

const isNamingConfig = (value: unknown): value is NamingConfig =>
  isRecord(value) &&
  typeof value.slug === 'string' &&
  typeof value.param === 'string' &&
  optionalText(value.reason);

const isNamingPrompt = (value: unknown): value is NamingPrompt =>
  isRecord(value) &&
  typeof value.slug === 'string' &&
  Array.isArray(value.versions) &&
  value.versions.every((version) => typeof version === 'number') &&
  optionalText(value.reason);

const listOf = <T>(value: unknown, is: (item: unknown) => item is T): value is T[] =>
  Array.isArray(value) && value.every(is);

const isCount = (value: unknown): value is number => typeof value === 'number' && value >= 0;

/** The dependents an error object names (`error.dependents`), or undefined when it has none in that form. */
export function dependentsOf(value: unknown): Dependents | undefined {
  if (!isRecord(value)) return undefined;
  const { configs, prompts, guardrails, more } = value;
  if (!listOf(configs, isNamingConfig) || !listOf(guardrails, isNamingConfig)) return undefined;
  if (!listOf(prompts, isNamingPrompt)) return undefined;
  const counted =
    isRecord(more) && isCount(more.configs) && isCount(more.prompts) && isCount(more.guardrails)
      ? { configs: more.configs, prompts: more.prompts, guardrails: more.guardrails }
      : undefined;
  return { configs, prompts, guardrails, ...(counted && { more: counted }) };
}

const versionsOf = ({ versions }: NamingPrompt) =>
  `version${versions.length > 1 ? 's' : ''} ${versions.join(', ')}`;

/** Each dependent named, configs first, then prompts, then guardrails. */
export function listedDependents({ configs, prompts, guardrails }: Dependents): Dependent[] {
  const withReason = (reason: string | undefined) => (reason === undefined ? {} : { reason });
  return [
    ...configs.map(({ slug, param, reason }) => ({
      kind: 'config' as const,
      slug,
      where: param,
      ...withReason(reason),
    })),
    ...prompts.map((prompt) => ({
      kind: 'prompt' as const,
      slug: prompt.slug,
      where: versionsOf(prompt),
      ...withReason(prompt.reason),
    })),
    ...guardrails.map(({ slug, param, reason }) => ({
      kind: 'guardrail' as const,
      slug,
      where: param,
      ...withReason(reason),
    })),
  ];
}

/** What the gateway counted without naming, by kind: `2 more configs`; none when it named them all. */
export function countedDependents({ more }: Dependents): string[] {
  if (!more) return [];
  return (['configs', 'prompts', 'guardrails'] as const)
    .filter((kind) => more[kind] > 0)
    .map((kind) => `${more[kind]} more ${more[kind] === 1 ? kind.slice(0, -1) : kind}`);
}
