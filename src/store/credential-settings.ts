import type { ProviderSecret } from './types.js';

/**
 * `secret` with `settings` applied, as a credential's PATCH stores it: a setting given as null is
 * removed, any other value replaces it. What the change would be is judged on the same merge.
 */
export function mergeSettings(secret: ProviderSecret, settings: Record<string, unknown>): ProviderSecret {
  const merged: ProviderSecret = { ...secret };
  for (const [key, value] of Object.entries(settings)) {
    if (value === undefined) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
