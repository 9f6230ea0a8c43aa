/**
 * The end of a pass-through call's chain: the provider's own request (its path, its body streamed as it
 * arrives), with the target's credentials added by the adapter. A 2xx answer is handed on to be relayed as
 * it comes; any other is read whole and has the target's credentials cut out, so a caller holding only a
 * gateway key never reads a stored provider key in an error that echoes it; it is relayed when no retry or
 * fallback takes over (a 3xx — a redirect, a `304` — is read and scrubbed so too, but is an answer, never
 * retried or fallen back from). The answer's headers have the credentials cut out either way. A relayed body that
 * goes silent for longer than `request_timeout` (GATEWAY_STREAM_IDLE_TIMEOUT_MS without one) is ended, as a
 * model stream is: a provider that stalls does not hold the client and its connection for ever.
 */
import { performance } from 'node:perf_hooks';
import { CallAbort } from '../../core/abort.js';
import { GatewayError, ProviderError } from '../../core/errors.js';
import { tooLargeFailure, UpstreamTooLarge } from '../../core/upstream-limits.js';
import type { AuthMaterial, PassthroughRequest, StreamFailureReader } from '../../providers/types.js';
import { gatewayFailure, MAX_TIMER_MS, type AttemptOutcome, type UpstreamRelay } from '../attempt.js';
import { refusedByPolicy } from '../custom-host.js';
import { recordAttempt } from '../routing/route-types.js';
import { maskSecrets } from '../../core/mask-secrets.js';
import { scrubHeaders, scrubSecrets, targetSecrets } from '../scrub-secrets.js';
import { retryAfterMs } from '../../providers/shared/retry-after.js';
import type { TargetHandler } from './target-step.js';
import type { UpstreamBody } from '../upstream.js';
import { failedAnswerText } from '../passthrough/failed-answer-text.js';
import { withoutAccountHeaders } from '../passthrough/account-headers.js';
import { callerOwnsCredential } from '../forwarded-headers.js';

export const callPassthrough: TargetHandler = async (call) => {
  const { run, resolved, node } = call;
  const { deps } = run;
  const { ctx } = run.call;
  const passthrough = run.call.passthrough as NonNullable<typeof run.call.passthrough>;
  const { adapter } = resolved;
  const started = performance.now();
  const timeoutMs = node.request_timeout ?? deps.settings.defaultRequestTimeoutMs;
  const idleMs = node.request_timeout ?? deps.settings.defaultStreamIdleTimeoutMs;
  const controller = new CallAbort();
  const onClientAbort = () => controller.abort();
  ctx.signal.addEventListener('abort', onClientAbort, { once: true });
  if (ctx.signal.aborted) controller.abort();
  const timer = setTimeout(
    () => controller.abort(),
    Math.max(1, Math.min(timeoutMs, run.deadline - started, MAX_TIMER_MS)),
  );
  let auth: AuthMaterial | undefined;
  const finish = (outcome: AttemptOutcome): AttemptOutcome => {
    recordAttempt(run, {
      path: call.path,
      provider: adapter.id,
      model: undefined,
      body: {},
      outcome,
      started,
      retry: call.retry,
    });
    return outcome;
  };
  const fail = (
    error: GatewayError | ProviderError,
    reason: 'config' | 'status' | 'connection' | 'timeout' | 'client_gone' | 'invalid_response',
  ) => finish(gatewayFailure(scrubSecrets(error, targetSecrets(resolved.target, auth)), reason));
  /** The failure of a call the client left or request_timeout ended; undefined when neither did. */
  const cutShort = () => {
    if (ctx.signal.aborted)
      return fail(new GatewayError('request_timeout', 'The client went away'), 'client_gone');
    if (controller.aborted) {
      return fail(
        new GatewayError('request_timeout', `${adapter.id} did not answer within ${timeoutMs} ms`),
        'timeout',
      );
    }
    return undefined;
  };

  try {
    let response;
    try {
      // A credential the caller sent (its key — the one its Authorization gave, taken by a target holding
      // no credential of its own — or one written in the config it sent) is its own to use anywhere and on
      // any of its accounts; a virtual key's, a catalog provider's or a stored config's only as stored.
      const ownCredential = callerOwnsCredential(resolved, ctx);
      const judged = { path: passthrough.path, target: resolved.target, storedCredential: !ownCredential };
      judging(() => adapter.refusePassthrough?.(judged));
      const { body } = passthrough;
      // A body the adapter signs, or judges for a stored credential, is read whole before the credential is used.
      const judgesBody = !ownCredential && adapter.refuseStoredPassthroughBody !== undefined;
      const bytes = body && (adapter.passthroughSignsBody || judgesBody) ? await body.bytes() : undefined;
      if (bytes && judgesBody) judging(() => adapter.refuseStoredPassthroughBody?.(judged, bytes));
      auth = adapter.authenticate
        ? await adapter.authenticate(resolved.target, controller, deps.upstream.ownRequests)
        : undefined;
      const request: PassthroughRequest = {
        method: passthrough.method,
        path: passthrough.path,
        headers: withoutAccountHeaders(passthrough.headers, ownCredential),
        target: resolved.target,
        auth,
      };
      if (body) request.body = bytes ?? body.send();
      run.call.state.providerCalls += 1;
      response = await deps.upstream.send(await adapter.buildPassthrough(request), controller);
    } catch (err) {
      if (err instanceof GatewayError || err instanceof ProviderError) {
        // The gateway's own fault (a judgment that failed) is no failure of the provider's.
        const gateways = err instanceof GatewayError && (err.status < 500 || err.code === 'internal_error');
        return fail(err, gateways ? 'config' : 'status');
      }
      const cut = cutShort();
      if (cut) return cut;
      if (refusedByPolicy(err)) {
        return fail(
          new GatewayError('custom_host_refused', (err as Error).message, { param: 'custom_host' }),
          'config',
        );
      }
      return fail(
        new GatewayError('upstream_unreachable', `Could not reach ${adapter.id}: ${(err as Error).message}`, {
          cause: err,
        }),
        'connection',
      );
    }
    const ttfbMs = performance.now() - started;
    const status = response.statusCode;
    const secrets = targetSecrets(resolved.target, auth);
    // A provider may echo the credential in a header as well as in a body: relayed headers never hold it.
    const headers = scrubHeaders(response.headers, secrets);
    if (status >= 200 && status < 300) {
      // From here the relay's own silence deadline applies; a failed answer is read within request_timeout.
      clearTimeout(timer);
      return finish(
        relayed(ttfbMs, {
          status,
          headers,
          body: idleBounded(response.body, idleMs, adapter.id),
          usageOf: (answer) => adapter.passthroughUsage(answer),
          frameDecoder: adapter.createFrameDecoder,
          maxEventBytes: deps.settings.upstreamLimits.eventBytes,
          headerUsage: adapter.passthroughHeaderUsage?.(headers),
          failureOf: streamFailureOf(adapter.passthroughStreamFailure, secrets),
        }),
      );
    }
    let bodyText: string;
    let relayHeaders = headers;
    try {
      ({ text: bodyText, headers: relayHeaders } = await failedAnswerText(response.body, headers));
    } catch (err) {
      const cut = cutShort();
      if (cut) return cut;
      if (err instanceof UpstreamTooLarge) return fail(tooLargeFailure(adapter.id, err), 'invalid_response');
      return fail(
        new GatewayError(
          'upstream_unreachable',
          `Could not read ${adapter.id}'s answer: ${(err as Error).message}`,
        ),
        'connection',
      );
    }
    const scrubbed = maskSecrets(bodyText, secrets);
    if (status < 400) {
      // A redirect or a `304 Not Modified` is the provider's answer, not a failure to retry or fall back from.
      return finish(relayed(ttfbMs, { status, headers: relayHeaders, body: scrubbed }));
    }
    // What retries, fallbacks and the log go by; the client gets the provider's own body.
    const error = new ProviderError({
      status,
      provider: adapter.id,
      message: `${adapter.id} answered ${status}: ${scrubbed.slice(0, 500)}`,
      retryAfterMs: retryAfterMs(headers),
      headers,
    });
    const outcome: AttemptOutcome = {
      ok: false,
      error,
      status,
      reason: 'status',
      afterFirstByte: false,
      usage: undefined,
      ttfbMs,
      malformedChunks: 0,
      relay: { status, headers: relayHeaders, body: scrubbed },
    };
    return finish(outcome);
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onClientAbort);
  }
};

/** The adapter's reader of its stream's failures, the target's credentials cut out of what it reads (a
 * provider may echo them in an error's message, which the log keeps). */
function streamFailureOf(
  read: StreamFailureReader | undefined,
  secrets: string[],
): StreamFailureReader | undefined {
  if (!read) return undefined;
  return (event, json) => {
    const failure = read(event, json);
    return failure && scrubSecrets(failure, secrets);
  };
}

/** The body as it arrives; when nothing comes for `idleMs`, the provider's answer is closed and it fails. */
async function* idleBounded(
  body: UpstreamBody,
  idleMs: number,
  provider: string,
): AsyncGenerator<Uint8Array> {
  const iterator = body[Symbol.asyncIterator]();
  let ended = false;
  try {
    for (;;) {
      let silent = false;
      // Closing the answer ends the wait for its next chunk, which then reads as the end: `silent` tells.
      // Held at what a timer holds: a longer one (request_timeout has no upper bound) would fire at once.
      const timer = setTimeout(
        () => {
          silent = true;
          body.destroy();
        },
        Math.min(idleMs, MAX_TIMER_MS),
      );
      let next: IteratorResult<Uint8Array>;
      try {
        next = await iterator.next();
      } finally {
        clearTimeout(timer);
      }
      if (silent) throw new GatewayError('request_timeout', `${provider} sent nothing for ${idleMs} ms`);
      if (next.done) {
        ended = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!ended) await iterator.return?.();
  }
}

/** The provider's answer, relayed to the client as it is (a 2xx, a redirect, a 304). */
function relayed(ttfbMs: number | null, relay: UpstreamRelay): AttemptOutcome {
  return {
    ok: true,
    status: relay.status,
    streamed: false,
    usage: undefined,
    model: undefined,
    upstreamHeaders: relay.headers,
    ttfbMs,
    malformedChunks: 0,
    relay,
  };
}

/**
 * Runs an adapter's judgment of a call before anything is sent. A fault of its own (anything but the
 * GatewayError it refuses with) is the gateway's, a 500: nothing was sent, so it is not read as a provider
 * that could not be reached, which retries and fallbacks would count against the provider.
 */
function judging(judge: () => void): void {
  try {
    judge();
  } catch (err) {
    if (err instanceof GatewayError || err instanceof ProviderError) throw err;
    throw new GatewayError(
      'internal_error',
      `The pass-through call could not be judged: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}
