/**
 * Stored configs, guardrails and prompt versions (an inline config's) are shown with their credentials as
 * `[REDACTED]` (views.ts), and an editor
 * (the console's, a script's) sends a new version back as it was shown. A `[REDACTED]` under a credential
 * key of the new version stands for the stored value at the same place, and is kept as it was — as long
 * as every object on the way to it still says the same about where the credential goes (its `provider`,
 * `custom_host`, a webhook's URL), and so does every target below it that takes its parent's provider
 * settings (inherit.ts: one naming no provider or virtual key of its own, which the key reaches with its
 * own host) — every target below, for a value of `override_params`, which all of them send: a key is never
 * carried over to another provider or host. Anywhere else the placeholder is
 * refused, naming it, rather than stored as if it were the credential.
 */
import { GatewayError } from '../../../core/errors.js';
import { takesParentProvider } from '../../../gateway/routing/inherit.js';
import { CHECK_ADDRESS_FIELDS } from '../../../hooks/registry.js';
import { REDACTED } from '../../../observability/redact.js';
import { isSecretSetting } from './views.js';

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

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** `next` with each `[REDACTED]` credential replaced by the value `stored` holds there. `path` names `next`
 * in a refusal; an empty one names its fields alone (`config.api_key` in a prompt version). */
export function keepRedactedValues(next: unknown, stored: unknown, path: string): unknown {
  return walk(next, stored, path, true);
}

/**
 * A prompt version sent back as shown, as keepRedactedValues keeps a config's. Its `config` decides where
 * everything outside it goes as well (`parameters` are the body of its calls, their `extra_headers` the
 * headers), so a `[REDACTED]` outside it is kept only while the config is the same too: the same stored
 * config's id or slug, or an inline config setting the same address fields at the same places.
 */
export function keepRedactedPromptValues(next: unknown, stored: unknown): unknown {
  const sameConfig = isObject(next) && isObject(stored) && sameConfigAddresses(next.config, stored.config);
  return walk(next, stored, '', true, (key) => key === 'config' || sameConfig);
}

/**
 * `keeps` says, for a key of `next` itself, whether values under it may be kept at all (a prompt's
 * `parameters` not once its config changed); below it, only where they go decides.
 */
function walk(
  next: unknown,
  stored: unknown,
  path: string,
  sameAddress: boolean,
  keeps: (key: string) => boolean = () => true,
): unknown {
  if (Array.isArray(next)) {
    const list = Array.isArray(stored) ? stored : [];
    return next.map((item, i) => walk(item, list[i], `${path}[${i}]`, sameAddress));
  }
  if (!isObject(next)) return next;
  const before = isObject(stored) ? stored : undefined;
  const onTheWay = sameAddress && before !== undefined && sameAddressFields(next, before);
  // The node's credentials also reach the targets below that take them (here); a target's own are judged by
  // the nodes above it (onTheWay) and its own targets, never by its siblings.
  const here = onTheWay && takersKeepAddresses(next, before);
  const out: Json = {};
  for (const [key, value] of Object.entries(next)) {
    const at = path === '' ? key : `${path}.${key}`;
    if (key === 'targets') {
      out[key] = walk(value, before?.[key], at, onTheWay && keeps(key));
      continue;
    }
    // A node's override_params go into the body of every call below it, to each target's own provider too.
    const keptHere =
      here && keeps(key) && (key !== 'override_params' || sameAddressesAt(next.targets, before?.targets));
    if (value === REDACTED && isSecretSetting(key)) {
      const kept = keptHere ? before[key] : undefined;
      if (kept === undefined || kept === REDACTED) {
        throw new GatewayError(
          'invalid_body',
          `${at} is ${REDACTED}, which stands for a stored value: there is none here (or where it goes changed: its provider or host, or a host of a target below taking it); send the real value`,
          { param: at },
        );
      }
      out[key] = kept;
      continue;
    }
    out[key] =
      key === 'headers' && typeof value === 'string'
        ? headersText(value, before?.[key], at, keptHere)
        : walk(value, before?.[key], at, keptHere);
  }
  return out;
}

function sameAddressFields(next: Json, before: Json): boolean {
  return ADDRESS_FIELDS.every((field) => JSON.stringify(next[field]) === JSON.stringify(before[field]));
}

/**
 * Whether each target below `next` that takes its provider settings (and so its credentials, with any host
 * it sets itself) sets the same address fields as the target at its place in `before`, or, where there was
 * none, sets none. One naming a provider or virtual key of its own takes none of them, nor do those below it.
 */
function takersKeepAddresses(next: Json, before: Json | undefined): boolean {
  const targets = Array.isArray(next.targets) ? next.targets : [];
  const previous = before !== undefined && Array.isArray(before.targets) ? before.targets : [];
  return targets.every((target: unknown, i) => {
    if (!isObject(target) || !takesParentProvider(target)) return true;
    const was: Json = isObject(previous[i]) ? previous[i] : {};
    return sameAddressFields(target, was) && takersKeepAddresses(target, was);
  });
}

/** Whether two prompt configs send calls to the same places: the same stored config's id or slug (or no
 * config in either), or inline configs setting the same address fields at the same places. */
function sameConfigAddresses(next: unknown, stored: unknown): boolean {
  if (!isObject(next) || !isObject(stored)) return next === stored;
  return sameAddressesAt(next, stored);
}

/** Whether `next` sets the same address fields as `stored` at the same places, anywhere within them. */
function sameAddressesAt(next: unknown, stored: unknown): boolean {
  const now = addressesOf(next);
  const before = addressesOf(stored);
  return now.size === before.size && [...now].every(([at, value]) => before.get(at) === value);
}

/** Each address field set anywhere in `value`, by its place (`.targets[1].custom_host`), as JSON text. */
function addressesOf(value: unknown, path = '', found = new Map<string, string>()): Map<string, string> {
  if (Array.isArray(value)) value.forEach((item, i) => addressesOf(item, `${path}[${i}]`, found));
  else if (isObject(value)) {
    for (const [key, inner] of Object.entries(value)) {
      if (ADDRESS_FIELDS.includes(key)) found.set(`${path}.${key}`, JSON.stringify(inner));
      addressesOf(inner, `${path}.${key}`, found);
    }
  }
  return found;
}

/** Headers given as the text of a JSON object, shown redacted inside: the same rule, inside the text. */
function headersText(text: string, stored: unknown, path: string, sameAddress: boolean): string {
  if (!text.includes(REDACTED)) return text;
  const parse = (value: unknown): unknown => {
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value);
    } catch {
      return undefined;
    }
  };
  const parsed = parse(text);
  if (!isObject(parsed)) return text;
  return JSON.stringify(walk(parsed, parse(stored), path, sameAddress));
}
