/**
 * The `x-ratelimit-reset-*` value and the wait a 429's message names, in OpenAI's duration form: whole
 * milliseconds under a second, then seconds, minutes and hours, rounded up so that a client never retries
 * early.
 */
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/gateway/rate-limits/rate-limit-headers.js';

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [-5, '0s'],
    [0.2, '1ms'],
    [120, '120ms'],
    [999, '999ms'],
    [999.01, '1s'],
    [999.999, '1s'],
    [1000, '1s'],
    [1000.5, '2s'],
    [59_999.5, '1m0s'],
    [360_000, '6m0s'],
    [3_600_000, '1h0m0s'],
  ])('%s ms reads %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('never reads 1000ms', () => {
    for (let ms = 998; ms < 1001; ms += 0.001) expect(formatDuration(ms)).not.toBe('1000ms');
  });
});
