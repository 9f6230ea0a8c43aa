/**
 * Calls of a provider's own APIs (Files, fine-tuning, Batch) on one target: the adapter builds the
 * request, the gateway's upstream client sends it under the request timeout, a non-2xx answer becomes the
 * provider's error in the OpenAI shape with the target's credentials cut out, and a 2xx answer is read as
 * JSON (or, for file contents, handed on as a stream).
 */
import { CallAbort, type AbortSignalLike } from '../../core/abort.js';
import { GatewayError, ProviderError } from '../../core/errors.js';
import type { ResourceRequest } from '../../providers/types.js';
import type { GatewayDeps } from '../deps.js';
import { scrubSecrets, targetSecrets } from '../scrub-secrets.js';
import type { UpstreamBody } from '../upstream.js';
import type { ResourceTarget } from './resource-target.js';

export type ResourceCall = Omit<ResourceRequest, 'target' | 'auth' | 'headers'> & {
  headers?: Record<string, string>;
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
  const timeoutMs = deps.settings.defaultRequestTimeoutMs;
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const done = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  };
  const secrets = () => targetSecrets(target.target);
  try {
    const auth = adapter.authenticate ? await adapter.authenticate(target.target, controller) : undefined;
    const request = resources.buildRequest({
      ...call,
      headers: call.headers ?? {},
      target: target.target,
      ...(auth && { auth }),
    });
    const response = await deps.upstream.send(request, controller);
    const { headers } = response;
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const bodyText = await response.body.text();
      done();
      throw scrubSecrets(resources.parseError({ status: response.statusCode, headers, bodyText }), secrets());
    }
    return { status: response.statusCode, headers, body: response.body, done };
  } catch (err) {
    done();
    if (err instanceof ProviderError) throw err;
    if (err instanceof GatewayError) throw scrubSecrets(err, secrets());
    if (controller.aborted) {
      throw new GatewayError('request_timeout', `${adapter.id} did not answer within ${timeoutMs} ms`);
    }
    throw new GatewayError('upstream_unreachable', `${adapter.id} could not be reached`, { cause: err });
  }
}

/** Sends the call and reads its JSON answer. */
export async function callResource(
  deps: GatewayDeps,
  target: ResourceTarget,
  call: ResourceCall,
  signal?: AbortSignalLike,
): Promise<Record<string, unknown>> {
  const answer = await openResource(deps, target, call, signal);
  let text: string;
  try {
    text = await answer.body.text();
  } finally {
    answer.done();
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
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
