/**
 * A batch line's result in OpenAI's output-file shape:
 * `{id, custom_id, response: {status_code, request_id, body}, error}`. An answer goes to the output file;
 * a failure to the error file, with the status and the error body a client would have had, and `error`
 * (`code`, `message`) set when the gateway itself failed the request (no provider answer behind it).
 */
import { GatewayError, ProviderError } from '../../core/errors.js';
import { isTransientStoreError } from '../../store/db-errors.js';
import type { SettledLine } from '../../store/file-batch-types.js';
import type { RouteState } from '../routing/route-types.js';
import { BufferSink, type BufferedResult } from '../sink.js';
import { refusalWaitMs } from '../rate-limits/refusal-wait.js';

export function requestIdOf(batchId: string, line: number): string {
  return `batch_req_${batchId.replace(/^batch_/, '')}_${line}`;
}

interface UsageFields {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function usageOf(
  body: unknown,
): Pick<SettledLine, 'input_tokens' | 'output_tokens' | 'cached_tokens' | 'reasoning_tokens'> {
  const usage = (body as { usage?: UsageFields } | null)?.usage;
  return {
    input_tokens: count(usage?.prompt_tokens),
    output_tokens: count(usage?.completion_tokens),
    cached_tokens: count(usage?.prompt_tokens_details?.cached_tokens),
    reasoning_tokens: count(usage?.completion_tokens_details?.reasoning_tokens),
  };
}

const NO_USAGE = { input_tokens: null, output_tokens: null, cached_tokens: null, reasoning_tokens: null };

export interface LineRef {
  batchId: string;
  line: number;
  customId: string;
  /** The gateway's id of the call (its log record's). */
  callId: string;
  /** What the call cost (docs/cost.md): null when a model it used has no price. */
  cost: number | null;
}

function failedLine(ref: LineRef, error: GatewayError | ProviderError, status: number): SettledLine {
  const fromGateway = error instanceof GatewayError;
  return {
    state: 'failed',
    result: JSON.stringify({
      id: requestIdOf(ref.batchId, ref.line),
      custom_id: ref.customId,
      response: { status_code: status, request_id: ref.callId, body: error.toBody() },
      error: fromGateway ? { code: error.code, message: error.message } : null,
    }),
    ...NO_USAGE,
    cost: ref.cost,
  };
}

export function settledLineOf(ref: LineRef, result: BufferedResult): SettledLine {
  if (result.kind === 'error') return failedLine(ref, result.error, result.status);
  if (result.kind === 'stream') {
    // Lines are checked not to stream; should one, it is not half-answered.
    return failedLine(ref, new GatewayError('unsupported_parameter', 'A batch line cannot stream'), 400);
  }
  const { answer } = result;
  const requestId = answer.headers['x-request-id'] ?? ref.callId;
  return {
    state: answer.status >= 400 ? 'failed' : 'succeeded',
    result: JSON.stringify({
      id: requestIdOf(ref.batchId, ref.line),
      custom_id: ref.customId,
      response: { status_code: answer.status, request_id: requestId, body: answer.body },
      error: null,
    }),
    ...usageOf(answer.body),
    cost: ref.cost,
  };
}

const UNFINISHED = {
  expired: {
    code: 'batch_expired',
    message: 'This request could not be executed before the completion window expired.',
  },
  cancelled: { code: 'batch_cancelled', message: 'The batch was cancelled before this request executed.' },
} as const;

/**
 * The error-file line of a request an expired or cancelled batch never ran, as OpenAI writes it:
 * `response: null` and `error.code` `batch_expired` or `batch_cancelled`, so a client finds by `custom_id`
 * exactly the requests to send again.
 */
export function unfinishedLineOf(
  batchId: string,
  line: number,
  customId: string,
  outcome: keyof typeof UNFINISHED,
): string {
  return JSON.stringify({
    id: requestIdOf(batchId, line),
    custom_id: customId,
    response: null,
    error: UNFINISHED[outcome],
  });
}

/** When the result is a rate-limit refusal: how long to wait before the line runs again, ms. */
export function rateLimitWaitMs(result: BufferedResult): number | undefined {
  return result.kind === 'error' ? refusalWaitMs(result.error) : undefined;
}

/**
 * Whether the gateway failed the call itself, for no answer of a provider's nor a refusal of its own: a
 * read or write of the store's failed (a connection dropped, as its virtual key was read), or a fault of
 * the gateway's (execute.ts asCallError).
 */
export function gatewayFailed(error: GatewayError | ProviderError): boolean {
  if (!(error instanceof GatewayError) || error.code !== 'internal_error') return false;
  const { cause } = error;
  return cause !== undefined && !(cause instanceof GatewayError) && !(cause instanceof ProviderError);
}

/**
 * Whether a call that failed for `cause`, not of the line's making (gatewayFailed, or thrown by the call),
 * may run again: when no provider was called in it (`providerCalls`: the store failed as it was routed,
 * which says nothing of the line), or when the cause is the store's failing for the moment
 * (isTransientStoreError). A fault of the gateway's once a provider was called (its answer translated
 * wrong) is the line's answer: run again, it would pay for the provider's answer again, and fail again.
 */
export function runsAgainFor(cause: unknown, state: Pick<RouteState, 'providerCalls'>): boolean {
  return state.providerCalls === 0 || isTransientStoreError(cause);
}

/**
 * Where a line's call answers: the whole answer kept (BufferSink). A rate-limit refusal, which the line
 * waits out and runs again after (rateLimitWaitMs), is held back from the log: the line leaves the record
 * of the run that answers it, not one for each refusal it waited out. So is a failure of the gateway's
 * own (gatewayFailed) that `runsAgain` says the line runs again for.
 */
export class LineSink extends BufferSink {
  heldBack = false;

  constructor(private readonly runsAgain: (cause: unknown) => boolean = () => false) {
    super();
  }

  override fail(error: GatewayError | ProviderError, status: number): void {
    this.heldBack =
      refusalWaitMs(error) !== undefined || (gatewayFailed(error) && this.runsAgain(error.cause));
    super.fail(error, status);
  }
}
