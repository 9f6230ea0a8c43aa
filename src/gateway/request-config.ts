/**
 * Which config governs a request: the `x-gateway-config` header (inline JSON or a stored config's id),
 * or else one built from the provider-selection headers (`x-gateway-virtual-key`, `x-gateway-provider`
 * with `Authorization: Bearer`, `x-gateway-custom-host`). Header-derived provider settings also fill in a
 * config that names no provider of its own (e.g. one that only sets `cache` or `retry`).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { LRUCache } from 'lru-cache';
import { parseConfig, parseConfigHeader, keyAsWritten, type GatewayConfig } from './config/index.js';
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
/** Configs built from provider-selection headers, by the header values they were built from. */
const headerConfigs = new LRUCache<string, GatewayConfig>({ max: 1000 });

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const value = headerValue(headers, 'authorization');
  if (!value) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(value.trim());
  return match ? match[1].trim() : undefined;
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

/** Configs built from the provider-selection headers, so errors can name the header, not a config key. */
const headerDerived = new WeakSet<object>();

const HEADER_FOR_KEY: Record<string, string> = {
  provider: HEADERS.provider,
  virtual_key: HEADERS.virtualKey,
  custom_host: HEADERS.customHost,
  api_key: 'authorization',
};

/** The name to report for a key of `node`: the header it came from, or its path in the config. */
export function paramFor(node: object, path: string, key: string): string {
  if (headerDerived.has(node) && HEADER_FOR_KEY[key]) return HEADER_FOR_KEY[key];
  return configParam(path, keyAsWritten(node, key));
}

function parseHeaderConfig(fromHeaders: Record<string, unknown>): GatewayConfig {
  let config: GatewayConfig;
  try {
    config = parseConfig(fromHeaders, { authorizationPresent: fromHeaders.api_key !== undefined });
  } catch (err) {
    const key = err instanceof GatewayError ? err.param?.replace(/^config\./, '') : undefined;
    if (err instanceof GatewayError && key && HEADER_FOR_KEY[key]) {
      throw new GatewayError(err.code, err.message.replaceAll(`config.${key}`, HEADER_FOR_KEY[key]), {
        param: HEADER_FOR_KEY[key],
      });
    }
    throw err;
  }
  headerDerived.add(config);
  return config;
}

// A `prompt_id` target takes the prompt's destination (prompts/prompt-targets.ts).
const NAMES_A_PROVIDER = ['provider', 'virtual_key', 'targets', 'prompt_id'] as const;

/** A stored config a call runs under, as rate-limit policies name it (`config`: its id or slug). */
export type StoredConfigRef = Pick<StoredConfig, 'id' | 'slug'>;

export interface RequestConfig {
  config: GatewayConfig;
  /** Set when `x-gateway-config` named a stored config. */
  stored: StoredConfigRef | undefined;
}

/**
 * The config a request's headers name: from its provider headers, an inline `x-gateway-config` or a stored
 * config. Header and inline configs are parsed once and kept, so they come back at once, with no promise
 * (this runs for every request); a stored config, which must be looked up, comes as a promise.
 */
export function resolveRequestConfig(
  headers: IncomingHttpHeaders,
  workspaceId: string,
  lookups: Lookups,
): RequestConfig | Promise<RequestConfig> {
  const fromHeaders = headerProvider(headers);
  const raw = headerValue(headers, HEADERS.config);
  if (raw === undefined) {
    if (Object.keys(fromHeaders).length === 0 || (!fromHeaders.provider && !fromHeaders.virtual_key)) {
      throw new GatewayError(
        'missing_provider',
        `Say which provider to call: send ${HEADERS.provider} (with Authorization: Bearer <provider key>), ` +
          `${HEADERS.virtualKey}, or ${HEADERS.config}`,
        { param: HEADERS.provider },
      );
    }
    const key = `${fromHeaders.provider}\n${fromHeaders.virtual_key}\n${fromHeaders.custom_host}\n${fromHeaders.api_key}`;
    let config = headerConfigs.get(key);
    if (!config) {
      config = parseHeaderConfig(fromHeaders);
      headerConfigs.set(key, config);
    }
    return { config, stored: undefined };
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
      config = parseConfig(stored.config, { authorizationPresent: true });
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
