/**
 * The keys a rate-limit policy's conditions and group_by may name, and the length of each unit. One list
 * for the management API's validation and the pipeline's matching (docs/rate-limits.md).
 */
import type { RateLimitUnit } from '../../store/types.js';

export const POLICY_KEYS = [
  'api_key',
  'workspace_id',
  'organisation_id',
  'virtual_key',
  'provider',
  'config',
  'prompt',
  'model',
] as const;

export type PolicyKey = (typeof POLICY_KEYS)[number] | `metadata.${string}`;

/**
 * `metadata.<name>`: a name as the x-gateway-metadata header allows (1 to 128 characters). Counted in UTF-16
 * code units, as the body schema's pattern counts: a header key of more than 64 characters outside the
 * Basic Multilingual Plane cannot be named.
 */
export const METADATA_KEY = /^metadata\.[\s\S]{1,128}$/;

export function isPolicyKey(key: string): key is PolicyKey {
  return (POLICY_KEYS as readonly string[]).includes(key) || METADATA_KEY.test(key);
}

export const UNIT_PERIOD_MS: Record<RateLimitUnit, number> = {
  rpm: 60_000,
  rph: 3_600_000,
  rpd: 86_400_000,
};
