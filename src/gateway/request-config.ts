/**
 * Which config governs a request: the `x-gateway-config` header (inline JSON or a stored config's id),
 * or else one built from the provider-selection headers (`x-gateway-virtual-key`, `x-gateway-provider`
 * with `Authorization: Bearer`, `x-gateway-custom-host`). Header-derived provider settings also fill in a
 * config that names no provider of its own (e.g. one that only sets `cache` or `retry`). A request that
 * names neither may name a catalog provider in its body's model (`@openai-prod/gpt-4o`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { LRUCache } from 'lru-cache';
import {
  catalogModel,
  parseConfig,
  parseConfigHeader,
  keyAsWritten,
  type GatewayConfig,
} from './config/index.js';
import { HEADERS, headerValue } from './context.js';
import { GatewayError } from '../core/errors.js';
import type { Lookups } from './lookups.js';
import { configParam } from './routing/inherit.js';
import type { StoredConfig } from '../store/types.js';

/**
 * Parsed configs, so a config is validated once and not on every request: inline ones by their header
 * text, stored ones by the cached store record (a new version is a new record). Parsed configs are never
 * mutated by their readers.
 */
const inlineConfigs = new LRUCache<string, GatewayConfig>({ max: 1000 });
const storedConfigs = new WeakMap<StoredConfig, GatewayConfig>();
/** Configs built from provider-selection headers (or a body's model), by the values they were built from,
 * kept as the RequestConfig a request is given, which its readers never change either: a request's config
 * then comes with no object made for it. */
const headerConfigs = new LRUCache<string, RequestConfig>({ max: 1000 });

/**
 * `Bearer` in any case and the whitespace after it, when a token follows on the same line. Sticky, so that
 * a match ends at `lastIndex` and the token is sliced from there: `test` makes no match array, where `exec`
 * made one (and its groups) on every request, twice (the request's config and its context).
 */
const BEARER_SCHEME = /Bearer\s+(?=.+$)/iy;

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const value = headerValue(headers, 'authorization');
  if (!value) return undefined;
  const text = value.trim();
  BEARER_SCHEME.lastIndex = 0;
  return BEARER_SCHEME.test(text) ? text.slice(BEARER_SCHEME.lastIndex) : undefined;
}

/** The provider settings carried by headers, as config keys. */
function headerProvider(headers: IncomingHttpHeaders): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const virtualKey = headerValue(headers, HEADERS.virtualKey);
  const provider = headerValue(headers, HEADERS.provider);
  const customHost = headerValue(headers, HEADERS.customHost);
  if (virtualKey) out.virtual_key = virtualKey;
  if (provider) {
    out.provider = provider;
    // An @slug carries its own stored credentials; the client's Authorization (which SDKs always send)
    // must not override them. resolveTarget still falls back to it when the slug stores no key.
    const token = provider.startsWith('@') ? undefined : bearerToken(headers);
    if (token) out.api_key = token;
  }
  if (customHost) out.custom_host = customHost;
  return out;
}

/** Configs built from the request rather than written as one, with what each of their keys came from, so
 * errors can name the header or body field, not a config key. */
const derivedFrom = new WeakMap<object, Readonly<Record<string, string>>>();

const HEADER_FOR_KEY: Readonly<Record<string, string>> = {
  provider: HEADERS.provider,
  virtual_key: HEADERS.virtualKey,
  custom_host: HEADERS.customHost,
  api_key: 'authorization',
};

/** A config whose provider the body's model named: that provider and its model are the body's `model`. */
const BODY_MODEL_FOR_KEY: Readonly<Record<string, string>> = {
  ...HEADER_FOR_KEY,
  provider: 'model',
  'override_params.model': 'model',
};

/** The name to report for a key of `node`: the header or body field it came from, or its path in the
 * config. */
export function paramFor(node: object, path: string, key: string): string {
  return derivedFrom.get(node)?.[key] ?? configParam(path, keyAsWritten(node, key));
}

function parseDerivedConfig(
  fromRequest: Record<string, unknown>,
  names: Readonly<Record<string, string>>,
): GatewayConfig {
  let config: GatewayConfig;
  try {
    config = parseConfig(fromRequest, { authorizationPresent: fromRequest.api_key !== undefined });
  } catch (err) {
    const key = err instanceof GatewayError ? err.param?.replace(/^config\./, '') : undefined;
    if (err instanceof GatewayError && key && names[key]) {
      throw new GatewayError(err.code, err.message.replaceAll(`config.${key}`, names[key]), {
        param: names[key],
      });
    }
    throw err;
  }
  derivedFrom.set(config, names);
  return config;
}

/**
 * The config of a request that names no provider and no config, from its body's model written
 * `@<provider_slug>/<model>`: the catalog provider `@<provider_slug>` called with `<model>`, as a config's
 * `override_params.model` so written names it (config/model-provider.ts). Undefined for any other model.
 */
function bodyModelConfig(model: unknown, fromHeaders: Record<string, unknown>): RequestConfig | undefined {
  if (catalogModel(model) === undefined) return undefined;
  // Apart from the header configs' keys, which never begin with a line break.
  const key = `\n${fromHeaders.custom_host}\n${model as string}`;
  let resolved = headerConfigs.get(key);
  if (!resolved) {
    const config = parseDerivedConfig({ ...fromHeaders, override_params: { model } }, BODY_MODEL_FOR_KEY);
    resolved = { config, stored: undefined };
    headerConfigs.set(key, resolved);
  }
  return resolved;
}

/** Whether the headers name a call's provider (a provider, a virtual key) or its config: a model call
 * whose headers name none of these takes its provider from its body's `model` (`@<provider_slug>/<model>`). */
export function namesProvider(headers: IncomingHttpHeaders): boolean {
  if (headerValue(headers, HEADERS.config) !== undefined) return true;
  const fromHeaders = headerProvider(headers);
  return Boolean(fromHeaders.provider) || Boolean(fromHeaders.virtual_key);
}

// A `prompt_id` target takes the prompt's destination (prompts/prompt-targets.ts).
const NAMES_A_PROVIDER = ['provider', 'virtual_key', 'targets', 'prompt_id'] as const;

/** A stored config a call runs under, as rate-limit policies name it (`config`: its id or slug). */
export type StoredConfigRef = Pick<StoredConfig, 'id' | 'slug'>;

export interface RequestConfig {
  readonly config: GatewayConfig;
  /** Set when `x-gateway-config` named a stored config. */
  readonly stored: StoredConfigRef | undefined;
}

/**
 * The config a request's headers name: from its provider headers, an inline `x-gateway-config` or a stored
 * config; when they name none of these, from its body's `model` when that names a catalog provider. Header
 * and inline configs are parsed once and kept, so they come back at once, with no promise (this runs for
 * every request); a stored config, which must be looked up, comes as a promise.
 */
export function resolveRequestConfig(
  headers: IncomingHttpHeaders,
  workspaceId: string,
  lookups: Lookups,
  /** The body's `model`, read only when the headers name no provider and no config. */
  bodyModel?: unknown,
): RequestConfig | Promise<RequestConfig> {
  const fromHeaders = headerProvider(headers);
  const raw = headerValue(headers, HEADERS.config);
  if (raw === undefined) {
    if (!fromHeaders.provider && !fromHeaders.virtual_key) {
      const fromModel = bodyModelConfig(bodyModel, fromHeaders);
      if (fromModel) return fromModel;
      // The model is named as a way only where a model is read: on the model endpoints.
      const orModel =
        bodyModel === undefined ? '' : ', or name a catalog provider in the model (@<provider_slug>/<model>)';
      throw new GatewayError(
        'missing_provider',
        `Say which provider to call: send ${HEADERS.provider} (with Authorization: Bearer <provider key>), ` +
          `${HEADERS.virtualKey} or ${HEADERS.config}${orModel}`,
        { param: HEADERS.provider },
      );
    }
    const key = `${fromHeaders.provider}\n${fromHeaders.virtual_key}\n${fromHeaders.custom_host}\n${fromHeaders.api_key}`;
    let resolved = headerConfigs.get(key);
    if (!resolved) {
      resolved = { config: parseDerivedConfig(fromHeaders, HEADER_FOR_KEY), stored: undefined };
      headerConfigs.set(key, resolved);
    }
    return resolved;
  }
  const authorizationPresent = bearerToken(headers) !== undefined;
  const inlineKey = `${authorizationPresent ? 1 : 0}${raw}`;
  const inline = inlineConfigs.get(inlineKey);
  if (inline) return withProviderHeaders(inline, undefined, fromHeaders);
  const parsed = parseConfigHeader(raw, { authorizationPresent });
  if (!('storedConfigId' in parsed)) {
    inlineConfigs.set(inlineKey, parsed);
    return withProviderHeaders(parsed, undefined, fromHeaders);
  }
  return lookups.config(workspaceId, parsed.storedConfigId).then((stored) => {
    if (!stored || stored.status !== 'active') {
      throw new GatewayError('config_not_found', `No config "${parsed.storedConfigId}" in this workspace`, {
        param: HEADERS.config,
      });
    }
    let config = storedConfigs.get(stored);
    if (!config) {
      config = parseConfig(stored.config, { authorizationPresent: true, asStored: true });
      storedConfigs.set(stored, config);
    }
    return withProviderHeaders(config, { id: stored.id, slug: stored.slug }, fromHeaders);
  });
}

/** A config that names no provider takes the one of the request's provider headers. */
function withProviderHeaders(
  config: GatewayConfig,
  storedRef: StoredConfigRef | undefined,
  fromHeaders: Record<string, unknown>,
): RequestConfig {
  if (NAMES_A_PROVIDER.some((key) => (config as Record<string, unknown>)[key] !== undefined)) {
    return { config, stored: storedRef };
  }
  if (!fromHeaders.provider && !fromHeaders.virtual_key) {
    throw new GatewayError(
      'missing_provider',
      `The config names no provider: add provider or virtual_key to it, or send ${HEADERS.provider}`,
      { param: HEADERS.config },
    );
  }
  return { config: { ...fromHeaders, ...config } as GatewayConfig, stored: storedRef };
}
