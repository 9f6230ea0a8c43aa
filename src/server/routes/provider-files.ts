/**
 * `/v1/files` answered by a provider's own Files API, when the client asks for it with
 * `x-gateway-files: provider` (and names the provider as for any call: virtual key, provider header,
 * config). Without that header `/v1/files` is the gateway's own store (files.ts), whatever provider the
 * request names, since gateway files are what managed batches, provider batches and fine-tuning jobs take
 * and send on themselves. Uploads stream through; answers are the provider's OpenAI-shaped objects.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../core/errors.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import { headerValue } from '../../gateway/context.js';
import { callResource, openResource } from '../../gateway/provider-resources/resource-client.js';
import { resourceTarget, type ResourceTarget } from '../../gateway/provider-resources/resource-target.js';
import { pathParam } from './management/route-helpers.js';

export const FILES_HEADER = 'x-gateway-files';

/** The type OpenAI's and Azure's answers of a file's contents carry (and the one given a provider's answer
 * naming none): a HEAD, answered without those answers, gives it too. */
const CONTENT_TYPE = 'application/octet-stream';

/**
 * Answers the request from the provider's Files API when it asks for that; false when it does not. The
 * header has one value, `provider`: any other is refused rather than read as "the gateway's store", which
 * would take an upload the client meant for the provider.
 */
export async function answeredByProvider(
  deps: GatewayDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<boolean> {
  const files = headerValue(request.headers, FILES_HEADER);
  if (files === undefined) return false;
  if (files !== 'provider') {
    throw new GatewayError('invalid_header', `${FILES_HEADER} must be provider`, { param: FILES_HEADER });
  }
  const target = await resourceTarget(deps, request.headers, request.gw.apiKey.workspace_id, 'files');
  const id = pathParam(request.params, 'fileId');
  const path = id === undefined ? '/files' : `/files/${fileIdSegment(id)}`;
  const search = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  if (request.method === 'POST') {
    const headers: Record<string, string> = {};
    const type = headerValue(request.headers, 'content-type');
    const length = headerValue(request.headers, 'content-length');
    if (type) headers['content-type'] = type;
    if (length) headers['content-length'] = length;
    await reply.send(
      await callResource(
        deps,
        target,
        { method: 'POST', path, headers, body: request.raw, transfer: true },
        request.gw.signal,
      ),
    );
    return true;
  }
  if (request.method === 'DELETE') {
    await reply.send(await callResource(deps, target, { method: 'DELETE', path }, request.gw.signal));
    return true;
  }
  const content = request.url.split('?')[0].endsWith('/content');
  if (content && request.method === 'HEAD') {
    const file = await callResource(deps, target, { method: 'GET', path }, request.gw.signal);
    await contentHeaders(reply, target, path, file).send();
    return true;
  }
  if (content) {
    const answer = await openResource(
      deps,
      target,
      { method: 'GET', path: `${path}/content`, transfer: true },
      request.gw.signal,
    );
    async function* body(): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of answer.body) yield chunk;
      } finally {
        answer.done();
      }
    }
    await reply.type(answer.headers['content-type'] ?? CONTENT_TYPE).send(Readable.from(body()));
    return true;
  }
  await reply.send(
    await callResource(deps, target, { method: 'GET', path: `${path}${search}` }, request.gw.signal),
  );
  return true;
}

/**
 * The file ids of the providers' Files APIs (OpenAI's, Azure OpenAI's: `file-…`) are letters, digits,
 * `-`, `_`, `.` and `:`, beginning with a letter or digit; any other is refused, 400 `invalid_path`,
 * rather than sent. An id goes into the provider's path as one segment, and `encodeURIComponent` leaves dots as they
 * are: a URL parser reads a segment of `.` or `..` as a step, so `/files/..` would reach the provider as
 * `/`, with the target's credentials.
 */
const FILE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,255}$/;

/** How much of a refused id its error quotes. */
const QUOTED_CHARACTERS = 100;

function fileIdSegment(id: string): string {
  if (!FILE_ID.test(id)) {
    const shown = id.length > QUOTED_CHARACTERS ? `${id.slice(0, QUOTED_CHARACTERS)}…` : id;
    throw new GatewayError(
      'invalid_path',
      `file_id ${JSON.stringify(shown)} is not a file id: letters, digits, '-', '_', '.' and ':', beginning with a letter or digit`,
      { param: 'file_id' },
    );
  }
  return encodeURIComponent(id);
}

/**
 * A HEAD of a file's contents, answered from the provider's file object (its `bytes`) rather than from a
 * GET of the contents, which would read the whole file to send none of it.
 */
function contentHeaders(
  reply: FastifyReply,
  target: ResourceTarget,
  path: string,
  file: Record<string, unknown>,
): FastifyReply {
  const { bytes } = file;
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0) {
    throw new GatewayError(
      'upstream_invalid_response',
      `${target.adapter.id} answered GET ${path} with a file object whose bytes is not a length`,
    );
  }
  return reply.type(CONTENT_TYPE).header('content-length', String(bytes));
}
