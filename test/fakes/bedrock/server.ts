// A fake of the Bedrock Runtime API on 127.0.0.1: Converse, ConverseStream (binary event-stream frames),
// InvokeModel for Titan / Cohere embeddings, and InvokeModel / InvokeModelWithResponseStream for Claude with
// Anthropic's own body (answers replayed from the Anthropic recordings; each stream event's JSON base64 in a
// `chunk` event, as Bedrock sends it). It verifies each request's SigV4 signature with the
// independent `aws4` implementation and answers wrong credentials with Bedrock's own 403 shapes.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import aws4 from 'aws4';
import { readAnthropicJsonFixture, readAnthropicStreamFixture } from '../anthropic/fixtures.js';
import { encodeEvent, encodeException, encodeInvokeChunk, parseChunkLine } from './event-stream.js';
import { readBedrockJsonFixture, readBedrockStreamFixture } from './fixtures.js';

export interface FakeBedrockOptions {
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  region?: string;
}

export interface RecordedBedrockRequest {
  method: string;
  /** The raw request path, as signed. */
  path: string;
  modelId: string;
  action: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export type FakeBedrockReply =
  /** A JSON answer: a recorded fixture file (e.g. `amazon-bedrock-text.json`) or an explicit body. */
  | { kind: 'json'; fixture?: string; body?: unknown; status?: number; headers?: Record<string, string> }
  /** A ConverseStream answer replaying a `.chunks.txt` recording; optionally an exception after N events. */
  | {
      kind: 'stream';
      fixture: string;
      /** The recording's lines as the test edited them, in place of the file's. */
      lines?: string[];
      exception?: { type: string; message: string; afterEvents?: number };
    }
  /** An InvokeModelWithResponseStream answer of Claude replaying an Anthropic `.chunks.txt` recording, or
   * the given Anthropic events. */
  | {
      kind: 'anthropic-stream';
      fixture?: string;
      events?: Array<Record<string, unknown>>;
      /** An exception message in place of event `afterEvents` and what follows. */
      exception?: { type: string; message: string; afterEvents: number };
    }
  /** Bedrock's error shape: status, `x-amzn-errortype` and `{"message"}`. */
  | { kind: 'error'; status: number; errorType: string; message: string; headers?: Record<string, string> };

export interface FakeBedrock {
  url: string;
  requests: RecordedBedrockRequest[];
  enqueue(...replies: FakeBedrockReply[]): void;
  close(): Promise<void>;
}

const ERROR_TYPE_SUFFIX = ':http://internal.amazon.com/coral/com.amazon.coral.service/';

export async function startFakeBedrock(options: FakeBedrockOptions = {}): Promise<FakeBedrock> {
  const credentials = {
    accessKeyId: options.accessKeyId ?? 'AKIDFAKEBEDROCK',
    secretAccessKey: options.secretAccessKey ?? 'fake-secret-key',
    ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}),
  };
  const region = options.region ?? 'us-east-1';
  const queue: FakeBedrockReply[] = [];
  const requests: RecordedBedrockRequest[] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        sendError(res, 500, 'InternalServerException', String(error));
      }
    });
  });

  function handle(req: IncomingMessage, res: ServerResponse, bodyText: string): void {
    const path = req.url ?? '/';
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers[name] = value;
    }
    const authFailure = checkSignature(req.method ?? 'POST', path, headers, bodyText);
    if (authFailure) {
      sendError(res, 403, authFailure.type, authFailure.message);
      return;
    }
    const match = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.exec(
      path.split('?')[0],
    );
    if (!match) {
      sendError(res, 404, 'UnknownOperationException', `unknown operation ${path}`);
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(bodyText) as Record<string, unknown>;
    } catch {
      sendError(res, 400, 'SerializationException', 'body is not JSON');
      return;
    }
    const modelId = decodeURIComponent(match[1]);
    const action = match[2];
    // Bedrock's own refusal of a text block with nothing but whitespace in it (a tool result's may be blank).
    if (action === 'converse' || action === 'converse-stream') {
      const turns = (body.messages as Array<{ content?: Array<{ text?: unknown }> }> | undefined) ?? [];
      for (const [i, turn] of turns.entries()) {
        for (const [j, block] of (turn.content ?? []).entries()) {
          if (typeof block.text === 'string' && block.text.trim() === '') {
            sendError(
              res,
              400,
              'ValidationException',
              `The text field in the ContentBlock object at messages.${i}.content.${j} is blank. Add text to the text field, and try again.`,
            );
            return;
          }
        }
      }
    }
    // Bedrock's own refusal: only some models take a toolChoice (Claude, Mistral Large, Nova).
    const toolConfig = body.toolConfig as { toolChoice?: unknown } | undefined;
    if (
      (action === 'converse' || action === 'converse-stream') &&
      toolConfig?.toolChoice !== undefined &&
      !/anthropic\.|mistral\.mistral-large|amazon\.nova/.test(modelId)
    ) {
      sendError(
        res,
        400,
        'ValidationException',
        "This model doesn't support the toolConfig.toolChoice field. Remove toolChoice and try again.",
      );
      return;
    }
    requests.push({ method: req.method ?? 'POST', path, modelId, action, headers, body });
    reply(res, queue.shift() ?? defaultReply(action, modelId, body), action);
  }

  function checkSignature(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string,
  ): { type: string; message: string } | undefined {
    const auth = headers.authorization ?? '';
    const parsed =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
        auth,
      );
    if (!parsed)
      return { type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
    const [, accessKeyId, , scopeRegion, service, signedHeaderList] = parsed;
    if (accessKeyId !== credentials.accessKeyId) {
      return {
        type: 'UnrecognizedClientException',
        message: 'The security token included in the request is invalid.',
      };
    }
    if (credentials.sessionToken && headers['x-amz-security-token'] !== credentials.sessionToken) {
      return {
        type: 'UnrecognizedClientException',
        message: 'The security token included in the request is invalid.',
      };
    }
    if (scopeRegion !== region || service !== 'bedrock') {
      return {
        type: 'InvalidSignatureException',
        message: `Credential should be scoped to a valid region and service 'bedrock', not '${scopeRegion}/${service}'.`,
      };
    }
    const names = signedHeaderList.split(';');
    if (!names.includes('host') || !names.includes('x-amz-date')) {
      return { type: 'InvalidSignatureException', message: 'host and x-amz-date must be signed.' };
    }
    // aws4 trusts a declared payload hash, so the fake checks it against the body it received
    const declaredHash = headers['x-amz-content-sha256'];
    if (declaredHash && declaredHash !== createHash('sha256').update(body).digest('hex')) {
      return {
        type: 'InvalidSignatureException',
        message: 'The provided x-amz-content-sha256 header does not match what was computed.',
      };
    }
    const signedHeaders: Record<string, string> = {};
    for (const name of names) signedHeaders[name] = headers[name] ?? '';
    const ignore: Record<string, boolean> = {};
    for (const name of ['content-length', 'content-type', 'x-amz-security-token']) {
      if (!names.includes(name)) ignore[name] = true;
    }
    // extraHeadersToIgnore is an aws4 option its type declarations do not list
    const request = {
      method,
      host: headers.host,
      path,
      headers: signedHeaders,
      body,
      service: 'bedrock',
      region,
      extraHeadersToIgnore: ignore,
    };
    const recomputed = aws4.sign(request as aws4.Request, credentials);
    const expected = (recomputed.headers as Record<string, string>).Authorization;
    if (expected !== auth) {
      return {
        type: 'InvalidSignatureException',
        message:
          'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
      };
    }
    return undefined;
  }

  function defaultReply(action: string, modelId: string, body: Record<string, unknown>): FakeBedrockReply {
    if (action === 'converse') return { kind: 'json', fixture: 'amazon-bedrock-text.json' };
    if (action === 'converse-stream') return { kind: 'stream', fixture: 'amazon-bedrock-text.chunks.txt' };
    if (action === 'invoke-with-response-stream') {
      return { kind: 'anthropic-stream', fixture: 'anthropic-text.chunks.txt' };
    }
    if (body.anthropic_version !== undefined) {
      return { kind: 'json', body: readAnthropicJsonFixture('anthropic-text.json') };
    }
    // Cohere Embed on Bedrock takes at most 96 texts a call.
    if (Array.isArray(body.texts) && body.texts.length > 96) {
      return {
        kind: 'error',
        status: 400,
        errorType: 'ValidationException',
        message:
          'Malformed input request: #/texts: expected maximum item count: 96, found: ' +
          body.texts.length +
          ', please reformat your input and try again.',
      };
    }
    return { kind: 'json', body: embeddingAnswer(modelId, body) };
  }

  function reply(res: ServerResponse, answer: FakeBedrockReply, action: string): void {
    const requestId = `req-${requests.length}`;
    if (answer.kind === 'error') {
      sendError(res, answer.status, answer.errorType, answer.message, answer.headers);
      return;
    }
    if (answer.kind === 'json') {
      const body = answer.fixture ? readBedrockJsonFixture(answer.fixture) : answer.body;
      const extra: Record<string, string> = {};
      if (action === 'invoke' && body && typeof body === 'object' && 'embeddings' in body) {
        extra['x-amzn-bedrock-input-token-count'] = String(
          (requests[requests.length - 1].body.texts as string[]).join(' ').split(/\s+/).length,
        );
      }
      res.writeHead(answer.status ?? 200, {
        'content-type': 'application/json',
        'x-amzn-requestid': requestId,
        ...extra,
        ...answer.headers,
      });
      res.end(JSON.stringify(body));
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-requestid': requestId,
    });
    if (answer.kind === 'anthropic-stream') {
      const { exception } = answer;
      const recorded = answer.events
        ? answer.events.map((event) => JSON.stringify(event))
        : readAnthropicStreamFixture(answer.fixture ?? 'anthropic-text.chunks.txt');
      for (const [i, line] of withInvocationMetrics(recorded).entries()) {
        if (exception && i === exception.afterEvents) {
          res.write(encodeException(exception.type, exception.message));
          break;
        }
        res.write(encodeInvokeChunk(line));
      }
      res.end();
      return;
    }
    const lines = answer.lines ?? readBedrockStreamFixture(answer.fixture);
    lines.forEach((line, i) => {
      if (answer.exception && i === (answer.exception.afterEvents ?? 0)) {
        res.write(encodeException(answer.exception.type, answer.exception.message));
      }
      if (answer.exception && i >= (answer.exception.afterEvents ?? 0)) return;
      const { eventType, payload } = parseChunkLine(line);
      res.write(encodeEvent(eventType, payload));
    });
    if (answer.exception && (answer.exception.afterEvents ?? 0) >= lines.length) {
      res.write(encodeException(answer.exception.type, answer.exception.message));
    }
    res.end();
  }

  function sendError(
    res: ServerResponse,
    status: number,
    type: string,
    message: string,
    headers: Record<string, string> = {},
  ): void {
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-errortype': `${type}${ERROR_TYPE_SUFFIX}`,
      'x-amzn-requestid': `req-error-${requests.length}`,
      ...headers,
    });
    res.end(JSON.stringify({ message }));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Embedding vectors that are a pure function of the text, so tests can recompute them. */
export function fakeEmbedding(text: string, dimensions = 8): number[] {
  const vector: number[] = [];
  for (let i = 0; i < dimensions; i++) {
    let h = 2166136261 ^ i;
    for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    vector.push(((h >>> 0) % 2000) / 1000 - 1);
  }
  return vector;
}

function embeddingAnswer(modelId: string, body: Record<string, unknown>): unknown {
  if (modelId.includes('titan-embed')) {
    const text = String(body.inputText ?? '');
    return {
      embedding: fakeEmbedding(text, typeof body.dimensions === 'number' ? body.dimensions : 8),
      inputTextTokenCount: text.split(/\s+/).filter(Boolean).length,
    };
  }
  const texts = (body.texts as string[]) ?? [];
  return {
    id: 'emb-fake',
    texts,
    embeddings: texts.map((text) => fakeEmbedding(text)),
    response_type: 'embeddings_floats',
  };
}

/**
 * Bedrock adds its own counts to the last event of an InvokeModelWithResponseStream
 * (`amazon-bedrock-invocationMetrics`): here the input and output the Anthropic events gave.
 */
export function withInvocationMetrics(lines: string[]): string[] {
  let input = 0;
  let output = 0;
  let cacheRead = 0;
  let cacheWrite = 0;
  for (const line of lines) {
    const event = JSON.parse(line) as { message?: { usage?: Counts }; usage?: Counts };
    const usage = event.message?.usage ?? event.usage;
    if (!usage) continue;
    input = Math.max(input, usage.input_tokens ?? 0);
    output = Math.max(output, usage.output_tokens ?? 0);
    cacheRead = Math.max(cacheRead, usage.cache_read_input_tokens ?? 0);
    cacheWrite = Math.max(cacheWrite, usage.cache_creation_input_tokens ?? 0);
  }
  const last = JSON.parse(lines[lines.length - 1]) as Record<string, unknown>;
  if (last.type !== 'message_stop') return lines;
  const metrics = {
    inputTokenCount: input,
    outputTokenCount: output,
    invocationLatency: 420,
    firstByteLatency: 180,
    cacheReadInputTokenCount: cacheRead,
    cacheWriteInputTokenCount: cacheWrite,
  };
  return [...lines.slice(0, -1), JSON.stringify({ ...last, 'amazon-bedrock-invocationMetrics': metrics })];
}

type Counts = Partial<Record<string, number>>;
