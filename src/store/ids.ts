/**
 * Record ids: `<prefix>_` + 26 Crockford base32 characters (48-bit millisecond time, 80 random bits),
 * so ids created later sort later and new rows land at the end of the primary-key index.
 * Organisation ids are plain UUIDs because the management API exposes them as such.
 */
import { randomBytes, randomUUID } from 'node:crypto';

export type IdPrefix =
  'ws' | 'key' | 'vk' | 'prv' | 'cfg' | 'grd' | 'pmt' | 'ptl' | 'log' | 'job' | 'file' | 'batch' | 'ftjob';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}_${sortableToken(now)}`;
}

export function newOrganisationId(): string {
  return randomUUID();
}

function sortableToken(now: number): string {
  let time = '';
  let t = Math.max(0, Math.floor(now));
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(10);
  let rest = '';
  // 80 bits → 16 characters of 5 bits each.
  let buffer = 0;
  let bits = 0;
  for (const byte of random) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      rest += CROCKFORD[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return time + rest;
}
