/**
 * The client headers a target's `forward_headers` sends its provider on a model call, less the ones only a
 * credential's owner may send. Those authenticate a provider account or choose which of a credential's
 * accounts a call is made on and billed to. With the caller's own credential — its provider key (the
 * target's `clientKey`, resolve-target.ts), or a key, service account or access keys written in the config
 * it sends with the request — they are the caller's to send. With a stored one (a virtual key's, a catalog
 * provider's, a stored config's, a stored prompt's) a caller holding only a gateway key would bill another
 * project or organisation the credential reaches, or send a credential of its own beside the stored one to
 * a provider it was not meant for, so they stay behind whatever forward_headers names, and the target's own
 * settings (`vendora_organization`, `vendora_project`, the service account's project) apply. A config
 * stored with one beside a stored credential is refused when it is stored (`refuseOwnerHeadersBesideStored`).
 * The pass-through decides whose credential a call uses by the same rule (`callerOwnsCredential`).
 */
import { fieldError } from '../core/validator/compile-validator.js';
import type { CallContext } from './call-context.js';
import type { GatewayConfig, TargetConfig } from './config/index.js';
import { STORED_SECRET_KEYS } from './credential-host.js';
import type { ResolvedTarget } from './resolve-target.js';
import { childPath, inheritFrom } from './routing/inherit.js';

/**
 * Headers that carry a provider credential, by the providers' API references: `Authorization` (OpenAI and
 * the OpenAI-compatible providers, Cohere, Vertex AI's access token, Azure's Entra ID token, Bedrock's API
 * key or Signature V4), Anthropic's `x-api-key`, Azure OpenAI's `api-key`, Azure AI services'
 * `ocp-apim-subscription-key`, Google's `x-goog-api-key` (Gemini, Vertex AI express mode).
 */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'x-api-key',
  'api-key',
  'ocp-apim-subscription-key',
  'x-goog-api-key',
]);

/**
 * Headers that choose the account a credential is used on: OpenAI's organization and project, Google's quota
 * project (`x-goog-user-project`, billed and counted for the call: Gemini, Vertex AI). Anthropic's, Azure's,
 * Bedrock's and Cohere's keys are their workspace's, resource's or account's own, with no such header;
 * `anthropic-version` and `anthropic-beta` choose the API's version and features, not an account, and pass.
 */
const ACCOUNT_HEADERS: ReadonlySet<string> = new Set([
  'openai-organization',
  'openai-project',
  'x-goog-user-project',
]);

/** AWS Signature V4's own headers (`x-amz-date`, `x-amz-security-token`, `x-amz-content-sha256`): the
 * signature the target's access keys make, which a client's session token or date would join. */
const AWS_SIGNING_PREFIX = 'x-amz-';

/** Whether a header (lower-case) is one only the owner of the call's credential may send. */
export function ownerOnlyHeader(name: string): boolean {
  return CREDENTIAL_HEADERS.has(name) || ACCOUNT_HEADERS.has(name) || name.startsWith(AWS_SIGNING_PREFIX);
}

/**
 * Whether the target's call goes with the caller's own credential: its provider key (its Authorization,
 * taken by a target holding no credential of its own), or one written in a config it sent with the request.
 * Not a virtual key's or a catalog provider's, nor one a stored config or a stored prompt's destination
 * holds (`storedSettings`).
 */
export function callerOwnsCredential(
  resolved: Pick<ResolvedTarget, 'clientKey' | 'credential' | 'path'>,
  ctx: Pick<CallContext, 'storedConfig' | 'storedSettings'>,
): boolean {
  if (resolved.clientKey === true) return true;
  if (resolved.credential !== undefined || ctx.storedConfig !== undefined) return false;
  return !settingsStoredAt(ctx.storedSettings, resolved.path);
}

/** Whether the target at `path` takes its provider settings from the store: below a stored destination. */
function settingsStoredAt(stored: CallContext['storedSettings'], path: string): boolean {
  if (stored === undefined) return false;
  if (stored === true) return true;
  for (const at of stored) {
    if (at === '' || path === at || path.startsWith(`${at}.`)) return true;
  }
  return false;
}

/** The client headers named by the node's `forward_headers` (lower-case) that its call sends the provider. */
export function forwardedHeaders(
  node: TargetConfig,
  ctx: Pick<CallContext, 'clientHeaders' | 'storedConfig' | 'storedSettings'>,
  resolved: Pick<ResolvedTarget, 'clientKey' | 'credential' | 'path'>,
): Record<string, string> {
  const names = node.forward_headers;
  const out: Record<string, string> = {};
  if (!names || names.length === 0) return out;
  let owned: boolean | undefined;
  for (const name of names) {
    const lower = name.toLowerCase();
    const value = ctx.clientHeaders[lower];
    if (typeof value !== 'string') continue;
    if (ownerOnlyHeader(lower) && !(owned ??= callerOwnsCredential(resolved, ctx))) continue;
    out[lower] = value;
  }
  return out;
}

/**
 * Refuses (400 `invalid_config`, naming the header where `forward_headers` gives it) a config to be stored
 * — a stored config, a prompt version's own config — whose forward_headers name an owner-only header for a
 * target holding a stored credential: a virtual key, a catalog provider, or a credential written in the
 * config, its own or its parent's (routing/inherit.ts). Its calls would never send the header; a target
 * holding none (the caller's key is used) may name it. A `prompt_id` target's destination is the prompt's,
 * judged when the call is made.
 */
export function refuseOwnerHeadersBesideStored(config: GatewayConfig, path = 'config'): void {
  walk(config, config, path, path);
}

function walk(node: TargetConfig, effective: TargetConfig, path: string, namedAt: string): void {
  if (node.targets && node.targets.length > 0) {
    node.targets.forEach((child, i) => {
      const at = childPath(path, i);
      walk(child, inheritFrom(effective, child), at, child.forward_headers !== undefined ? at : namedAt);
    });
    return;
  }
  // Where a prompt_id target's calls go is its prompt's destination, which may change: judged on the call.
  if (effective.prompt_id !== undefined && node.provider === undefined && node.virtual_key === undefined)
    return;
  const credential = storedCredentialOf(effective);
  if (credential === undefined) return;
  effective.forward_headers?.forEach((name, i) => {
    const lower = name.toLowerCase();
    if (!ownerOnlyHeader(lower)) return;
    const target = namedAt === path ? '' : ` of ${path}`;
    throw fieldError(
      'invalid_config',
      `${namedAt}.forward_headers[${i}]`,
      `cannot be ${lower} beside the stored credential${target} (${credential}): the header authenticates ` +
        "a provider account or chooses the one a call is billed to, and goes only with the caller's own " +
        'credential, never a stored one',
    );
  });
}

/** The stored credential a target's calls go with, as the error names it (never its value). */
function storedCredentialOf(node: TargetConfig): string | undefined {
  if (typeof node.virtual_key === 'string') return `virtual_key "${node.virtual_key}"`;
  if (typeof node.provider === 'string' && node.provider.startsWith('@'))
    return `provider "${node.provider}"`;
  const fields = node as Record<string, unknown>;
  const key = STORED_SECRET_KEYS.find((name) => fields[name] !== undefined && fields[name] !== null);
  return key === undefined ? undefined : `${key} written in the config`;
}
