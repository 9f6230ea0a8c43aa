/**
 * Ids made on the hot path: a random prefix drawn once per process and a counter, so ids are unique across
 * nodes and restarts without drawing randomness per request. Time-ordered within a process.
 */
import { randomBytes } from 'node:crypto';

const processPrefix = randomBytes(6).toString('hex');
let counter = 0;

/** 12 hex characters of process identity + a base-36 counter, e.g. `3f9a1c0b7d2e000k4`. */
export function sequentialId(): string {
  counter += 1;
  return processPrefix + counter.toString(36).padStart(5, '0');
}
