/** Waits given in milliseconds, in the order they are read: OpenAI's, then Azure's own name for it. */
const MILLISECOND_HEADERS = ['retry-after-ms', 'x-ms-retry-after-ms'];

/**
 * Reads how long a provider asked us to wait, in milliseconds: `retry-after-ms` (OpenAI, Azure) or
 * `x-ms-retry-after-ms` (Azure) first, then `retry-after` as seconds or as an HTTP date. Undefined when
 * absent or unreadable.
 */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  for (const name of MILLISECOND_HEADERS) {
    const ms = headers[name];
    if (ms === undefined) continue;
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers['retry-after'];
  if (after === undefined) return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
