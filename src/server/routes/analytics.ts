/**
 * `GET /v1/analytics/timeseries` and `GET /v1/analytics/summary`: requests, errors, tokens, cost and latency
 * percentiles, per time bucket (timeseries) or over the whole range (summary), grouped by one dimension,
 * with filters. Answered from the log's rollups (store/rollups.ts), so a month of millions of records reads
 * a few thousand rows. docs/observability.md, "Analytics".
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../../core/errors.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import { LATENCY_BOUNDS_MS, PERIOD_MS, rollupModel } from '../../store/rollups.js';
import type { AnalyticsDimension, AnalyticsQuery, AnalyticsRow } from '../../store/types.js';
import { isOrganisationAdmin, tenantOf } from './management/tenant.js';

const DAY_MS = 86_400_000;
// Maps, not object literals: a lookup of a client's word must not find Object.prototype's members
// (`constructor`, `__proto__`, `valueOf`).
const INTERVALS: ReadonlyMap<string, number> = new Map([
  ['minute', 60_000],
  ['hour', 3_600_000],
  ['day', DAY_MS],
]);
/** At most this many time buckets in one answer. */
const MAX_BUCKETS = 1_500;
/** The groups kept when `limit` is not given, and the most it may ask for. */
const DEFAULT_GROUP_LIMIT = 100;
const MAX_GROUP_LIMIT = 1_000;
/** At most this many rows (buckets × groups, the folded one included) in one timeseries. */
const MAX_ROWS = 50_000;
/** What the row of the groups past the limit is called. */
const OTHER_GROUP = '(other)';
const GROUPS: ReadonlyMap<string, AnalyticsDimension> = new Map([
  ['provider', 'provider'],
  ['model', 'model'],
  ['api_key', 'api_key_id'],
  ['workspace', 'workspace_id'],
  ['prompt', 'prompt_id'],
  ['status_class', 'status_class'],
]);
const FILTERS = ['provider', 'model', 'api_key_id', 'prompt_id'] as const;
const PERCENTILES = [50, 90, 95, 99] as const;

type Query = Record<string, string | undefined>;

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_query', message, { param });
}

/** The query with every parameter given once: a repeated one (an array) names a single value nowhere. */
function singleValued(query: Record<string, unknown>): Query {
  for (const [name, value] of Object.entries(query)) {
    if (typeof value !== 'string') throw invalid(name, `${name} must be given once`);
  }
  return query as Query;
}

/**
 * ISO 8601 as `Date.parse` reads it exactly: a date, optionally a time (minutes, seconds, fractions) and a
 * zone. Anything else is refused before it reaches `Date.parse`, whose fallback reads free text
 * ("June 1", "hello 2020") as some date.
 */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** The last time a JavaScript date holds (±10^8 days from the epoch): later ones have no ISO text. */
const MAX_TIME_MS = 8.64e15;

/** Milliseconds of an ISO 8601 time, UTC unless it names its zone; NaN when it is not one. */
function isoTime(raw: string): number {
  const match = ISO_8601.exec(raw);
  if (!match) return NaN;
  // Date.parse rolls a day the month does not have into the next month (2026-02-30 is read as March 2).
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  if (day < 1 || day > days) return NaN;
  // Date.parse reads a time without a zone in the server's own zone; every time here is UTC, as a date
  // alone already is.
  return Date.parse(match[4] !== undefined && match[7] === undefined ? `${raw}Z` : raw);
}

/** An ISO 8601 time or milliseconds since the epoch. */
function timeParam(query: Query, name: string): number | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  const value = /^\d+$/.test(raw) ? Number(raw) : isoTime(raw);
  // Past MAX_TIME_MS the answer's `from` and `to` cannot be written, and PostgreSQL's bigint ends too.
  if (!Number.isFinite(value) || value < 0 || value > MAX_TIME_MS) {
    throw invalid(
      name,
      `${name} must be an ISO 8601 time or milliseconds since the epoch, up to ${MAX_TIME_MS}`,
    );
  }
  return value;
}

function limitParam(query: Query): number {
  const raw = query.limit;
  if (raw === undefined || raw === '') return DEFAULT_GROUP_LIMIT;
  const value = /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 1 && value <= MAX_GROUP_LIMIT)) {
    throw invalid('limit', `limit must be a whole number from 1 to ${MAX_GROUP_LIMIT}`);
  }
  return value;
}

function groupParam(query: Query, metadataKeys: readonly string[]): AnalyticsDimension | undefined {
  const raw = query.group_by;
  if (raw === undefined || raw === '') return undefined;
  if (raw.startsWith('metadata.'))
    return { metadata: metadataKey(raw.slice('metadata.'.length), metadataKeys, 'group_by') };
  const group = GROUPS.get(raw);
  if (!group) {
    throw invalid('group_by', `group_by must be one of ${[...GROUPS.keys()].join(', ')} or metadata.<key>`);
  }
  return group;
}

function metadataKey(key: string, metadataKeys: readonly string[], param: string): string {
  if (!metadataKeys.includes(key)) {
    throw invalid(
      param,
      `metadata key "${key}" is not rolled up for analytics` +
        (metadataKeys.length > 0 ? ` (rolled up: ${metadataKeys.join(', ')})` : '') +
        '; see GATEWAY_ANALYTICS_METADATA_KEYS',
    );
  }
  return key;
}

/** The workspaces read: the caller's, or another of its organisation; all of them (`*`, or grouped by
 * workspace with none named) for an organisation-level admin key only, who alone may group by workspace. */
async function workspacesOf(
  deps: GatewayDeps,
  request: FastifyRequest,
  query: Query,
  byWorkspace: boolean,
): Promise<string[]> {
  const caller = request.gw.apiKey;
  const named = query.workspace_id || undefined;
  if (named === '*' || byWorkspace) {
    const workspaces = await deps.store.listWorkspaces(caller.organisation_id);
    if (!isOrganisationAdmin(caller, workspaces)) {
      throw new GatewayError(
        'forbidden',
        "Only an organisation-level admin key (an admin key of the organisation's home workspace) may read every workspace",
        { param: named === '*' ? 'workspace_id' : 'group_by' },
      );
    }
    if (named === undefined || named === '*') return workspaces.map((workspace) => workspace.id);
  }
  const tenant = await tenantOf(deps.store, caller, { workspace_id: named });
  return [tenant.workspace_id];
}

async function buildQuery(
  deps: GatewayDeps,
  request: FastifyRequest,
  timeseries: boolean,
): Promise<AnalyticsQuery> {
  const query = singleValued(request.query as Record<string, unknown>);
  const metadataKeys = deps.settings.analyticsMetadataKeys;
  const now = Date.now();
  const to = timeParam(query, 'to') ?? now;
  const from = timeParam(query, 'from') ?? to - DAY_MS;
  if (from >= to) throw invalid('from', 'from must be before to');

  let interval: number | undefined;
  if (timeseries) {
    const named = query.interval;
    if (named !== undefined && named !== '' && !INTERVALS.has(named)) {
      throw invalid('interval', 'interval must be minute, hour or day');
    }
    interval = named
      ? (INTERVALS.get(named) as number)
      : to - from <= 2 * 3_600_000
        ? 60_000
        : to - from <= 7 * DAY_MS
          ? 3_600_000
          : DAY_MS;
    if ((to - from) / interval > MAX_BUCKETS) {
      throw invalid(
        'interval',
        `the range holds more than ${MAX_BUCKETS} buckets of this interval; take a longer one`,
      );
    }
  }
  const period = periodOf(from, to, interval);
  const step = PERIOD_MS[period];
  const group_by = groupParam(query, metadataKeys);
  let group_limit = limitParam(query);
  // Whole periods: the range is widened to the rollups' buckets it touches.
  const from_ms = from - (from % step);
  const to_ms = Math.ceil(to / step) * step;
  if (interval !== undefined) {
    // Each bucket holds a row per group kept and one of the rest: fewer groups for a longer series.
    const buckets = Math.ceil(to_ms / interval) - Math.floor(from_ms / interval);
    group_limit = Math.max(1, Math.min(group_limit, Math.floor(MAX_ROWS / buckets) - 1));
  }

  const filters: AnalyticsQuery['filters'] = {};
  for (const name of FILTERS) {
    const value = query[name];
    if (value !== undefined && value !== '') filters[name] = name === 'model' ? rollupModel(value) : value;
  }
  if (query.status_class !== undefined && query.status_class !== '') {
    if (!/^[245]xx$/.test(query.status_class))
      throw invalid('status_class', 'status_class must be 2xx, 4xx or 5xx');
    filters.status_class = Number(query.status_class[0]);
  }
  const metadataFilters = Object.entries(query).filter(([name]) => name.startsWith('metadata.'));
  if (metadataFilters.length > 1) {
    throw invalid(metadataFilters[1][0], 'analytics filter on one metadata key at a time');
  }
  if (metadataFilters.length === 1) {
    const [name, value] = metadataFilters[0];
    const key = metadataKey(name.slice('metadata.'.length), metadataKeys, name);
    if (typeof group_by === 'object' && group_by.metadata !== key) {
      throw invalid(name, 'a metadata filter must name the metadata key grouped by');
    }
    filters.metadata = { key, value: value ?? '' };
  }

  return {
    workspace_ids: await workspacesOf(deps, request, query, group_by === 'workspace_id'),
    period,
    from_ms,
    to_ms,
    whole_days: interval === undefined ? wholeDays(from_ms, to_ms) : undefined,
    interval_ms: interval,
    group_by,
    filters,
    group_limit: group_by === undefined ? undefined : group_limit,
  };
}

/** The whole UTC days of a summary's range, read from the daily rows; its partial first and last days are
 * read from the period's rows. */
function wholeDays(from: number, to: number): AnalyticsQuery['whole_days'] {
  const first = Math.ceil(from / DAY_MS) * DAY_MS;
  const last = Math.floor(to / DAY_MS) * DAY_MS;
  return first < last ? { from_ms: first, to_ms: last } : undefined;
}

/**
 * The rollups that answer a query: a timeseries reads those of its interval; a summary reads hourly rows
 * for a range of 6 hours or more (but daily rows for the whole days within it: wholeDays), minute rows
 * otherwise. The range is widened to the rows' whole periods.
 */
function periodOf(from: number, to: number, interval: number | undefined): 'minute' | 'hour' | 'day' {
  if (interval !== undefined)
    return interval >= PERIOD_MS.day ? 'day' : interval >= PERIOD_MS.hour ? 'hour' : 'minute';
  return to - from >= 6 * PERIOD_MS.hour ? 'hour' : 'minute';
}

/** The latency at percentile `p` of a histogram, interpolated inside the bucket the rank falls in. */
export function percentile(histogram: readonly number[], p: number): number | null {
  const total = histogram.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = (p / 100) * total;
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    const count = histogram[i];
    if (count > 0 && seen + count >= rank) {
      const low = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1];
      // The last bucket has no upper bound: its lower bound is all that is known.
      if (i >= LATENCY_BOUNDS_MS.length) return low;
      const high = LATENCY_BOUNDS_MS[i];
      return Math.round((low + ((rank - seen) / count) * (high - low)) * 100) / 100;
    }
    seen += count;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1];
}

function present(row: AnalyticsRow, group: AnalyticsDimension | undefined): Record<string, unknown> {
  return {
    ...(row.bucket_ms === null
      ? {}
      : { bucket: new Date(row.bucket_ms).toISOString(), bucket_ms: row.bucket_ms }),
    group: row.other
      ? OTHER_GROUP
      : row.group !== null && group === 'status_class'
        ? `${row.group}xx`
        : row.group,
    ...(row.other ? { other: true } : {}),
    requests: row.requests,
    errors: row.errors,
    error_rate: row.requests === 0 ? 0 : row.errors / row.requests,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    total_tokens: row.prompt_tokens + row.completion_tokens,
    cost: row.cost,
    priced_requests: row.priced,
    latency_ms: {
      avg: row.requests === 0 ? null : Math.round((row.latency_ms_sum / row.requests) * 100) / 100,
      ...Object.fromEntries(PERCENTILES.map((p) => [`p${p}`, percentile(row.histogram, p)])),
    },
  };
}

function groupName(group: AnalyticsDimension | undefined): string | null {
  if (group === undefined) return null;
  if (typeof group === 'object') return `metadata.${group.metadata}`;
  for (const [name, value] of GROUPS) if (value === group) return name;
  return null;
}

export async function registerAnalyticsRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  for (const kind of ['timeseries', 'summary'] as const) {
    app.get(`/analytics/${kind}`, async (request) => {
      const query = await buildQuery(deps, request, kind === 'timeseries');
      const rows = await deps.store.analytics(query, { signal: request.gw.signal });
      return {
        object: `analytics.${kind}`,
        from: new Date(query.from_ms).toISOString(),
        to: new Date(query.to_ms).toISOString(),
        ...(query.interval_ms === undefined ? {} : { interval_ms: query.interval_ms }),
        group_by: groupName(query.group_by),
        ...(query.group_limit === undefined ? {} : { limit: query.group_limit }),
        data: rows.map((row) => present(row, query.group_by)),
      };
    });
  }
}
