/**
 * Masking known secret values wherever a text holds them: a provider's key quoted back in its error, a
 * webhook's header value echoed in its answer. Used by the gateway (scrub-secrets.ts) and the hook checks
 * alike; what counts as a secret is theirs to say.
 */
const MASK = '[REDACTED]';
/** Shorter values are not credentials worth masking and would mangle ordinary words. */
const MIN_SECRET_LENGTH = 6;

/** The values worth masking among these: strings long enough to be credentials. */
export function secretValues(values: readonly unknown[]): string[] {
  return values.filter(
    (value): value is string => typeof value === 'string' && value.length >= MIN_SECRET_LENGTH,
  );
}

/** `text` with every one of `secrets` masked. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join(MASK);
  }
  return out;
}
