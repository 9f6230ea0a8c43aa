/**
 * Calls of a provider's own APIs (Files, fine-tuning, Batch) on one target: the adapter builds the
 * request, the gateway's upstream client sends it under the request timeout (a file's transfer under a
 * timeout of silence instead), a non-2xx answer becomes the provider's error in the OpenAI shape with the
 * target's credentials cut out, and a 2xx answer is read as JSON (or, for file contents, handed on as a
 * stream).
 */
import { CallAbort, type AbortSignalLike } from '../../core/abort.js';
import { GatewayError, ProviderError } from '../../core/errors.js';
import { tooLargeFailure, UpstreamTooLarge } from '../../core/upstream-limits.js';
import type { ResourceRequest } from '../../providers/types.js';
import type { GatewayDeps } from '../deps.js';
import { scrubSecrets, targetSecrets } from '../scrub-secrets.js';
import type { UpstreamBody } from '../upstream.js';
import type { ResourceTarget } from './resource-target.js';

export type ResourceCall = Omit<ResourceRequest, 'target' | 'auth' | 'headers'> & {
  headers?: Record<string, string>;
  /**
   * A file's transfer (its bytes sent up, or its contents read down): cut once no byte has moved either
   * way for `GATEWAY_FILE_TRANSFER_IDLE_TIMEOUT_MS`, and not by the request timeout, which the honest
   * transfer of a large file may outlast while a stalled one would hold its job that long.
   */
  transfer?: boolean;
};

export interface ResourceAnswer {
  status: number;
  headers: Record<string, string>;
  body: UpstreamBody;
  /** Stops the request's deadline; call once the body has been read. */
  done(): void;
}

/** Sends the call; resolves on a 2xx answer with its body unread, throws the provider's error otherwise. */
export async function openResource(
  deps: GatewayDeps,
  target: ResourceTarget,
  call: ResourceCall,
  signal?: AbortSignalLike,
): Promise<ResourceAnswer> {
  const { adapter, resources } = target;
  const controller = new CallAbort();
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  // A signal that is already aborted calls no listener.
  if (signal?.aborted) controller.abort();
  const { transfer, ...rest } = call;
  const idleMs = transfer ? deps.settings.fileTransferIdleTimeoutMs : undefined;
  const timeoutMs = idleMs ?? deps.settings.defaultRequestTimeoutMs;
  let timedOut = false;
  let finished = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  // A transfer's deadline starts again whenever a byte moves.
  const moved =
    idleMs === undefined
      ? undefined
      : () => {
          if (!finished) timer.refresh();
        };
  const done = () => {
    finished = true;
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  };
  const timeout = () =>
    new GatewayError(
      'request_timeout',
      idleMs === undefined
        ? `${adapter.id} did not answer within ${timeoutMs} ms`
        : `The file transfer with ${adapter.id} stalled: nothing moved for ${idleMs} ms`,
    );
  const secrets = () => targetSecrets(target.target);
  try {
    const auth = adapter.authenticate
      ? await adapter.authenticate(target.target, controller, deps.upstream.ownRequests)
      : undefined;
    const request = resources.buildRequest({
      ...rest,
      ...(moved && isStreamed(rest.body) && { body: watched(rest.body, moved) }),
      headers: call.headers ?? {},
      target: target.target,
      ...(auth && { auth }),
    });
    const response = await deps.upstream.send(request, controller);
    moved?.();
    const { headers } = response;
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const bodyText = await response.body.text(deps.settings.upstreamLimits.answerBytes);
      done();
      throw scrubSecrets(resources.parseError({ status: response.statusCode, headers, bodyText }), secrets());
    }
    const body = moved ? watchedBody(response.body, moved, () => timedOut, timeout) : response.body;
    return { status: response.statusCode, headers, body, done };
  } catch (err) {
    done();
    if (err instanceof ProviderError) throw err;
    if (err instanceof GatewayError) throw scrubSecrets(err, secrets());
    if (err instanceof UpstreamTooLarge) throw tooLargeFailure(adapter.id, err);
    if (controller.aborted) throw timeout();
    throw new GatewayError('upstream_unreachable', `${adapter.id} could not be reached`, { cause: err });
  }
}

function isStreamed(body: ResourceCall['body']): body is AsyncIterable<Uint8Array> {
  return typeof body === 'object' && Symbol.asyncIterator in body;
}

/** The chunks of `body`, telling `moved` of each as it is taken. */
async function* watched(body: AsyncIterable<Uint8Array>, moved: () => void): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    moved();
    yield chunk;
  }
}

/** An answer's body whose every chunk tells `moved`; a read cut by the transfer's deadline fails with
 * the timeout rather than the abort. */
function watchedBody(
  body: UpstreamBody,
  moved: () => void,
  timedOut: () => boolean,
  timeout: () => GatewayError,
): UpstreamBody {
  const failure = (err: unknown) => (timedOut() ? timeout() : err);
  return {
    async *[Symbol.asyncIterator]() {
      try {
        yield* watched(body, moved);
      } catch (err) {
        throw failure(err);
      }
    },
    bytes: (maxBytes) => body.bytes(maxBytes).catch((err: unknown) => Promise.reject(failure(err))),
    text: (maxBytes) => body.text(maxBytes).catch((err: unknown) => Promise.reject(failure(err))),
    destroy: () => body.destroy(),
  };
}

/** Sends the call and reads its JSON answer. */
export async function callResource(
  deps: GatewayDeps,
  target: ResourceTarget,
  call: ResourceCall,
  signal?: AbortSignalLike,
): Promise<Record<string, unknown>> {
  return (await callResourceText(deps, target, call, signal)).answer;
}

/** Sends the call and reads its JSON answer, with the length of the text it came as. */
async function callResourceText(
  deps: GatewayDeps,
  target: ResourceTarget,
  call: ResourceCall,
  signal?: AbortSignalLike,
): Promise<{ answer: Record<string, unknown>; length: number }> {
  const answer = await openResource(deps, target, call, signal);
  let text: string;
  try {
    text = await answer.body.text(deps.settings.upstreamLimits.answerBytes);
  } catch (err) {
    throw err instanceof UpstreamTooLarge ? tooLargeFailure(target.adapter.id, err) : err;
  } finally {
    answer.done();
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return { answer: parsed as Record<string, unknown>, length: text.length };
  } catch {
    // reported below
  }
  throw new GatewayError(
    'upstream_invalid_response',
    `${target.adapter.id} answered ${call.method} ${call.path.split('?')[0]} with a body that is not a JSON object`,
  );
}

/** A JSON request body. */
export function jsonBody(value: unknown): Pick<ResourceCall, 'body' | 'headers'> {
  return { body: JSON.stringify(value), headers: { 'content-type': 'application/json' } };
}

/** The query of one page of a provider's list: `?limit=…&after=…`. */
export function pageQuery(query: { after?: string; limit: number }): string {
  const params = new URLSearchParams({ limit: String(query.limit) });
  if (query.after !== undefined) params.set('after', query.after);
  return `?${params.toString()}`;
}

/** A page of a provider's list: its items, and the length of the JSON text they came in. */
export interface ListPage {
  data: Record<string, unknown>[];
  length: number;
}

/**
 * A provider's list read page by page, 100 items a page, each next page `after` the last item of the one
 * before, until the provider says there is no more (or repeats itself), at most `maxPages` pages: each
 * page as it comes, for a reader that may stop early. `signal` (the request's) ends the read
 * of the page under way, and no other is asked for. Returns whether the list was read to its end: false
 * when `maxPages` pages were read and the provider still had more.
 */
export async function* listPages(
  deps: GatewayDeps,
  target: ResourceTarget,
  path: string,
  maxPages: number,
  signal?: AbortSignalLike,
  /** The id the first page starts after: the list's own start when absent. */
  from?: string,
): AsyncGenerator<ListPage, boolean> {
  let after = from;
  for (let read = 0; read < maxPages; read++) {
    const { answer: page, length } = await callResourceText(
      deps,
      target,
      { method: 'GET', path: `${path}${pageQuery({ limit: 100, after })}` },
      signal,
    );
    const data = Array.isArray(page.data) ? (page.data as Record<string, unknown>[]) : [];
    yield { data, length };
    const last = data.at(-1)?.id;
    if (page.has_more !== true || typeof last !== 'string' || last === after) return true;
    after = last;
  }
  return false;
}
