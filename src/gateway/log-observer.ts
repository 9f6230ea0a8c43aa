/**
 * The log: every call becomes a record, queued to the batched writer. A call answered (or failed) by its
 * only attempt writes just its own record; a call that took several (retries, fallbacks, breaker skips,
 * cache answers, continuations) also writes one record per attempt, each a span under the call's. So does a
 * call whose only attempt sent another stored prompt than the one called (a `prompt_id` target): the call's
 * record names the prompt called, the attempt's the prompt it sent. A job's call cut by its node's stop, the
 * job given back to be run again (a batch line), writes its own record marked as an attempt (of the job),
 * its attempts' under it: the job's request record is the call that answers it, and the log's request
 * records (and the rollups that count them) hold it once, while every attempt record's parent span has
 * a record.
 */
import type { LogWriter } from '../observability/log-writer.js';
import type { PriceTable } from '../observability/pricing/price-table.js';
import { redact } from '../observability/redact.js';
import { SerializedJson } from '../store/serialized-json.js';
import type { LogRecord } from '../store/types.js';
import { attemptCost } from './call-cost.js';
import { requestPath } from './call-context.js';
import { bodyForLog, buildLogRecord, skippedChunksError, type LogBodies } from './log-record.js';
import type { CallObserver, CallSummary } from './observer.js';
import type { AttemptRecord } from './routing/route-types.js';

export function createLogObserver(writer: LogWriter, bodies: LogBodies, prices: PriceTable): CallObserver {
  return {
    callEnded(summary) {
      const { attempts } = summary;
      if (cutToRunAgain(summary)) {
        writer.enqueue(callLogRecord(summary, bodies, true));
        for (const attempt of attempts) writer.enqueue(attemptLogRecord(summary, attempt, bodies, prices));
        return;
      }
      if (attempts.length >= 2 || (attempts.length === 1 && sentAnotherPrompt(attempts[0], summary))) {
        for (const attempt of attempts) writer.enqueue(attemptLogRecord(summary, attempt, bodies, prices));
      }
      writer.enqueue(callLogRecord(summary, bodies));
    },
  };
}

/** A job's call failed by its node's stop (recorded 499: its signal aborted), the job to be run again. */
function cutToRunAgain(summary: CallSummary): boolean {
  return summary.ctx.runAgainIfCut === true && summary.error !== undefined && summary.status === 499;
}

function sentAnotherPrompt(attempt: AttemptRecord, summary: CallSummary): boolean {
  const called = summary.ctx.prompt;
  const sent = attempt.prompt;
  return sent !== undefined && (sent.id !== called?.id || sent.version !== called.version);
}

function callLogRecord(summary: CallSummary, bodies: LogBodies, isAttempt = false): LogRecord {
  const { ctx, error } = summary;
  // In two values, not an object spread into the fields: the fields are then one literal of one shape.
  let errorCode: string | null = null;
  let errorMessage: string | null = null;
  if (error) {
    errorCode = String(error.code ?? error.type);
    errorMessage = error.message;
  } else if (summary.malformedChunks > 0) {
    ({ errorCode, errorMessage } = skippedChunksError(summary.malformedChunks));
  }
  return buildLogRecord(ctx, {
    endpoint: summary.endpoint,
    method: ctx.method,
    path: requestPath(ctx.url),
    status: summary.status,
    provider: summary.state.provider,
    model: summary.model,
    target: summary.state.targetPath,
    stream: summary.stream,
    isAttempt,
    ttfbMs: summary.ttfbMs,
    usage: summary.usage,
    cost: summary.state.cost,
    cacheStatus: summary.state.cacheStatus,
    cacheSimilarity: summary.state.cacheSimilarity,
    retryCount: summary.state.retryCount,
    errorCode,
    errorMessage,
    requestBody: bodyForLog(summary.requestBody, bodies, summary.requestText),
    responseBody: bodyForLog(summary.responseBody, bodies, summary.responseText),
    hookResults: summary.hooks === undefined ? undefined : hooksForLog(summary.hooks, summary.hooksText),
    endedAt: summary.endedAt,
  });
}

function attemptLogRecord(
  summary: CallSummary,
  record: AttemptRecord,
  bodies: LogBodies,
  prices: PriceTable,
): LogRecord {
  const { outcome } = record;
  let errorCode: string | null = null;
  let errorMessage: string | null = null;
  let status: number;
  if (outcome.ok) {
    status = outcome.status;
    if (outcome.malformedChunks > 0)
      ({ errorCode, errorMessage } = skippedChunksError(outcome.malformedChunks));
  } else {
    status = outcome.reason === 'client_gone' ? 499 : outcome.status;
    errorCode = String(outcome.error.code ?? outcome.error.type);
    errorMessage = `${outcome.reason}: ${outcome.error.message}`;
    if (outcome.malformedChunks > 0)
      errorMessage += ` (${outcome.malformedChunks} malformed chunk(s) skipped)`;
  }
  return buildLogRecord(summary.ctx, {
    endpoint: summary.endpoint,
    method: summary.ctx.method,
    path: requestPath(summary.ctx.url),
    status,
    provider: record.provider,
    model: (outcome.ok ? outcome.model : undefined) ?? record.model ?? null,
    target: record.path,
    stream: summary.stream,
    isAttempt: true,
    ttfbMs: outcome.ttfbMs,
    // A failed call has usage only when the provider counted tokens before it broke, which it bills.
    usage: outcome.usage,
    cost: attemptCost(prices, record),
    cacheStatus: record.cacheStatus,
    retryCount: record.retry,
    errorCode,
    errorMessage,
    requestBody: bodyForLog(record.body, bodies),
    responseBody: outcome.ok ? null : bodyForLog(outcome.error.toBody(), bodies),
    prompt: record.prompt,
    spanId: record.spanId,
    startedAt: record.started,
    endedAt: record.ended,
  });
}

/** The hook results, secrets redacted; their text as the answer carried it when nothing was redacted. */
function hooksForLog(results: NonNullable<CallSummary['hooks']>, text: string | undefined): unknown {
  const redacted = redact(results);
  return redacted === results && text !== undefined ? new SerializedJson(text) : redacted;
}
