/**
 * The 409 `conflict` refusing a change for what depends on it (destination-dependents.ts,
 * credential-settings-dependents.ts, partial-dependents.ts): the OpenAI error object, its message naming
 * them in prose, with `dependents` beside its members so that a client reads them without parsing that
 * prose — `{configs: [{slug, param}], prompts: [{slug, versions}], guardrails: [{slug, param}]}`, each
 * with `reason` where the refusal judged why its calls fail, and `more` (the count of each kind left out)
 * when a kind has more than NAMED. docs/management-api.md ("Errors") describes it. The message's list
 * (`listedUses`) is made here too, from the same uses.
 */
import { GatewayError, type ErrorBody } from '../../core/errors.js';

/** How many of each kind an error names; the rest are counted. */
export const NAMED = 10;

/** A stored config (or guardrail) naming the thing, and where it first does. */
export interface NamingConfig {
  slug: string;
  /** Where it names the thing first: `config.targets[1].prompt_id`. */
  param: string;
  /** Why its calls would fail, where the refusal judged it. */
  reason?: string;
}

/** A prompt, with the versions of it that name the thing (or that the change breaks). */
export interface NamingPrompt {
  slug: string;
  versions: number[];
  /** Why the first of those versions would fail, where the refusal judged it. */
  reason?: string;
}

export interface Uses {
  configs: NamingConfig[];
  prompts: NamingPrompt[];
  guardrails: NamingConfig[];
}

export interface Dependents extends Uses {
  /** How many of each kind are left out past the NAMED named; absent when none is. */
  more?: { configs: number; prompts: number; guardrails: number };
}

/** `"slug" (versions 1, 3)`. */
function namedPrompt(prompt: NamingPrompt): string {
  const versions = prompt.versions.join(', ');
  return `"${prompt.slug}" (version${prompt.versions.length > 1 ? 's' : ''} ${versions})`;
}

/** ` and 3 more` past the NAMED an error names; '' within them. */
function andMore(count: number): string {
  return count > NAMED ? ` and ${count - NAMED} more` : '';
}

/** The first NAMED prompts with their versions (`"a" (version 1), "b" (versions 1, 3)`), the rest counted. */
export function listedPrompts(prompts: readonly NamingPrompt[]): string {
  return prompts.slice(0, NAMED).map(namedPrompt).join(', ') + andMore(prompts.length);
}

/** The first NAMED configs with where each names it (`"a" (config.prompt_id)`), the rest counted. */
export function listedConfigs(configs: readonly NamingConfig[]): string {
  return (
    configs
      .slice(0, NAMED)
      .map((config) => `"${config.slug}" (${config.param})`)
      .join(', ') + andMore(configs.length)
  );
}

/** The first NAMED configs with where each names it and why its calls would fail (`"a" (config.custom_host):
 * why; "b" (config.override_params.metadata): why`), the rest counted: a config refused at several places,
 * or for several reasons, is named at each. */
export function listedConfigsWithReasons(configs: readonly NamingConfig[]): string {
  return (
    configs
      .slice(0, NAMED)
      .map((config) => `"${config.slug}" (${config.param})${config.reason ? `: ${config.reason}` : ''}`)
      .join('; ') + andMore(configs.length)
  );
}

/** `configs "a" (config.targets[1].virtual_key); prompts "p" (versions 1, 2); guardrails "g"
 * (guardrail.default.modelJudge.virtual_key)`, '' for no use. */
export function listedUses({ configs, prompts, guardrails }: Uses): string {
  return [
    ...(configs.length > 0 ? [`configs ${listedConfigs(configs)}`] : []),
    ...(prompts.length > 0 ? [`prompts ${listedPrompts(prompts)}`] : []),
    ...(guardrails.length > 0 ? [`guardrails ${listedConfigs(guardrails)}`] : []),
  ].join('; ');
}

const left = (count: number) => Math.max(0, count - NAMED);

/** The first NAMED of each kind, the rest counted. */
export function dependentsOf(uses: Uses): Dependents {
  const named: Dependents = {
    configs: uses.configs.slice(0, NAMED),
    prompts: uses.prompts.slice(0, NAMED),
    guardrails: uses.guardrails.slice(0, NAMED),
  };
  const more = {
    configs: left(uses.configs.length),
    prompts: left(uses.prompts.length),
    guardrails: left(uses.guardrails.length),
  };
  return more.configs + more.prompts + more.guardrails > 0 ? { ...named, more } : named;
}

export type DependentsErrorBody = ErrorBody & { error: { dependents: Dependents } };

export class DependentsConflictError extends GatewayError {
  readonly dependents: Dependents;

  constructor(message: string, uses: Uses, param: string) {
    super('conflict', message, { param });
    this.dependents = dependentsOf(uses);
  }

  override toBody(): DependentsErrorBody {
    const { error } = super.toBody();
    return { error: { ...error, dependents: this.dependents } };
  }
}
