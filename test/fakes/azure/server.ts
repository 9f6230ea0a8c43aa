// A fake of Azure's inference endpoints on 127.0.0.1, standing in for both hosts the gateway calls:
//   Azure OpenAI       POST /openai/deployments/{deployment}/{chat/completions|completions|embeddings}?api-version=…
//                      POST /openai/responses?api-version=… (the Responses API; the deployment in the body's `model`)
//   Azure AI inference POST /chat/completions?api-version=…, /embeddings?api-version=… (serverless), /score (managed)
// It checks the key (`api-key`, or `Authorization: Bearer`), answers in Azure's shapes (content-filter
// verdicts included), replays the recorded Azure stream on request, and fails with Azure's error bodies.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { completionText, textCompletion, type CompletionRequest } from '../openai/completions.js';
import { embeddingResponse, type EmbeddingRequest } from '../openai/embeddings.js';
import { FakeResources } from '../openai/resources.js';
import { azureJobWire } from './fine-tuning-jobs.js';
import {
  planResponse,
  responseAnswer,
  responseEvents,
  responseFrames,
  type ResponsesRequestBody,
} from '../openai/responses.js';
import {
  azureChatCompletion,
  azureChatCompletionChunks,
  planAzureChat,
  type AzureChatRequest,
} from './answers.js';
import { azureErrors } from './errors.js';
import { assembledAzureChatCompletion, readAzureChatStream } from './recorded.js';

export type AzureFakeBehaviour =
  /** Replay the recorded Azure chat stream (or, for a plain call, the answer assembled from it). */
  | { fixture: 'azure-model-router' }
  /** Answer with this text instead of the echo. */
  | { text: string }
  /** Answer a plain call with this body. */
  | { json: unknown }
  /** Answer a streamed call with these events as they are, then `[DONE]`. */
  | { events: object[] }
  /** Fail with this status and body (default: Azure's body for the status). */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** A 200 stream that sends `after` events of the answer, then an error object, and ends. */
  | { streamErrorAfter: number };

export interface AzureRecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeAzure {
  /** `http://127.0.0.1:PORT`, to use as `custom_host`. */
  url: string;
  apiKey: string;
  requests: AzureRecordedRequest[];
  enqueue(...behaviours: AzureFakeBehaviour[]): void;
  /** Files, fine-tuning jobs and batches under `/openai/…` (../openai/resources.ts). */
  resources: FakeResources;
  close(): Promise<void>;
}

export interface FakeAzureOptions {
  /** The key the fake accepts; default `azure-test-key`. */
  apiKey?: string;
  /** Deployment names that exist; any name when absent. */
  deployments?: string[];
}

/** Fine-tuning jobs, alone or in a list, in Azure's own shape (fine-tuning-jobs.ts). */
function azureJobsWire(body: unknown): unknown {
  const object = body as { object?: unknown; data?: unknown[] } | null;
  if (object?.object === 'fine_tuning.job') return azureJobWire(object as Record<string, unknown>);
  if (object?.object === 'list' && Array.isArray(object.data)) {
    return { ...object, data: object.data.map(azureJobsWire) };
  }
  return body;
}

const DEPLOYMENT_ROUTE = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|completions|embeddings)$/;

export async function startFakeAzure(options: FakeAzureOptions = {}): Promise<FakeAzure> {
  const apiKey = options.apiKey ?? 'azure-test-key';
  const requests: AzureRecordedRequest[] = [];
  const queue: AzureFakeBehaviour[] = [];
  const resources = new FakeResources('azure');

  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const url = new URL(req.url ?? '/', 'http://fake');
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        // kept as text
      }
      requests.push({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
      });
      const resourcePath =
        url.pathname.startsWith('/openai/') &&
        !url.pathname.startsWith('/openai/deployments/') &&
        url.pathname !== '/openai/responses';
      if (resourcePath) {
        void resource(req, res, url, raw);
        return;
      }
      handle(req, res, url, (body ?? {}) as Record<string, unknown>);
    });
  });

  /** Azure OpenAI's Files, fine-tuning and Batch APIs: OpenAI's, under `/openai`, with an api-version. */
  async function resource(req: IncomingMessage, res: ServerResponse, url: URL, raw: string): Promise<void> {
    if (!authorised(req.headers)) return sendJson(res, 401, azureErrors.unauthorized());
    if (!url.searchParams.get('api-version')) return sendJson(res, 404, azureErrors.resourceNotFound());
    const query = Object.fromEntries([...url.searchParams].filter(([key]) => key !== 'api-version'));
    const answer = await resources.handle(
      req.method ?? 'GET',
      url.pathname.slice('/openai'.length),
      query,
      req.headers['content-type'],
      Buffer.from(raw, 'utf8'),
    );
    if (!answer) return sendJson(res, 404, azureErrors.resourceNotFound());
    if (answer.lost) {
      req.socket.destroy();
      return;
    }
    if (answer.raw) {
      res.writeHead(answer.status, { 'content-type': 'application/octet-stream' });
      res.end(answer.raw);
      return;
    }
    sendJson(res, answer.status, azureJobsWire(answer.body));
  }

  function authorised(headers: IncomingHttpHeaders): boolean {
    return headers['api-key'] === apiKey || headers.authorization === `Bearer ${apiKey}`;
  }

  function handle(req: IncomingMessage, res: ServerResponse, url: URL, body: Record<string, unknown>): void {
    if (!authorised(req.headers)) return sendJson(res, 401, azureErrors.unauthorized());
    if (req.method !== 'POST') return sendJson(res, 404, azureErrors.resourceNotFound());
    const deploymentRoute = DEPLOYMENT_ROUTE.exec(url.pathname);
    let kind: string;
    let deployment: string;
    if (deploymentRoute) {
      deployment = decodeURIComponent(deploymentRoute[1]!);
      kind = deploymentRoute[2]!;
      if (options.deployments && !options.deployments.includes(deployment)) {
        return sendJson(res, 404, azureErrors.deploymentNotFound());
      }
    } else if (url.pathname === '/openai/responses') {
      kind = 'responses';
      deployment = String(body.model);
      if (options.deployments && !options.deployments.includes(deployment)) {
        return sendJson(res, 404, azureErrors.deploymentNotFound());
      }
    } else if (
      url.pathname === '/chat/completions' ||
      url.pathname === '/embeddings' ||
      url.pathname === '/score'
    ) {
      kind = url.pathname === '/embeddings' ? 'embeddings' : 'chat/completions';
      deployment = String(req.headers['azureml-model-deployment'] ?? 'serverless');
    } else {
      return sendJson(res, 404, azureErrors.resourceNotFound());
    }
    if (url.pathname !== '/score' && !url.searchParams.get('api-version')) {
      return sendJson(res, 404, azureErrors.resourceNotFound());
    }
    const behaviour = queue.shift();
    if (behaviour && 'status' in behaviour) {
      return sendJson(
        res,
        behaviour.status,
        behaviour.body ?? bodyForStatus(behaviour.status),
        behaviour.headers,
      );
    }
    if (kind === 'responses') {
      const request = body as ResponsesRequestBody;
      const plan = planResponse(
        'azure',
        request,
        behaviour && 'text' in behaviour ? behaviour.text : undefined,
      );
      if (!request.stream) return sendJson(res, 200, responseAnswer(request, plan));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(responseFrames(responseEvents(request, plan)).join(''));
      return;
    }
    if (kind === 'embeddings')
      return sendJson(res, 200, embeddingResponse('azure', body as EmbeddingRequest));
    if (kind === 'completions') {
      const request = body as CompletionRequest;
      return sendJson(res, 200, textCompletion('azure', request, completionText('azure', request)));
    }
    return chat(res, body as AzureChatRequest & { stream?: boolean }, deployment, behaviour);
  }

  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    enqueue: (...behaviours) => queue.push(...behaviours),
    resources,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function chat(
  res: ServerResponse,
  request: AzureChatRequest & { stream?: boolean },
  deployment: string,
  behaviour: Exclude<AzureFakeBehaviour, { status: number }> | undefined,
): void {
  if (behaviour && 'json' in behaviour) return sendJson(res, 200, behaviour.json);
  if (behaviour && 'events' in behaviour) return sendStream(res, behaviour.events, true);
  if (behaviour && 'fixture' in behaviour) {
    if (request.stream) return sendStream(res, readAzureChatStream(), true);
    return sendJson(res, 200, assembledAzureChatCompletion());
  }
  const plan = planAzureChat(
    request,
    deployment,
    behaviour && 'text' in behaviour ? behaviour.text : undefined,
  );
  if (!request.stream) return sendJson(res, 200, azureChatCompletion(plan));
  const events = azureChatCompletionChunks(plan, request.stream_options?.include_usage === true);
  if (behaviour && 'streamErrorAfter' in behaviour) {
    const cut = events.slice(0, behaviour.streamErrorAfter);
    cut.push({
      error: { code: '500', message: 'The server had an error while processing your request.', status: 500 },
    });
    return sendStream(res, cut, false);
  }
  sendStream(res, events, true);
}

function bodyForStatus(status: number): unknown {
  if (status === 401) return azureErrors.unauthorized();
  if (status === 404) return azureErrors.deploymentNotFound();
  if (status === 429) return azureErrors.rateLimited();
  if (status === 400) return azureErrors.contentFilter();
  return azureErrors.serverError();
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'apim-request-id': 'fake-request',
    ...headers,
  });
  res.end(JSON.stringify(body));
}

function sendStream(res: ServerResponse, events: object[], done: boolean): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
  if (done) res.write('data: [DONE]\n\n');
  res.end();
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}
