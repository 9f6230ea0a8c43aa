/**
 * Reads how long a provider asked us to wait, in milliseconds: `retry-after-ms` first (OpenAI, Azure),
 * then `retry-after` as seconds or as an HTTP date. Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined) {
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
