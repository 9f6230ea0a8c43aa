/**
 * Secret redaction for everything that is logged or stored as a record: keys whose names say they hold
 * credentials are replaced, whatever their depth.
 */
const SECRET_KEY =
  /(api[_-]?key|secret|password|passwd|authorization|private[_-]?key|(access|session|refresh|id|auth)[_-]?token|bearer|credential)/i;
export const REDACTED = '[REDACTED]';

// The same few key names come back in every body (`role`, `content`, `model`, …): each is tested once.
// Bounded, so that bodies with endless distinct keys cannot grow it; past the bound names are tested anew.
const knownKeys = new Map<string, boolean>();
const MAX_KNOWN_KEYS = 2048;

export function isSecretKey(name: string): boolean {
  let secret = knownKeys.get(name);
  if (secret === undefined) {
    secret = SECRET_KEY.test(name);
    if (knownKeys.size < MAX_KNOWN_KEYS && name.length <= 64) knownKeys.set(name, secret);
  }
  return secret;
}

/**
 * Whether the JSON text of a body may name a secret: false only when no key of the body parsed from it can
 * be one that `redact` replaces. Keys are tested in the text as it is: an escape other than `\u` stands for
 * a character no secret key name holds, so a name that the regular expression finds in a key is in the
 * text too; `\u` escapes could spell one out, so any text holding one may.
 */
export function mayNameSecret(text: string): boolean {
  return text.includes('\\u') || SECRET_KEY.test(text);
}

/** Deeper than this, a subtree is replaced by a marker: it is never stored unredacted. */
const MAX_REDACT_DEPTH = 64;
export const TOO_DEEP = '[TRUNCATED: nested too deep]';

/**
 * A copy of `value` with secrets replaced: the values of the keys `isSecret` names (by default those whose
 * names say they hold credentials). Parts that hold no secret are returned as they are, not copied: most
 * bodies hold none, and this runs for every recorded call.
 */
export function redact(value: unknown, isSecret: (key: string) => boolean = isSecretKey): unknown {
  return redactAt(value, isSecret, 0);
}

function redactAt(value: unknown, isSecret: (key: string) => boolean, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_REDACT_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = redactAt(value[i], isSecret, depth + 1);
      if (item !== value[i]) (copy ??= value.slice())[i] = item;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = (value as Record<string, unknown>)[key];
    const replaced =
      isSecret(key) && item !== null && item !== undefined
        ? REDACTED
        : key === 'headers' && typeof item === 'string'
          ? redactJsonText(item, isSecret, depth + 1)
          : redactAt(item, isSecret, depth + 1);
    if (replaced !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = replaced;
  }
  return copy ?? value;
}

/**
 * Headers given as the text of a JSON object (a webhook check takes them so, as the seed does): redacted
 * inside, and written back as text; any other text as it is.
 */
function redactJsonText(text: string, isSecret: (key: string) => boolean, depth: number): string {
  if (!text.trimStart().startsWith('{')) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const redacted = redactAt(parsed, isSecret, depth);
  return redacted === parsed ? text : JSON.stringify(redacted);
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
