/** The gateway's answers the console reads (docs/api.md, docs/management-api.md). */
export interface LogRecord {
  id: string;
  created_at_ms: number;
  api_key_id: string | null;
  trace_id: string;
  span_id: string;
  /** An attempt's request's span_id; null for a request. */
  parent_span_id: string | null;
  span_name: string | null;
  method: string;
  path: string;
  endpoint: string;
  provider: string | null;
  model: string | null;
  target: string | null;
  status: number;
  is_attempt: boolean;
  stream: boolean;
  latency_ms: number;
  ttfb_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  cost: number | null;
  cache_status: string | null;
  retry_count: number;
  error_code: string | null;
  error_message: string | null;
  metadata: Record<string, string>;
  request_body: unknown;
  response_body: unknown;
  hook_results: unknown;
  prompt_id: string | null;
  prompt_version: number | null;
}

export interface ApiKey {
  id: string;
  name: string;
  role: 'admin' | 'member';
  key_prefix: string;
  status: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  metadata: Record<string, string>;
}

export interface AnalyticsRow {
  bucket?: string;
  bucket_ms?: number;
  group: string | null;
  /** The sums of the groups past the answer's limit; its group is "(other)". */
  other?: boolean;
  requests: number;
  errors: number;
  error_rate: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
  latency_ms: {
    avg: number | null;
    p50: number | null;
    p90: number | null;
    p95: number | null;
    p99: number | null;
  };
}

/** `GET /v1/api-keys/self`: the signed-in key, its workspace and its scope. */
export interface KeySelf extends ApiKey {
  workspace: { id: string; slug: string; name: string };
  scope: 'organisation' | 'workspace';
}
