/**
 * Stored configs, guardrails and prompt versions are shown with their credentials as `[REDACTED]`
 * (views.ts), and an editor (the console's, a script's) sends a new version back as it was shown. One rule
 * decides what such a placeholder means: a `[REDACTED]` under a credential key stands for the stored value at
 * the same place only while the new document's destinations (destinationsOf: every value anywhere in it that
 * says where something is sent) are exactly the previous version's, each at its place, and its credentials
 * are at the same places (credentialPlaces: a target without a key of its own takes its parent's, so a key
 * dropped or added anywhere changes where a kept one goes). When any differs,
 * a document carrying a `[REDACTED]` credential is refused, naming the first, and its secrets must be sent
 * again: a kept secret never reaches a provider, host, hook, guardrail, prompt or config it did not reach
 * before. A `[REDACTED]` where the previous version holds nothing is refused the same way.
 */
import { GatewayError } from '../../../core/errors.js';
import { catalogModel } from '../../../gateway/config/model-provider.js';
import { CHECK_ADDRESS_FIELDS } from '../../../hooks/registry.js';
import { REDACTED } from '../../../observability/redact.js';
import { isSecretSetting } from './views.js';
import { isObject, type Json } from './json.js';

/**
 * Fields that say where a credential beside them (or below them) is sent: the provider, a host of one's
 * own, a service account's `token_uri` (its private key signs the assertion posted there, which anyone
 * holding can trade for the account's access tokens), the cloud settings a host name is made from (an
 * Azure resource or endpoint name is a host anyone can own), and every built-in check's URL (`webhookURL`,
 * `logURL`: read from the checks' parameter schemas, so a check added with a URL is covered; its `headers`
 * go there).
 */
export const ADDRESS_FIELDS: readonly string[] = [
  'provider',
  'custom_host',
  'virtual_key',
  'url',
  'token_uri',
  'resource_name',
  'cloudd_resource_name',
  'cloudd_endpoint_name',
  'cloudd_region',
  'cloudd_deployment_type',
  'cloudb_region',
  'cloudb_project_id',
  'cloudc_region',
  ...CHECK_ADDRESS_FIELDS,
];

/**
 * Every field whose value names a destination: the address fields, the deployments and projects a call is
 * made for, the prompt a `prompt_id` target sends its calls through, and a prompt version's `config` (a
 * stored config's slug or id; an inline one's own fields count where they are).
 */
const DESTINATION_FIELDS: ReadonlySet<string> = new Set([
  ...ADDRESS_FIELDS,
  'deployments',
  'deployment_id',
  'cloudd_deployment_name',
  'cloudd_deployment_id',
  'vendora_organization',
  'vendora_project',
  'prompt_id',
]);

/** Lists whose string items name a stored guardrail (by slug or id) that is sent the call. */
const NAMED_GUARDRAIL_LISTS: ReadonlySet<string> = new Set([
  'input_guardrails',
  'output_guardrails',
  'before_request_hooks',
  'after_request_hooks',
]);

/** A destination: where in the document (`targets[1].custom_host`) and what it names, as JSON text. */
type Destination = readonly [place: string, value: string];

/**
 * Every destination anywhere in `value`: each DESTINATION_FIELDS value, the catalog provider (`@slug`) of a
 * `model` written `@slug/model`, each stored guardrail named in a guardrail or hook list, each check's id
 * (a check sends the call to its service), and a `config` given as a stored config's slug or id.
 */
export function destinationsOf(value: unknown, path = '', found: Destination[] = []): Destination[] {
  if (Array.isArray(value)) value.forEach((item, i) => destinationsOf(item, `${path}[${i}]`, found));
  if (!isObject(value)) return found;
  for (const [key, inner] of Object.entries(value)) {
    const at = path === '' ? key : `${path}.${key}`;
    if (DESTINATION_FIELDS.has(key) || (key === 'config' && typeof inner === 'string')) {
      found.push([at, JSON.stringify(inner)]);
      continue;
    }
    const catalog = key === 'model' ? catalogModel(inner) : undefined;
    if (catalog !== undefined) found.push([at, JSON.stringify(catalog.provider)]);
    if (NAMED_GUARDRAIL_LISTS.has(key) && Array.isArray(inner)) {
      inner.forEach((item, i) => {
        if (typeof item === 'string') found.push([`${at}[${i}]`, JSON.stringify(item)]);
      });
    }
    if (key === 'checks' && Array.isArray(inner)) {
      inner.forEach((check, i) => {
        if (isObject(check) && check.id !== undefined)
          found.push([`${at}[${i}].id`, JSON.stringify(check.id)]);
      });
    }
    destinationsOf(inner, at, found);
  }
  return found;
}

const text = ([place, value]: Destination) => `${place}=${value}`;

/**
 * Every place in `value` where a credential is held: each key shown as `[REDACTED]` (views.ts:
 * isSecretSetting, with any value), inside headers given as JSON text too. The values do not count (a key
 * rotated at its place goes where it went); their places do, as whether a target takes its parent's key
 * depends on them.
 */
function credentialPlaces(value: unknown, path = '', found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((item, i) => credentialPlaces(item, `${path}[${i}]`, found));
  if (!isObject(value)) return found;
  for (const [key, inner] of Object.entries(value)) {
    const at = path === '' ? key : `${path}.${key}`;
    if (isSecretSetting(key) && inner !== null && inner !== undefined) found.push(`${at} holds a credential`);
    else credentialPlaces(key === 'headers' ? parsedText(inner) : inner, at, found);
  }
  return found;
}

const sameItems = (now: string[], before: string[]): boolean => {
  now.sort();
  before.sort();
  return now.length === before.length && now.every((item, i) => item === before[i]);
};

/** Whether two documents name the same destinations, each at the same place. */
export function sameDestinations(next: unknown, stored: unknown): boolean {
  return sameItems(destinationsOf(next).map(text), destinationsOf(stored).map(text));
}

/** sameDestinations, and their credentials held at the same places: what keeping a `[REDACTED]` asks. */
function sameDestinationsAndCredentials(next: unknown, stored: unknown): boolean {
  return sameDestinations(next, stored) && sameItems(credentialPlaces(next), credentialPlaces(stored));
}

/** `next` with each `[REDACTED]` credential replaced by the value `stored` holds there. `path` names `next`
 * in a refusal; an empty one names its fields alone (`config.api_key` in a prompt version). */
export function keepRedactedValues(next: unknown, stored: unknown, path: string): unknown {
  return walk(next, stored, path, sameDestinationsAndCredentials(next, stored));
}

/** A prompt version sent back as shown: the same rule over the whole version, its `config` (a stored
 * config's slug or id, or an inline config's destinations) among its destinations. */
export function keepRedactedPromptValues(next: unknown, stored: unknown): unknown {
  return keepRedactedValues(next, stored, '');
}

function walk(next: unknown, stored: unknown, path: string, same: boolean): unknown {
  if (Array.isArray(next)) {
    const list = Array.isArray(stored) ? stored : [];
    return next.map((item, i) => walk(item, list[i], `${path}[${i}]`, same));
  }
  if (!isObject(next)) return next;
  const before = isObject(stored) ? stored : undefined;
  const out: Json = {};
  for (const [key, value] of Object.entries(next)) {
    const at = path === '' ? key : `${path}.${key}`;
    if (value === REDACTED && isSecretSetting(key)) {
      out[key] = kept(before?.[key], at, same);
      continue;
    }
    out[key] =
      key === 'headers' && typeof value === 'string'
        ? headersText(value, before?.[key], at, same)
        : walk(value, before?.[key], at, same);
  }
  return out;
}

/** The stored value a `[REDACTED]` at `at` stands for, or the refusal naming it. */
function kept(stored: unknown, at: string, same: boolean): unknown {
  if (!same) {
    throw new GatewayError(
      'invalid_body',
      `${at} is ${REDACTED}, which stands for a stored value, but the document's destinations changed ` +
        '(a provider, host, hook, guardrail, prompt or config it sends to), so its secrets must be sent again: ' +
        'send the real value',
      { param: at },
    );
  }
  if (stored === undefined || stored === REDACTED) {
    throw new GatewayError(
      'invalid_body',
      `${at} is ${REDACTED}, which stands for a stored value: there is none here; send the real value`,
      { param: at },
    );
  }
  return stored;
}

/** Headers given as the text of a JSON object: that object (undefined for other text); what is not text as it is. */
function parsedText(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** Headers given as the text of a JSON object, shown redacted inside: the same rule, inside the text. */
function headersText(value: string, stored: unknown, path: string, same: boolean): string {
  if (!value.includes(REDACTED)) return value;
  const parsed = parsedText(value);
  if (!isObject(parsed)) return value;
  return JSON.stringify(walk(parsed, parsedText(stored), path, same));
}
