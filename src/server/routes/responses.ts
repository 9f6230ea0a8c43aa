/**
 * The Responses API, an ingress of the one pipeline: `POST /v1/responses` is translated into the canonical
 * chat request (gateway/responses/) and runs through `execute` like any model call — routing, retries,
 * fallbacks, breaker, cache, hooks and guardrails, rate limits, the log —; its answer is framed by the
 * Responses codec and stored (unless `store: false`) before the client sees it end. Stored responses are
 * read, listed and deleted within the caller's workspace; none runs in the background, to cancel or to
 * stream again.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../../core/errors.js';
import { INCLUDE_VALUES, validateResponsesRequest } from '../../core/schemas/responses-request.js';
import { callContextFromRequest } from '../../gateway/call-context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import { asksForStream } from '../../gateway/endpoints.js';
import { contextOrRefuse, execute, refuseRequest } from '../../gateway/execute.js';
import { ResponseAssembler } from '../../gateway/responses/response-assembler.js';
import { prepareResponseCall } from '../../gateway/responses/response-call.js';
import { StoredResponseSink, type SaveResponse } from '../../gateway/responses/stored-response-sink.js';
import { newRouteState } from '../../gateway/routing/route-types.js';
import { openAICodec } from '../../ingress/openai-codec.js';
import { responsesCodec } from '../../ingress/responses-codec.js';
import { HttpSink } from '../http-sink.js';
import { pathParam } from './management/route-helpers.js';
import { integerValue } from './query-params.js';

type Query = Record<string, string | string[] | undefined>;

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

function single(query: Query, name: string): string | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') {
    throw new GatewayError('invalid_query', `${name} may be given once`, { param: name });
  }
  return raw;
}

/** `include` (or `include[]`, as some clients send arrays): each value one the spec lists. */
function checkInclude(query: Query): void {
  const raw = query.include ?? query['include[]'];
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  for (const value of values) {
    if (!(INCLUDE_VALUES as readonly string[]).includes(value)) {
      throw new GatewayError('invalid_query', `include: unknown value "${value}"`, { param: 'include' });
    }
  }
}

function limitOf(query: Query): number {
  const raw = single(query, 'limit');
  return raw === undefined ? DEFAULT_LIMIT : integerValue(raw, 'limit', 1, MAX_LIMIT);
}

function orderOf(query: Query): 'asc' | 'desc' {
  const raw = single(query, 'order') ?? 'asc';
  if (raw !== 'asc' && raw !== 'desc') {
    throw new GatewayError('invalid_query', 'order must be "asc" or "desc"', { param: 'order' });
  }
  return raw;
}

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `No response ${id} in this workspace`, { param: 'response_id' });
}

/** What only a background response allows; the gateway answers every response in the foreground. */
function foregroundOnly(id: string, what: string, param: string): GatewayError {
  return new GatewayError(
    'unsupported_endpoint',
    `Response ${id} cannot be ${what}: only a background response can be, and the gateway answers every response in the foreground`,
    { param },
  );
}

function responseIdOf(request: FastifyRequest): string {
  return pathParam(request.params, 'response_id');
}

export async function registerResponseRoutes(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  app.post('/responses', async (request, reply) => {
    const how = { method: request.method, url: request.url };
    const workspaceId = request.gw.apiKey.workspace_id;
    let prepared: Awaited<ReturnType<typeof prepareResponseCall>>;
    try {
      const body = validateResponsesRequest(request.body);
      prepared = await prepareResponseCall(deps.store, workspaceId, body, deps.settings.contextWindows);
    } catch (err) {
      // Its body did not validate, or what it continues cannot be: refused, and recorded.
      const sink = new HttpSink(reply, openAICodec, undefined, newRouteState());
      refuseRequest(deps, 'responses', request.body, sink, request.gw, how, err);
      return reply;
    }
    const { request: call, shell } = prepared;
    const state = newRouteState();
    const assembler = new ResponseAssembler(shell, () => state.responsesAccount);
    const codec = responsesCodec(assembler);
    const stream = asksForStream(call);
    const http = new HttpSink(reply, codec, stream ? codec.streamEncoder(undefined) : undefined, state);
    const save: SaveResponse = prepared.store
      ? async (response) => {
          try {
            await deps.store.updateResponse(workspaceId, response.id, {
              status: response.status,
              body: { ...response },
            });
          } catch (err) {
            deps.logger.error({ err, traceId: request.gw.traceId }, 'storing a response failed');
          }
        }
      : () => Promise.resolve();
    const sink = new StoredResponseSink(http, assembler, save);
    const ctx = await contextOrRefuse(deps, call, sink, request.gw, how, () =>
      callContextFromRequest(deps.lookups, request.gw, how),
    );
    if (!ctx) {
      await sink.settled;
      return reply;
    }
    if (prepared.store) {
      await deps.store.createResponse({
        workspace_id: workspaceId,
        id: shell.id,
        previous_response_id: shell.previous_response_id,
        status: 'in_progress',
        body: { ...assembler.inProgress() },
        input_items: prepared.inputItems,
      });
    }
    // Thinking comes back (as content_blocks) only when not strict: the Response shows it as reasoning.
    await execute(deps, { ...call, ctx: { ...ctx, strictCompat: false }, state }, sink);
    await sink.settled;
    return reply;
  });

  app.get('/responses/:response_id', async (request) => {
    const query = request.query as Query;
    checkInclude(query);
    const id = responseIdOf(request);
    const stored = await deps.store.getResponse(request.gw.apiKey.workspace_id, id);
    if (!stored) throw notFound(id);
    if (single(query, 'stream') === 'true') throw foregroundOnly(id, 'streamed again', 'stream');
    return stored.body;
  });

  app.delete('/responses/:response_id', async (request) => {
    const id = responseIdOf(request);
    if (!(await deps.store.deleteResponse(request.gw.apiKey.workspace_id, id))) throw notFound(id);
    return { id, object: 'response', deleted: true };
  });

  // Every response is answered in the foreground (`background: true` included): none is left running to
  // cancel (nor to stream again, above). Its id is the gateway's, which no provider issued, so the cancel
  // is not passed through either.
  app.post('/responses/:response_id/cancel', async (request) => {
    const id = responseIdOf(request);
    if (!(await deps.store.getResponse(request.gw.apiKey.workspace_id, id))) throw notFound(id);
    throw foregroundOnly(id, 'cancelled', 'response_id');
  });

  app.get('/responses/:response_id/input_items', async (request) => {
    const query = request.query as Query;
    checkInclude(query);
    const id = responseIdOf(request);
    const page = await deps.store.listResponseInputItems(request.gw.apiKey.workspace_id, id, {
      limit: limitOf(query),
      order: orderOf(query),
      after: single(query, 'after'),
      before: single(query, 'before'),
    });
    if (!page) throw notFound(id);
    return {
      object: 'list',
      data: page.data.map((stored) => stored.item),
      has_more: page.has_more,
      first_id: page.data[0]?.id ?? null,
      last_id: page.data.at(-1)?.id ?? null,
    };
  });
}
