/**
 * The `x-ratelimit-*` headers of an answer a policy governs, in the shape OpenAI's API gives them:
 * `x-ratelimit-limit-requests: 60`, `x-ratelimit-remaining-requests: 59`, `x-ratelimit-reset-requests: 1s`
 * (the time until the counter is full again: `120ms`, `6m0s`, `1h0m0s`), the same with `-tokens`.
 * When several policies of a type govern a call, the one with the least room left speaks.
 */
import type { RateLimitType } from '../../store/types.js';
import type { RateReading } from '../../state/rate-counter.js';

export interface GoverningReading {
  type: RateLimitType;
  limit: number;
  reading: RateReading;
}

export function rateLimitHeaders(readings: readonly GoverningReading[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const type of ['requests', 'tokens'] as const) {
    let tightest: GoverningReading | undefined;
    for (const r of readings) {
      if (r.type === type && (!tightest || r.reading.remaining < tightest.reading.remaining)) tightest = r;
    }
    if (!tightest) continue;
    headers[`x-ratelimit-limit-${type}`] = String(tightest.limit);
    headers[`x-ratelimit-remaining-${type}`] = String(tightest.reading.remaining);
    headers[`x-ratelimit-reset-${type}`] = formatDuration(tightest.reading.resetMs);
  }
  return headers;
}

export function formatDuration(ms: number): string {
  if (ms <= 0) return '0s';
  // Rounded up before the choice of unit: 999.5 ms is 1s, never 1000ms.
  const wholeMs = Math.ceil(ms);
  if (wholeMs < 1000) return `${wholeMs}ms`;
  const total = Math.ceil(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** Retry-After: whole seconds, at least 1. */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}
