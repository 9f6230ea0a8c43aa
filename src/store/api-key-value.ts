/**
 * API key values: `gw-` + 43 base64url characters (32 random bytes). The value is shown once; the
 * store keeps only its HMAC (see `hashApiKeyValue`) and a short prefix for listings.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../core/errors.js';

export const API_KEY_PREFIX = 'gw-';
const PREFIX_CHARS = 8;
/** Operator-chosen values (GATEWAY_ADMIN_KEY) shorter than this are too easy to guess. */
export const MIN_API_KEY_LENGTH = 16;

export function generateApiKeyValue(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * The characters shown in listings: the first 8 after `gw-` (or at the start of a foreign value), and
 * never more than a quarter of the value. A generated key shows 8 of its 43 random characters; an
 * operator's GATEWAY_ADMIN_KEY may be as short as 16, and half of it in every listing would be too much.
 */
export function apiKeyDisplayPrefix(value: string): string {
  const body = value.startsWith(API_KEY_PREFIX) ? value.slice(API_KEY_PREFIX.length) : value;
  return body.slice(0, Math.min(PREFIX_CHARS, Math.floor(value.length / 4)));
}

export function assertUsableApiKeyValue(value: string): void {
  if (value.length < MIN_API_KEY_LENGTH || /\s/.test(value)) {
    throw new GatewayError(
      'invalid_body',
      `An API key value must be at least ${MIN_API_KEY_LENGTH} characters without whitespace`,
      { param: 'value' },
    );
  }
}
