/**
 * Secret redaction for everything that is logged or stored as a record: keys whose names say they hold
 * credentials are replaced, whatever their depth.
 */
const SECRET_KEY =
  /(api[_-]?key|secret|password|passwd|authorization|private[_-]?key|(access|session|refresh|id|auth)[_-]?token|bearer|credential)/i;
export const REDACTED = '[REDACTED]';

export function isSecretKey(name: string): boolean {
  return SECRET_KEY.test(name);
}

/** Deeper than this, a subtree is replaced by a marker: it is never stored unredacted. */
const MAX_REDACT_DEPTH = 64;
export const TOO_DEEP = '[TRUNCATED: nested too deep]';

export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_REDACT_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = isSecretKey(key) && item !== null && item !== undefined ? REDACTED : redact(item, depth + 1);
  }
  return out;
}

/** Headers safe to log: credentials and the gateway's config header (which may carry keys) redacted. */
export function redactHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = isSecretKey(name) || name === 'x-gateway-config' || name === 'api-key' ? REDACTED : value;
  }
  return out;
}
