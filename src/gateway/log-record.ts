/** Builds the log record of a model call or of one of its attempts. */
import { performance } from 'node:perf_hooks';
import { mayNameSecret, redact } from '../observability/redact.js';
import { SerializedJson } from '../store/serialized-json.js';
import type { Usage } from '../core/openai-types.js';
import type { LogRecord } from '../store/types.js';
import type { CallContext, PromptRef } from './call-context.js';
import { sequentialId } from './ids.js';

export interface LogBodies {
  enabled: boolean;
  maxBytes: number;
}

// The last body logged and what it became. A request's own record and its attempt's record usually carry
// the same body object; bodies are never changed once a request holds them, so identity is enough.
let lastSource: unknown;
let lastBodies: LogBodies | undefined;
let lastLogged: unknown;

/**
 * A body as stored in a record: redacted, and cut to a summary when it is too large. `text`, when given, is
 * the JSON text `body` was parsed from: stored as it is when redaction finds nothing to change, and
 * without walking the body at all when the text names nothing redaction would replace.
 */
export function bodyForLog(body: unknown, bodies: LogBodies, text?: string): unknown {
  if (!bodies.enabled || body === undefined) return null;
  if (typeof body === 'object' && body === lastSource && bodies.maxBytes === lastBodies?.maxBytes) {
    return lastLogged;
  }
  const storable = text !== undefined && fitsIn(text, bodies.maxBytes) ? text : undefined;
  let logged: unknown;
  if (storable !== undefined && !mayNameSecret(storable)) {
    logged = new SerializedJson(storable);
  } else {
    const redacted = redact(body);
    logged =
      storable !== undefined && redacted === body
        ? new SerializedJson(storable)
        : serialiseForLog(redacted, bodies);
  }
  lastSource = body;
  lastBodies = bodies;
  lastLogged = logged;
  return logged;
}

/** The stored form of an already redacted body. */
function serialiseForLog(redacted: unknown, bodies: LogBodies): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(redacted);
  } catch {
    // Redaction already cut anything deeper than it walks; this guards what remains (e.g. BigInt).
    return { unserialisable: true };
  }
  if (text === undefined) return null;
  // The text is kept: the store writes it as it is rather than serialising the body again.
  if (fitsIn(text, bodies.maxBytes)) return new SerializedJson(text);
  return { truncated: true, bytes: Buffer.byteLength(text), head: headOf(text, bodies.maxBytes) };
}

/** Whether `text` takes at most `maxBytes` in UTF-8; counted only when its length leaves any doubt. */
function fitsIn(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return false;
  return text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes;
}

/** The longest start of `text` that takes at most `maxBytes` in UTF-8, no character cut in two. */
function headOf(text: string, maxBytes: number): string {
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}

/** The error columns of an answer that came through although malformed stream chunks were skipped. */
export function skippedChunksError(count: number): { errorCode: string; errorMessage: string } {
  return {
    errorCode: 'malformed_chunks_skipped',
    errorMessage: `${count} malformed stream chunk(s) skipped`,
  };
}

export interface RecordFields {
  endpoint: string;
  method: string;
  path: string;
  status: number;
  provider: string | null;
  model: string | null;
  target: string | null;
  stream: boolean;
  /** An attempt's record (with `spanId`: under the call's span), or the record of a call that was one
   * attempt of a job (without: at the call's own place, its attempts under it). Neither is counted as a
   * request. */
  isAttempt: boolean;
  ttfbMs: number | null;
  usage: Usage | undefined;
  /** Dollars; null when unknown. */
  cost: number | null;
  cacheStatus: string | null;
  /** The semantic cache's similarity, when it answered or was asked. */
  cacheSimilarity?: number | null;
  retryCount: number;
  errorCode: string | null;
  errorMessage: string | null;
  requestBody: unknown;
  responseBody: unknown;
  /** The call's hook results and feedback; absent on attempts and calls without hooks. */
  hookResults?: unknown;
  /** The stored prompt an attempt sent, when not the call's (a `prompt_id` target's). */
  prompt?: PromptRef;
  /** An attempt's own span, under the request's. */
  spanId?: string;
  startedAt?: number;
  /** performance.now() when the call ended; the record's build time when absent. */
  endedAt?: number;
}

/** What a record takes from the call's context. */
export type RecordContext = Pick<
  CallContext,
  | 'apiKey'
  | 'traceId'
  | 'spanId'
  | 'parentSpanId'
  | 'spanName'
  | 'startedAt'
  | 'startedAtMs'
  | 'metadata'
  | 'prompt'
>;

export function buildLogRecord(ctx: RecordContext, fields: RecordFields): LogRecord {
  const usage = fields.usage;
  const startedAt = fields.startedAt ?? ctx.startedAt;
  const prompt = fields.prompt ?? ctx.prompt;
  return {
    id: `log_${sequentialId()}`,
    created_at_ms: fields.isAttempt
      ? ctx.startedAtMs + Math.round(startedAt - ctx.startedAt)
      : ctx.startedAtMs,
    organisation_id: ctx.apiKey.organisation_id,
    workspace_id: ctx.apiKey.workspace_id,
    api_key_id: ctx.apiKey.id,
    trace_id: ctx.traceId,
    span_id: fields.spanId ?? ctx.spanId,
    parent_span_id: fields.spanId !== undefined ? ctx.spanId : ctx.parentSpanId,
    span_name: fields.spanId !== undefined ? `attempt ${fields.target ?? ''}`.trim() : ctx.spanName,
    method: fields.method,
    path: fields.path,
    endpoint: fields.endpoint,
    provider: fields.provider,
    model: fields.model,
    target: fields.target,
    status: fields.status,
    is_attempt: fields.isAttempt,
    stream: fields.stream,
    latency_ms: Math.round(((fields.endedAt ?? performance.now()) - startedAt) * 100) / 100,
    ttfb_ms: fields.ttfbMs === null ? null : Math.round(fields.ttfbMs * 100) / 100,
    prompt_tokens: usage?.prompt_tokens ?? null,
    completion_tokens: usage?.completion_tokens ?? null,
    total_tokens: usage?.total_tokens ?? null,
    cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
    reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? null,
    cost: fields.cost,
    cache_status: fields.cacheStatus,
    cache_similarity: fields.cacheSimilarity ?? null,
    retry_count: fields.retryCount,
    error_code: fields.errorCode,
    error_message: fields.errorMessage,
    metadata: ctx.metadata,
    request_body: fields.requestBody,
    response_body: fields.responseBody,
    hook_results: fields.hookResults ?? null,
    prompt_id: prompt?.id ?? null,
    prompt_version: prompt?.version ?? null,
  };
}
