/**
 * What work on a provider's API keeps of the request that created it (a fine-tuning job, a provider
 * batch): its caller and the headers that chose the provider, so later calls (another node, a restart)
 * reach the same provider account. The store encrypts it at rest; a virtual key or a stored config is kept
 * by reference and read again when used.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { BatchCall } from '../../store/file-batch-types.js';
import { HEADERS, headerValue } from '../context.js';
import type { CallerKey } from '../call-context.js';

/** The headers kept: what selects and configures the provider, and the cache partition a managed batch's
 * lines read and fill (`x-gateway-cache-namespace`, `x-gateway-cache-force-refresh`). */
export const CAPTURED_HEADERS = [
  HEADERS.config,
  HEADERS.provider,
  HEADERS.virtualKey,
  HEADERS.customHost,
  HEADERS.strictCompat,
  HEADERS.cacheNamespace,
  HEADERS.cacheForceRefresh,
  'authorization',
] as const;

export function capturedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of CAPTURED_HEADERS) {
    const value = headerValue(headers, name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

export interface CallOrigin {
  apiKey: CallerKey;
  headers: IncomingHttpHeaders;
  metadata: Record<string, string>;
  traceId: string;
}

export function storedCallOf(origin: CallOrigin): BatchCall {
  return {
    caller: {
      id: origin.apiKey.id,
      organisation_id: origin.apiKey.organisation_id,
      workspace_id: origin.apiKey.workspace_id,
    },
    headers: capturedHeaders(origin.headers),
    metadata: origin.metadata,
    trace_id: origin.traceId,
  };
}
