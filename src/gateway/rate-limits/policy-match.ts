/**
 * Which policies meet a call, and the group each counts it in. Pure: the call is seen through `CallFacts`
 * (call-facts.ts), each key's values with the canonical one first — a call's model is
 * `@openai/gpt-4o-mini` and, through a catalog provider, `@my-openai/gpt-4o-mini` and `gpt-4o-mini` too.
 *
 * A condition holds when the call has a value for its key, one of its values matches `value` (a string,
 * any of an array, `*` for any value, `@provider/*` or any `…/*` for a prefix) and none matches `excludes`.
 * Conditions are ANDed. A call missing one of the `group_by` values is not counted by the policy.
 */
import { createHash } from 'node:crypto';
import type { RateLimitCondition, RateLimitPolicy } from '../../store/types.js';
import { UNIT_PERIOD_MS } from './policy-keys.js';

/** The call's values of a key (canonical first), or undefined when it has none. */
export type CallFacts = (key: string) => readonly string[] | undefined;

export interface CompiledPolicy {
  policy: RateLimitPolicy;
  periodMs: number;
  conditions: ReadonlyArray<{ key: string; values: readonly string[]; excludes: readonly string[] }>;
  groupKeys: readonly string[];
}

/** A policy's counter for one call: its key in the shared state and how the message names it. */
export interface PolicyGroup {
  counterKey: string;
  /** e.g. `api_key=key_01J…, metadata.user=alice`. */
  label: string;
}

const compiled = new WeakMap<readonly RateLimitPolicy[], readonly CompiledPolicy[]>();

/** The policies compiled once per list the lookups cache hands out (a new list after every change). */
export function compilePolicies(policies: readonly RateLimitPolicy[]): readonly CompiledPolicy[] {
  let list = compiled.get(policies);
  if (!list) {
    list = policies.map(compilePolicy);
    compiled.set(policies, list);
  }
  return list;
}

function compilePolicy(policy: RateLimitPolicy): CompiledPolicy {
  return {
    policy,
    periodMs: UNIT_PERIOD_MS[policy.unit],
    conditions: policy.conditions.map((condition: RateLimitCondition) => {
      // An organisation's id is a UUID, whose hex digits may come in either case (RFC 9562), as the API
      // takes it in a body: the gateway's own are lower-case, so a condition written in capitals matches too.
      const canonical = condition.key === 'organisation_id' ? lowerCased : asList;
      return {
        key: condition.key,
        values: canonical(condition.value),
        excludes: condition.excludes === undefined ? [] : canonical(condition.excludes),
      };
    }),
    groupKeys: policy.group_by.map((group) => group.key),
  };
}

function asList(value: string | readonly string[]): readonly string[] {
  return typeof value === 'string' ? [value] : value;
}

function lowerCased(value: string | readonly string[]): readonly string[] {
  return asList(value).map((item) => item.toLowerCase());
}

function patternMatches(pattern: string, values: readonly string[]): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('/*')) {
    const prefix = pattern.slice(0, -1);
    return values.some((value) => value.startsWith(prefix));
  }
  return values.includes(pattern);
}

export function policyMatches(policy: CompiledPolicy, facts: CallFacts): boolean {
  for (const condition of policy.conditions) {
    const values = facts(condition.key);
    if (values === undefined || values.length === 0) return false;
    if (!condition.values.some((pattern) => patternMatches(pattern, values))) return false;
    if (condition.excludes.some((pattern) => patternMatches(pattern, values))) return false;
  }
  return true;
}

/** Group values longer than this are hashed in the counter's key (metadata values may be long). */
const MAX_PLAIN_GROUP = 200;

/** The counter a call falls in, or undefined when it lacks one of the group_by values (not counted). */
export function groupOf(policy: CompiledPolicy, facts: CallFacts): PolicyGroup | undefined {
  const values: string[] = [];
  for (const key of policy.groupKeys) {
    const value = facts(key)?.[0];
    if (value === undefined) return undefined;
    values.push(value);
  }
  const joined = JSON.stringify(values);
  const group =
    joined.length > MAX_PLAIN_GROUP ? createHash('sha256').update(joined).digest('base64url') : joined;
  const { id, type, unit } = policy.policy;
  return {
    counterKey: `rl:${id}:${type}:${unit}:${group}`,
    label: policy.groupKeys.map((key, i) => `${key}=${values[i]}`).join(', '),
  };
}
