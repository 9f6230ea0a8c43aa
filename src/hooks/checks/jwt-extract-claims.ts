/**
 * `extractClaims` of `default.jwt`: the claims of a token that passed, named and written as the reference
 * gateway writes the headers it makes of them (`<claimPrefix><claim>`: an array's items joined with commas,
 * an object as JSON, anything else as its string; a claim absent or null left out). Checks cannot add
 * headers to the provider's call, and the provider is no consumer of them: the check gives them in its
 * `data`, where the caller (in `hook_results`) and the request's log record find them.
 */
import { maskSecrets, secretValues } from '../../core/mask-secrets.js';

export const DEFAULT_CLAIM_PREFIX = 'x-jwt-';

/**
 * `names` of `claims`, by `prefix` + name. `token` is masked wherever a value holds it (an introspection
 * answer may echo it): it is a credential, and results are shown and logged.
 */
export function extractClaims(
  claims: Record<string, unknown>,
  names: readonly string[],
  prefix: string,
  token: string,
): Record<string, string> {
  const secrets = secretValues([token]);
  const extracted: Array<[string, string]> = [];
  for (const name of names) {
    // Own claims only: `constructor` or `__proto__` of a payload is no claim of the token.
    if (!Object.hasOwn(claims, name)) continue;
    const value = claims[name];
    if (value === undefined || value === null) continue;
    extracted.push([`${prefix}${name}`, maskSecrets(written(value), secrets)]);
  }
  // fromEntries defines each key as its own, `__proto__` included.
  return Object.fromEntries(extracted);
}

function written(value: unknown): string {
  // As the reference's join: a null item is written as nothing. An object among the items, which that
  // join writes as `[object Object]`, is written as JSON here, so it says what it holds.
  if (Array.isArray(value))
    return value
      .map((item: unknown) => (isObject(item) ? JSON.stringify(item) : String(item ?? '')))
      .join(',');
  if (isObject(value)) return JSON.stringify(value);
  return String(value);
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
