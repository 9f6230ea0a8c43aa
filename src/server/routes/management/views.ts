/**
 * What the management API answers with. Stored secrets never leave the gateway: a credential is shown
 * as the names of the settings it holds, its non-secret settings, and a short hint of its api_key so
 * people can tell keys apart; configs and guardrails are shown with every credential value redacted.
 */
import { isSecretKey, redact } from '../../../observability/redact.js';
import { configHeadersShown, headersShown } from './extra-headers.js';
import type {
  ApiKey,
  PromptDocument,
  ProviderCredential,
  StoredConfig,
  StoredConfigVersion,
  StoredGuardrail,
  StoredGuardrailVersion,
  StoredPrompt,
  StoredPromptPartial,
  StoredPromptPartialVersion,
  StoredPromptVersion,
  Workspace,
} from '../../../store/types.js';

/** Settings that are credentials even though their names do not say so to `isSecretKey`. */
const SECRET_SETTINGS = new Set([
  'api_key',
  'cloudc_access_key_id',
  'cloudc_secret_access_key',
  'cloudc_session_token',
  'cloudb_service_account_json',
]);

/** A hint short enough to reveal nothing useful: the last 4 characters of a key of 12 or more. */
const HINT_MIN_LENGTH = 12;
const HINT_LENGTH = 4;

export function isSecretSetting(name: string): boolean {
  return SECRET_SETTINGS.has(name) || isSecretKey(name);
}

/**
 * A stored document (a config, a prompt's inline config) as answers show it: every credential redacted,
 * those `redact` knows by name and the provider settings that are credentials though their names do not
 * say so (`cloudc_access_key_id`), which a credential's view lists as secret too.
 */
function redactDocument(value: unknown): unknown {
  return redact(value, isSecretSetting);
}

export function apiKeyHint(value: unknown): string | null {
  if (typeof value !== 'string' || value.length < HINT_MIN_LENGTH) return null;
  return `…${value.slice(-HINT_LENGTH)}`;
}

export function apiKeyView(key: ApiKey) {
  return { object: 'api_key' as const, ...key };
}

export function workspaceView(workspace: Workspace) {
  return { object: 'workspace' as const, ...workspace };
}

export function credentialView(credential: ProviderCredential) {
  const { secret, ...rest } = credential;
  const settings: Record<string, unknown> = {};
  const secretKeys: string[] = [];
  for (const [name, value] of Object.entries(secret)) {
    if (value === undefined || value === null) continue;
    if (isSecretSetting(name)) secretKeys.push(name);
    // Non-secret settings are shown, but still through `redact` in case a nested value is a credential.
    else settings[name] = redact(value);
  }
  return {
    object: credential.kind,
    ...rest,
    secret_keys: secretKeys.sort(),
    api_key_hint: apiKeyHint(secret.api_key),
    settings,
  };
}

export function configView(config: StoredConfig) {
  return { object: 'config' as const, ...config, config: redactDocument(configHeadersShown(config.config)) };
}

export function configVersionView(version: StoredConfigVersion) {
  return {
    object: 'config.version' as const,
    ...version,
    config: redactDocument(configHeadersShown(version.config)),
  };
}

/** A guardrail may hold credentials too (a webhook check's `headers`): redacted like a config's. */
export function guardrailView(guardrail: StoredGuardrail) {
  return { object: 'guardrail' as const, ...guardrail, guardrail: redact(guardrail.guardrail) };
}

export function guardrailVersionView(version: StoredGuardrailVersion) {
  return { object: 'guardrail.version' as const, ...version, guardrail: redact(version.guardrail) };
}

/**
 * A prompt's version document may hold an inline config with credentials: redacted like a config. A
 * version stored before `extra_headers` had to be an object (`parameters.extra_headers`, or an inline
 * config node's `override_params.extra_headers`) may hold it as text or an array, whose header names are
 * no keys: it is shown as `[REDACTED]` whole (extra-headers.ts).
 */
function promptDocumentView(document: PromptDocument): object {
  const shown = {
    ...document,
    parameters: headersShown(document.parameters),
    ...(typeof document.config === 'object' && { config: configHeadersShown(document.config) }),
  };
  return redactDocument(shown) as object;
}

export function promptView(prompt: StoredPrompt) {
  const { prompt: document, ...rest } = prompt;
  return { object: 'prompt' as const, ...rest, ...promptDocumentView(document) };
}

export function promptVersionView(version: StoredPromptVersion) {
  const { prompt: document, ...rest } = version;
  return { object: 'prompt.version' as const, ...rest, ...promptDocumentView(document) };
}

export function promptPartialView(partial: StoredPromptPartial) {
  const { partial: document, ...rest } = partial;
  return { object: 'prompt.partial' as const, ...rest, string: document.string };
}

export function promptPartialVersionView(version: StoredPromptPartialVersion) {
  const { partial: document, ...rest } = version;
  return { object: 'prompt.partial.version' as const, ...rest, string: document.string };
}

export function listView<T>(data: T[]) {
  return { object: 'list' as const, data };
}

export function deletedView(object: string, id: string) {
  return { object: `${object}.deleted`, id, deleted: true };
}
