/** `GET /v1/logs` (filters, paging) and `GET /v1/logs/{id}`, always within the caller's workspace. */
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../../gateway/deps.js';
import { GatewayError } from '../../core/errors.js';
import { checkMetadataLimits } from '../../core/metadata-limits.js';
import { HEADER_METADATA_LIMITS } from '../../gateway/context.js';
import type { LogQuery } from '../../store/types.js';
import { integerValue } from './query-params.js';

const MAX_LIMIT = 1000;

function integerParam(query: Record<string, string | undefined>, name: string, min: number, max: number) {
  const raw = query[name];
  return raw === undefined || raw === '' ? undefined : integerValue(raw, name, min, max);
}

function stringParam(query: Record<string, string | undefined>, name: string): string | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > 256) {
    throw new GatewayError('invalid_query', `${name} must be a string of at most 256 characters`, {
      param: name,
    });
  }
  return raw;
}

/**
 * `metadata.<key>=<value>` query parameters filter on metadata. A key given twice is refused: a record's key
 * holds one value, and leaving the filter out would list records the caller asked to leave out. The filters
 * are held to the x-gateway-metadata header's limits (64 pairs, keys of 128 characters, values of 512): a
 * longer one matches no record, and each filter is one more scan of every record's metadata.
 */
function metadataFilters(query: Record<string, unknown>): Record<string, string> | undefined {
  // No prototype: `metadata.__proto__=x` is a filter like any other, not a change of prototype that
  // drops it (and lists every record).
  const out = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(query)) {
    if (!name.startsWith('metadata.')) continue;
    if (typeof value !== 'string') {
      throw new GatewayError('invalid_query', `${name} must be given once`, { param: name });
    }
    out[name.slice('metadata.'.length)] = value;
  }
  checkMetadataLimits(out, 'metadata', 'invalid_query', HEADER_METADATA_LIMITS);
  return Object.keys(out).length > 0 ? out : undefined;
}

export async function registerLogRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  app.get('/logs', async (request) => {
    const query = request.query as Record<string, string | undefined>;
    const logQuery: LogQuery = {
      workspace_id: request.gw.apiKey.workspace_id,
      trace_id: stringParam(query, 'trace_id'),
      provider: stringParam(query, 'provider'),
      model: stringParam(query, 'model'),
      api_key_id: stringParam(query, 'api_key_id'),
      status: integerParam(query, 'status', 100, 599),
      from_ms: integerParam(query, 'from_ms', 0, Number.MAX_SAFE_INTEGER),
      to_ms: integerParam(query, 'to_ms', 0, Number.MAX_SAFE_INTEGER),
      metadata: metadataFilters(query),
      search: stringParam(query, 'search'),
      limit: integerParam(query, 'limit', 1, MAX_LIMIT) ?? 50,
      after: stringParam(query, 'after'),
    };
    if (logQuery.from_ms !== undefined && logQuery.to_ms !== undefined && logQuery.from_ms > logQuery.to_ms) {
      throw new GatewayError('invalid_query', 'from_ms must not be after to_ms', { param: 'from_ms' });
    }
    // A page still waiting for the SQLite reader thread is dropped when the client goes away.
    const page = await deps.store.listLogs(logQuery, { signal: request.gw.signal });
    return {
      object: 'list',
      data: page.data,
      has_more: page.has_more,
      first_id: page.data[0]?.id ?? null,
      last_id: page.data.at(-1)?.id ?? null,
    };
  });

  app.get('/logs/:id', async (request) => {
    const { id } = request.params as { id: string };
    const record = await deps.store.getLog(request.gw.apiKey.workspace_id, id);
    if (!record)
      throw new GatewayError('not_found', `No log record ${id} in this workspace`, { param: 'id' });
    return record;
  });
}
