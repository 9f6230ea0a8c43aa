/**
 * The Responses API, an ingress of the one pipeline: `POST /v1/responses` is translated into the canonical
 * chat request (gateway/responses/) and runs through `execute` like any model call — routing, retries,
 * fallbacks, breaker, cache, hooks and guardrails, rate limits, the log —; its answer is framed by the
 * Responses codec and stored (unless `store: false`) before the client sees it end. A background one
 * (`background: true`) is stored `queued` with a job that a node's worker runs
 * (gateway/responses/background-worker.ts): the client gets it at once — or, streamed, its events as
 * the store receives them —, reads it again (`?stream=true&starting_after=N` replays and follows its
 * events) and may cancel it. Stored responses are read, listed and deleted within the caller's workspace.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../core/errors.js';
import { INCLUDE_VALUES, validateResponsesRequest } from '../../core/schemas/responses-request.js';
import { callContextFromRequest } from '../../gateway/call-context.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import { asksForStream } from '../../gateway/endpoints.js';
import { contextOrRefuse, execute, refuseRequest } from '../../gateway/execute.js';
import { ResponseAssembler } from '../../gateway/responses/response-assembler.js';
import {
  BACKGROUND_JOB,
  BACKGROUND_JOB_ATTEMPTS,
  queuedEvents,
  RUNNING_STATUSES,
  type BackgroundPayload,
} from '../../gateway/responses/background.js';
import type { BackgroundHub } from '../../gateway/responses/background-hub.js';
import { followResponseEvents } from '../../gateway/responses/follow-response-events.js';
import { prepareResponseCall, type PreparedResponseCall } from '../../gateway/responses/response-call.js';
import type { ResponseObject } from '../../gateway/responses/response-types.js';
import { storedCallOf } from '../../gateway/provider-resources/stored-call.js';
import { resolveTarget } from '../../gateway/resolve-target.js';
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

/** What only a background response allows. */
function notBackground(id: string, what: string, param: string): GatewayError {
  return new GatewayError(
    'unsupported_endpoint',
    `Response ${id} cannot be ${what}: only a response created with background: true can be`,
    { param },
  );
}

function responseIdOf(request: FastifyRequest): string {
  return pathParam(request.params, 'response_id');
}

export async function registerResponseRoutes(
  app: FastifyInstance,
  deps: GatewayDeps,
  hub: BackgroundHub,
): Promise<void> {
  /** The events of a streamed background response after `after`, then the live ones, as server-sent
   * events, until it ends or the client leaves. */
  async function streamEvents(reply: FastifyReply, workspaceId: string, id: string, after: number) {
    reply.hijack();
    const res = reply.raw;
    const headers = reply.getHeaders() as Record<string, string>;
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const open = () => !res.destroyed && !res.writableEnded;
    try {
      await followResponseEvents(deps.store, hub, workspaceId, id, after, async (event) => {
        if (!open()) return false;
        if (!res.write(`event: ${event.type}\ndata: ${event.data}\n\n`)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              res.off('drain', done);
              res.off('close', done);
              resolve();
            };
            res.on('drain', done);
            res.on('close', done);
          });
        }
        return open();
      });
    } catch (err) {
      deps.logger.error({ err, response: id }, 'following a background response failed');
    }
    if (open()) res.end();
  }

  async function createBackground(
    request: FastifyRequest,
    reply: FastifyReply,
    prepared: PreparedResponseCall,
  ): Promise<FastifyReply | ResponseObject> {
    const how = { method: request.method, url: request.url };
    const { gw } = request;
    const workspaceId = gw.apiKey.workspace_id;
    const { request: call, shell } = prepared;
    // A config that does not resolve is refused now, not when the job runs, as is a config of one target
    // whose provider, virtual key or host cannot be used (as a batch's are).
    const refusal = new HttpSink(reply, openAICodec, undefined, newRouteState());
    const ctx = await contextOrRefuse(deps, call, refusal, gw, how, async () => {
      const built = await callContextFromRequest(deps.lookups, gw, how, call.body.model);
      if (!built.config.targets?.length) {
        await resolveTarget(
          built.config,
          '',
          workspaceId,
          built.clientApiKey,
          deps.lookups,
          deps.settings.customHostPolicy,
        );
      }
      return built;
    });
    if (!ctx) return reply;
    const queued: ResponseObject = { ...shell, status: 'queued', background: true };
    const stream = asksForStream(call);
    await deps.store.transaction(async (tx) => {
      await tx.createResponse({
        workspace_id: workspaceId,
        id: shell.id,
        previous_response_id: shell.previous_response_id,
        status: 'queued',
        body: { ...queued },
        input_items: prepared.inputItems,
        run: {
          call: storedCallOf({
            apiKey: gw.apiKey,
            headers: gw.headers,
            metadata: gw.metadata,
            traceId: gw.traceId,
          }),
          request: call.body as unknown as Record<string, unknown>,
        },
        ...(stream && { events: queuedEvents(queued) }),
      });
      const payload: BackgroundPayload = {
        workspace_id: workspaceId,
        response_id: shell.id,
        input_offset: prepared.inputOffset,
      };
      await tx.jobs.enqueue({
        kind: BACKGROUND_JOB,
        workspace_id: workspaceId,
        payload,
        max_attempts: BACKGROUND_JOB_ATTEMPTS,
      });
    });
    hub.onQueued();
    if (!stream) return queued;
    await streamEvents(reply, workspaceId, shell.id, -1);
    return reply;
  }

  app.post('/responses', async (request, reply) => {
    const how = { method: request.method, url: request.url };
    const workspaceId = request.gw.apiKey.workspace_id;
    let prepared: PreparedResponseCall;
    let background = false;
    try {
      const body = validateResponsesRequest(request.body);
      background = body.background === true;
      if (background && body.store === false) {
        throw new GatewayError(
          'invalid_body',
          'store: a background response is stored (background: true cannot go with store: false)',
          { param: 'store' },
        );
      }
      prepared = await prepareResponseCall(deps.store, workspaceId, body, deps.settings.contextWindows);
    } catch (err) {
      // Its body did not validate, or what it continues cannot be: refused, and recorded.
      const sink = new HttpSink(reply, openAICodec, undefined, newRouteState());
      refuseRequest(deps, 'responses', request.body, sink, request.gw, how, err);
      return reply;
    }
    if (background) return createBackground(request, reply, prepared);
    const { request: call, shell } = prepared;
    const state = newRouteState();
    state.responsesInputOffset = prepared.inputOffset;
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
      callContextFromRequest(deps.lookups, request.gw, how, call.body.model),
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

  app.get('/responses/:response_id', async (request, reply) => {
    const query = request.query as Query;
    checkInclude(query);
    // Checked whether or not the answer streams: `stream=1` or `stream=yes` would otherwise quietly be
    // the plain object, and a bad cursor go unnoticed.
    const stream = single(query, 'stream');
    if (stream !== undefined && stream !== 'true' && stream !== 'false') {
      throw new GatewayError('invalid_query', 'stream must be true or false', { param: 'stream' });
    }
    const startingAfter = single(query, 'starting_after');
    const after =
      startingAfter === undefined
        ? -1
        : integerValue(startingAfter, 'starting_after', 0, Number.MAX_SAFE_INTEGER);
    const id = responseIdOf(request);
    const workspaceId = request.gw.apiKey.workspace_id;
    const stored = await deps.store.getResponse(workspaceId, id);
    if (!stored) throw notFound(id);
    if (stream !== 'true') return stored.body;
    if (stored.body.background !== true) throw notBackground(id, 'streamed again', 'stream');
    if ((await deps.store.lastResponseEvent(id)) < 0) {
      throw new GatewayError(
        'unsupported_endpoint',
        `Response ${id} has no events to stream: only a background response created with stream: true has, until an hour after it ended`,
        { param: 'stream' },
      );
    }
    await streamEvents(reply, workspaceId, id, after);
    return reply;
  });

  app.delete('/responses/:response_id', async (request) => {
    const id = responseIdOf(request);
    if (!(await deps.store.deleteResponse(request.gw.apiKey.workspace_id, id))) throw notFound(id);
    return { id, object: 'response', deleted: true };
  });

  // A background response that has not ended is cancelled (its call stopped where it runs); one that
  // has ended is answered as it is, as is a second cancel: the final object. Its id is the gateway's,
  // which no provider issued, so the cancel is not passed through.
  app.post('/responses/:response_id/cancel', async (request) => {
    const id = responseIdOf(request);
    const workspaceId = request.gw.apiKey.workspace_id;
    const stored = await deps.store.getResponse(workspaceId, id);
    if (!stored) throw notFound(id);
    if (stored.body.background !== true) throw notBackground(id, 'cancelled', 'response_id');
    if (!(RUNNING_STATUSES as readonly string[]).includes(stored.status)) return stored.body;
    const cancelled = { ...stored.body, status: 'cancelled' };
    if (
      await deps.store.updateResponse(
        workspaceId,
        id,
        { status: 'cancelled', body: cancelled },
        RUNNING_STATUSES,
      )
    ) {
      hub.cancel(id);
      hub.notify(id);
      return cancelled;
    }
    // It ended (or was cancelled) meanwhile: as it is now.
    const now = await deps.store.getResponse(workspaceId, id);
    if (!now) throw notFound(id);
    return now.body;
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
