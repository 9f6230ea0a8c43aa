/**
 * Stored credentials go only to the host stored with them. Beside a virtual key or an `@slug` whose
 * credential holds a secret, a node may not give a setting the host is made from — `custom_host`, or the
 * cloud settings a host name is built from (an Azure resource or endpoint name is a host anyone can own) —
 * other than the stored one: a caller who may use the credential could otherwise point it at a server of
 * their own and read the secret from the request. The same settings a PATCH of the credential must send
 * its secrets again to change (docs/management-api.md).
 */
import { otherProjectRefused } from '../providers/vertex-ai/vertex-ai-project-names.js';

/** Stored keys that are secrets (not mere addresses or names). */
export const STORED_SECRET_KEYS = [
  'api_key',
  'cloudc_access_key_id',
  'cloudc_secret_access_key',
  'cloudc_session_token',
  'cloudb_service_account_json',
] as const;

/**
 * Settings a provider's host is made from where the name is one anyone can own: Azure resource and endpoint
 * names (an Azure AI endpoint's name is unique within its region only, so its region is one of them). A
 * Bedrock or Vertex AI region, checked against its pattern, only chooses among AWS's and Google's own
 * hosts, where the credential goes anyway: a config may set it beside a stored credential (one key serving
 * several regions, a fallback from one region to another). A Vertex AI project is not a host but is held
 * to the credential's own all the same (movedProject).
 */
const HOST_SETTINGS = [
  'custom_host',
  'resource_name',
  'cloudd_resource_name',
  'cloudd_endpoint_name',
  'cloudd_region',
  'cloudd_deployment_type',
] as const;

/**
 * The host settings `node` gives that are not the ones `stored` (a credential's settings) holds, when the
 * credential holds a secret; none when it holds none.
 */
export function movedHostSettings(
  node: Readonly<Record<string, unknown>>,
  stored: Readonly<Record<string, unknown>>,
): string[] {
  if (!STORED_SECRET_KEYS.some((key) => stored[key] !== undefined)) return [];
  return HOST_SETTINGS.filter(
    (key) => node[key] !== undefined && node[key] !== null && node[key] !== stored[key],
  );
}

/** The first of movedHostSettings; undefined when there is none. */
export function movedHostSetting(
  node: Readonly<Record<string, unknown>>,
  stored: Readonly<Record<string, unknown>>,
): string | undefined {
  return movedHostSettings(node, stored)[0];
}

/** Why the node's `setting` (found by movedHostSetting) is refused. */
export function movedHostMessage(setting: string): string {
  return (
    `stored credentials are sent only to the host stored with them: ${setting} beside a virtual key or ` +
    `@provider (the node's own, one it takes from its parent, or its prompt's destination) must be the ` +
    `stored one, or left out; set it on the virtual key or provider instead`
  );
}

/**
 * The project a stored Vertex AI credential is for: its `cloudb_project_id`, else its service account's
 * `project_id`; undefined when it names none.
 */
export function storedProject(stored: Readonly<Record<string, unknown>>): string | undefined {
  const account = stored.cloudb_service_account_json;
  const project =
    stored.cloudb_project_id ??
    (typeof account === 'object' && account !== null
      ? (account as Record<string, unknown>).project_id
      : undefined);
  return typeof project === 'string' && project !== '' ? project : undefined;
}

/**
 * A Vertex AI project the node gives beside a stored credential holding a secret that is not the
 * credential's own (storedProject): the project a call is made in and billed to. A service account may
 * reach projects other than the one its credential is stored for, and a caller who may use the credential
 * is given that one only, as with its host; a region is not one of these (one key, several regions).
 * Undefined when the node gives none, the credential's own, or the credential holds no secret.
 */
export function movedProject(
  node: Readonly<Record<string, unknown>>,
  stored: Readonly<Record<string, unknown>>,
): { asked: string; own: string | undefined } | undefined {
  const asked = node.cloudb_project_id;
  if (asked === undefined || asked === null) return undefined;
  if (!STORED_SECRET_KEYS.some((key) => stored[key] !== undefined)) return undefined;
  const own = storedProject(stored);
  return asked === own ? undefined : { asked: String(asked), own };
}

/** Why the node's project (found by movedProject) is refused, after the credential it is set on: Vertex
 * AI's refusal of another project (otherProjectRefused), worded as its other refusals are. */
export function movedProjectMessage(
  storedOn: string,
  { asked, own }: { asked: string; own?: string },
): string {
  return otherProjectRefused('The config', asked, own, {
    why: `the ${storedOn} may not be used there`,
    remedy: 'Leave cloudb_project_id out, or call with your own credentials to reach another project',
  }).message;
}
