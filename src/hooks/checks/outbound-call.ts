/**
 * What `webhook` and `log` send and how they are configured. The body is the check's view of the call,
 * `{request, response, event, eventType, requestType, provider, model, metadata}` (request and response as
 * `{json, text}`; response null before the call; `eventType` is `event` under the name the reference
 * gateway sends it by, which webhooks written for it read). The engine's `postJson` applies the address policy, the timeout
 * and the HMAC signature. Header values (often credentials) never appear in results or errors.
 */
import { Type } from '@sinclair/typebox';
import type { ParameterRuleBreak } from '../built-in-check.js';
import type { CheckContext } from '../check-types.js';
import { maskSecrets, secretValues } from '../../core/mask-secrets.js';

/** Headers as an object of strings, or (as the seed also takes them) a string holding that JSON object. */
export const HeadersSchema = Type.Union([Type.Record(Type.String(), Type.String()), Type.String()]);

/**
 * Annotation of a check parameter that says where the check sends the call, and with it the credentials
 * beside it (`headers`): each field so marked is one of a stored document's destinations, and a credential
 * shown `[REDACTED]` is kept on an update only while those are unchanged (the management API's
 * redacted-values.ts reads them through `CHECK_ADDRESS_FIELDS`).
 */
export const ADDRESS_ANNOTATION = 'x-address';

/** A URL a check posts to: an address (ADDRESS_ANNOTATION). */
export const HttpUrlSchema = Type.String({ minLength: 1, [ADDRESS_ANNOTATION]: true });

export function payloadOf(ctx: CheckContext): Record<string, unknown> {
  return {
    request: { json: ctx.request.json, text: ctx.request.text },
    response:
      ctx.response === undefined
        ? null
        : { json: ctx.response.json, text: ctx.response.text, statusCode: ctx.response.statusCode },
    event: ctx.event,
    eventType: ctx.event,
    requestType: ctx.callType,
    provider: ctx.provider,
    model: ctx.model ?? null,
    metadata: ctx.metadata,
  };
}

export function headersOf(headers: Record<string, string> | string | undefined): Record<string, string> {
  if (headers === undefined) return {};
  if (typeof headers !== 'string') return headers;
  return JSON.parse(headers) as Record<string, string>;
}

/**
 * `value` (the explanation or data a service answered with) with the check's header values, and `sent` (what
 * the engine added to the call: its signing key), masked wherever a string or a key holds one: a service that
 * echoes the credential it was sent must not put it in the hook's results or the log. Every header counts,
 * whatever its name, since a word lost from a diagnostic costs less than a credential shown. A `Bearer <token>`
 * value's token is masked on its own too.
 */
export function withoutHeaderValues<T>(
  value: T,
  headers: Record<string, string>,
  sent: readonly string[] = [],
): T {
  return masked(value, secretsOf(Object.values(headers), sent), true);
}

/** The headers whose values are credentials, by name. */
const CREDENTIAL_HEADER = /auth|cookie|key|token|secret|password|signature|credential/i;

/**
 * `rewrite` (the body a service's answer puts in place of the request or the answer) with the values of the
 * check's credential headers, and `sent`, masked in its strings: what the provider or the client gets must
 * not carry them. Other header values (`X-Env: production`) and keys are left as they are, since masking them
 * would change the prompt or the answer itself.
 */
export function withoutCredentials<T>(
  rewrite: T,
  headers: Record<string, string>,
  sent: readonly string[] = [],
): T {
  const credentials = Object.entries(headers)
    .filter(([name]) => CREDENTIAL_HEADER.test(name))
    .map(([, v]) => v);
  return masked(rewrite, secretsOf(credentials, sent), false);
}

function secretsOf(headerValues: readonly string[], sent: readonly string[]): string[] {
  return secretValues([
    ...headerValues.flatMap((v) => [v, v.replace(/^(Bearer|Basic|Token)\s+/i, '')]),
    ...sent,
  ]);
}

function masked<T>(value: T, secrets: readonly string[], keysToo: boolean): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return maskSecrets(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v).map(([k, item]) => [keysToo ? maskSecrets(k, secrets) : k, walk(item)]),
      );
    }
    return v;
  };
  return walk(value) as T;
}

/** The rules of `<urlField>` and `headers` beyond their schema. */
export function outboundRuleBreak(
  urlField: string,
  url: string,
  headers: Record<string, string> | string | undefined,
): ParameterRuleBreak | null {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    return { param: `parameters.${urlField}`, message: 'must be an http or https URL' };
  }
  // The address policy never sends credentials written into a URL: every call would fail, and pass.
  if (parsed.username !== '' || parsed.password !== '') {
    return {
      param: `parameters.${urlField}`,
      message: 'must not carry credentials (user:password@); send them in headers, such as Authorization',
    };
  }
  let given: Record<string, string> | undefined;
  if (typeof headers !== 'string') {
    given = headers;
  } else {
    let value: unknown;
    try {
      value = JSON.parse(headers);
    } catch {
      return {
        param: 'parameters.headers',
        message: 'must be an object of strings, or a JSON string of one',
      };
    }
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    if (!isObject || Object.values(value as object).some((v) => typeof v !== 'string')) {
      return {
        param: 'parameters.headers',
        message: 'must be an object of strings, or a JSON string of one',
      };
    }
    given = value as Record<string, string>;
  }
  return given === undefined ? null : headerRuleBreak(given);
}

/** RFC 9110's token: what a header name may hold. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Controls other than tab (CR and LF above all) cannot stand in a header value. */
// eslint-disable-next-line no-control-regex
const FORBIDDEN_IN_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;
/** A header value is bytes: a character beyond Latin-1 (typographic quotes “…” around a pasted token, an
 * emoji) has none to be sent as, and the request is refused before it leaves. */
const BEYOND_LATIN1 = /[\u0100-\uffff]/;
/** The body's framing, which the gateway sets for the JSON it sends. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding']);

/**
 * A header HTTP cannot carry is refused with the config, naming the header but never its value (often a
 * credential). Accepted, it failed every call of the check — a pasted token's trailing newline is enough
 * — and a failed call counts as a pass by default (`on_error: pass`): the check would be silently off.
 */
function headerRuleBreak(headers: Record<string, string>): ParameterRuleBreak | null {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) {
      return { param: 'parameters.headers', message: 'holds a header name that is not an HTTP token' };
    }
    if (FRAMING_HEADERS.has(name.toLowerCase())) {
      return { param: `parameters.headers.${name}`, message: 'is set by the gateway for the body it sends' };
    }
    if (FORBIDDEN_IN_VALUE.test(value)) {
      return {
        param: `parameters.headers.${name}`,
        message: 'must not hold a line break or another control character',
      };
    }
    if (BEYOND_LATIN1.test(value)) {
      return {
        param: `parameters.headers.${name}`,
        message: 'must hold only characters HTTP can send (none beyond Latin-1, such as typographic quotes)',
      };
    }
  }
  return null;
}

/** Throws unless the answer is 2xx: the engine's fail mode (`on_error`) decides what an error means. */
export function requireSuccess(check: string, status: number): void {
  if (status < 200 || status > 299) throw new Error(`${check} answered with status ${status}`);
}
