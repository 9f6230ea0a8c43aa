/* eslint-disable @typescript-eslint/no-explicit-any -- the fake reads free-form request JSON */
// A fake of the Gemini API (generativelanguage.googleapis.com) on 127.0.0.1: generateContent,
// streamGenerateContent?alt=sse and batchEmbedContents under /v1beta, answering with the recorded samples of
// provider-fixtures/google/, checking `x-goog-api-key` as Google does, and failing in Google's error shape.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  answerGenerate,
  fakeEmbedding,
  parseJson,
  readBody,
  sendGoogleError,
  sendJson,
  type GeminiFakeBehaviour,
  type RecordedRequest,
} from './gemini-responder.js';

export type { GeminiFakeBehaviour, RecordedRequest } from './gemini-responder.js';

export interface FakeGoogle {
  /** `http://127.0.0.1:PORT`: the Gemini API's base URL, to use as `custom_host`. */
  url: string;
  apiKey: string;
  requests: RecordedRequest[];
  /** Scripts the next generate calls, in order; unscripted calls get the recorded text answer. */
  enqueue(...behaviours: GeminiFakeBehaviour[]): void;
  close(): Promise<void>;
}

const KNOWN_MEDIA_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/webp',
  'image/heic',
  'image/heif',
  'image/gif',
  'application/pdf',
  'audio/wav',
  'audio/mp3',
  'audio/mpeg',
  'audio/aiff',
  'audio/aac',
  'audio/ogg',
  'audio/flac',
  'text/plain',
  'video/mp4',
]);

const MODEL_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/;

export async function startFakeGoogle(options: { apiKey?: string } = {}): Promise<FakeGoogle> {
  const apiKey = options.apiKey ?? 'AIza-fake-test-key';
  const requests: RecordedRequest[] = [];
  const queue: GeminiFakeBehaviour[] = [];

  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const request: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: parseJson(raw),
      };
      requests.push(request);
      handle(req, res, request);
    });
  });

  function handle(req: IncomingMessage, res: ServerResponse, request: RecordedRequest): void {
    // Google's own answers: no key → 403 PERMISSION_DENIED; a wrong key → 400 API_KEY_INVALID.
    const key = req.headers['x-goog-api-key'] ?? request.query.get('key');
    if (!key) {
      return sendGoogleError(
        res,
        403,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
        'PERMISSION_DENIED',
      );
    }
    if (key !== apiKey) {
      return sendGoogleError(
        res,
        400,
        'API key not valid. Please pass a valid API key.',
        'INVALID_ARGUMENT',
        [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'API_KEY_INVALID',
            domain: 'googleapis.com',
          },
        ],
      );
    }
    const match = MODEL_PATH.exec(request.path);
    if (req.method !== 'POST' || !match) {
      return sendGoogleError(res, 404, `Requested entity was not found: ${request.path}`, 'NOT_FOUND');
    }
    const [, model, action] = match;
    if (action === 'batchEmbedContents') return embed(res, model, request.body);
    if (action === 'streamGenerateContent' && request.query.get('alt') !== 'sse') {
      return sendGoogleError(res, 400, 'fake: only alt=sse streams are served', 'INVALID_ARGUMENT');
    }
    // Google's own refusal of a text part with no text.
    const sent = request.body as {
      contents?: Array<{ parts?: Array<Record<string, any>> }>;
      systemInstruction?: { parts?: Array<Record<string, any>> };
    };
    const allParts = [
      ...(sent.contents ?? []).flatMap((content) => content.parts ?? []),
      ...(sent.systemInstruction?.parts ?? []),
    ];
    if (allParts.some((part) => part.text === '' && !part.thoughtSignature)) {
      return sendGoogleError(
        res,
        400,
        'Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini',
        'INVALID_ARGUMENT',
      );
    }
    const schemaFault = schemaFaultOf(request.body);
    if (schemaFault) return sendGoogleError(res, 400, schemaFault, 'INVALID_ARGUMENT');
    // Google's own refusal of a media type it does not know (image/jpg is not one: image/jpeg is).
    const contents = (request.body as { contents?: Array<{ parts?: Array<Record<string, any>> }> }).contents;
    for (const part of (contents ?? []).flatMap((content) => content.parts ?? [])) {
      const mimeType = part.inlineData?.mimeType ?? part.fileData?.mimeType;
      if (typeof mimeType === 'string' && !KNOWN_MEDIA_TYPES.has(mimeType)) {
        return sendGoogleError(res, 400, `Unsupported MIME type: ${mimeType}`, 'INVALID_ARGUMENT');
      }
    }
    return answerGenerate(res, action === 'streamGenerateContent', queue.shift());
  }

  function embed(res: ServerResponse, model: string, body: unknown): void {
    const requests = (body as { requests?: Array<Record<string, any>> } | undefined)?.requests;
    if (!Array.isArray(requests) || requests.length === 0) {
      return sendGoogleError(
        res,
        400,
        '* BatchEmbedContentsRequest.requests: contents is not specified',
        'INVALID_ARGUMENT',
      );
    }
    if (requests.length > 100) {
      // Google's own limit on one batch, and its words for it.
      return sendGoogleError(
        res,
        400,
        '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch',
        'INVALID_ARGUMENT',
      );
    }
    for (const r of requests) {
      if (r.model !== `models/${model}`) {
        return sendGoogleError(
          res,
          400,
          `* BatchEmbedContentsRequest.requests[0].model: model must match ${model}`,
        );
      }
    }
    sendJson(res, 200, {
      embeddings: requests.map((r) => ({
        values: fakeEmbedding(
          String(r.content?.parts?.[0]?.text ?? ''),
          typeof r.outputDimensionality === 'number' ? r.outputDimensionality : 8,
        ),
      })),
    });
  }

  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    enqueue: (...behaviours) => queue.push(...behaviours),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Google's own refusals of a Schema (response_schema, function parameters): `properties` on a type other
 * than OBJECT, and an OBJECT whose `properties` are empty.
 */
function schemaFaultOf(body: unknown): string | undefined {
  const request = body as {
    generationConfig?: { responseSchema?: unknown };
    tools?: Array<{ functionDeclarations?: Array<{ parameters?: unknown }> }>;
  };
  const roots: Array<[string, unknown]> = [
    ['GenerateContentRequest.generation_config.response_schema', request?.generationConfig?.responseSchema],
  ];
  (request?.tools ?? []).forEach((tool, i) =>
    (tool.functionDeclarations ?? []).forEach((declaration, j) =>
      roots.push([
        `GenerateContentRequest.tools[${i}].function_declarations[${j}].parameters`,
        declaration.parameters,
      ]),
    ),
  );
  const walk = (path: string, node: unknown): string | undefined => {
    if (typeof node !== 'object' || node === null) return undefined;
    const schema = node as Record<string, any>;
    if (schema.properties !== undefined) {
      if (schema.type !== 'OBJECT') return `* ${path}.properties: only allowed for OBJECT type\n`;
      if (Object.keys(schema.properties).length === 0) {
        return `* ${path}.properties: should be non-empty for OBJECT type\n`;
      }
      for (const [name, child] of Object.entries(schema.properties)) {
        const fault = walk(`${path}.properties["${name}"]`, child);
        if (fault) return fault;
      }
    }
    if (schema.type === 'ARRAY') {
      const items = schema.items as Record<string, unknown> | undefined;
      if (!items || (items.type === undefined && items.anyOf === undefined))
        return `* ${path}.items: missing field.\n`;
    }
    if (schema.items) return walk(`${path}.items`, schema.items);
    for (const [k, branch] of ((schema.anyOf as unknown[]) ?? []).entries()) {
      const fault = walk(`${path}.any_of[${k}]`, branch);
      if (fault) return fault;
    }
    return undefined;
  };
  for (const [path, schema] of roots) {
    const fault = walk(path, schema);
    if (fault) return fault;
  }
  return undefined;
}
