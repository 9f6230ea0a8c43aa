/* eslint-disable @typescript-eslint/no-explicit-any -- the fake reads free-form request JSON */
// A fake of Vertex AI on 127.0.0.1: an OAuth2 token endpoint implementing the JWT-bearer grant (RS256
// assertions verified with the test service account's public key), Gemini models under
// /v1/projects/{p}/locations/{r}/publishers/google/models/{m}:generateContent|streamGenerateContent|predict
// and Anthropic models under .../publishers/anthropic/models/{m}:rawPredict|streamRawPredict, and batch
// prediction jobs' create (/v1/projects/{p}/locations/{r}/batchPredictionJobs). Model calls
// must carry a bearer token this fake issued; failures use Google's error shape.
import { createPublicKey, createVerify, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { openAPIDocumentPath } from '../../helpers/openapi.js';
import { readGoogleFixture } from '../google/fixtures.js';
import {
  answerGenerate,
  parseJson,
  readBody,
  sendGoogleError,
  sendJson,
  type GeminiFakeBehaviour,
  type RecordedRequest,
} from '../google/gemini-responder.js';

export type AnthropicFakeBehaviour =
  /** Replay a recorded Anthropic sample (`<name>.json` or `<name>.chunks.txt`). */
  | { anthropicFixture: string }
  /** Answer with this Anthropic message (a plain call) or these Anthropic events (a stream). */
  | { anthropicBody: unknown }
  | { anthropicEvents: Array<{ type: string }> }
  /** Answer with Anthropic's error shape. */
  | { anthropicError: { status: number; type: string; message: string } };

export type VertexFakeBehaviour = GeminiFakeBehaviour | AnthropicFakeBehaviour;

function isAnthropicBehaviour(behaviour: VertexFakeBehaviour): behaviour is AnthropicFakeBehaviour {
  return Object.keys(behaviour).some((key) => key.startsWith('anthropic'));
}

export interface TestServiceAccount {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  token_uri: string;
}

export interface FakeVertex {
  /** `http://127.0.0.1:PORT`: Vertex's base URL, to use as `custom_host`. */
  url: string;
  /** A service account whose key the fake trusts and whose `token_uri` is the fake's token endpoint. */
  serviceAccount: TestServiceAccount;
  requests: RecordedRequest[];
  /** Token exchanges answered, successful or not. */
  tokenRequests: number;
  /** The most embedding (`:predict`) calls that were in flight at once. */
  predictPeak: number;
  /** Access tokens issued so far. */
  issuedTokens: string[];
  enqueue(...behaviours: VertexFakeBehaviour[]): void;
  /** Makes the token endpoint refuse every assertion (as for a deleted or disabled key). */
  refuseTokens(refuse: boolean): void;
  close(): Promise<void>;
}

const GOOGLE_TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
const MODEL_PATH =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):(\w+)$/;

/** `projects.locations.batchPredictionJobs.create`. */
const BATCH_JOBS_PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/batchPredictionJobs$/;
/** The number Vertex writes a project's resource names with, whatever name the call used. */
const PROJECT_NUMBER = '123456789012';

function anthropicFixture(name: string): string {
  return readFileSync(
    path.join(path.dirname(openAPIDocumentPath()), 'provider-fixtures', 'anthropic', name),
    'utf8',
  );
}

export async function startFakeVertex(options: { tokenLifetimeSeconds?: number } = {}): Promise<FakeVertex> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const trustedKey: KeyObject = createPublicKey(publicKey.export({ type: 'spki', format: 'pem' }));
  const requests: RecordedRequest[] = [];
  const queue: VertexFakeBehaviour[] = [];
  const issued = new Set<string>();
  const state = { tokenRequests: 0, refuse: false, counter: 0, predicting: 0, predictPeak: 0 };
  // Known once the port is: its token_uri points at this server.
  const trusted: { account?: TestServiceAccount } = {};

  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const url = new URL(req.url ?? '/', 'http://fake');
      if (url.pathname === '/token') return token(res, raw);
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

  /** The OAuth2 JWT-bearer grant (RFC 7523) as Google's token endpoint answers it. */
  function token(res: ServerResponse, raw: string): void {
    state.tokenRequests++;
    const form = new URLSearchParams(raw);
    const refuse = (description: string) =>
      sendJson(res, 400, { error: 'invalid_grant', error_description: description });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      return sendJson(res, 400, {
        error: 'unsupported_grant_type',
        error_description: 'Invalid grant_type.',
      });
    }
    const assertion = form.get('assertion') ?? '';
    const [header, payload, signature] = assertion.split('.');
    if (!header || !payload || !signature) return refuse('Invalid JWT: malformed assertion.');
    const verifier = createVerify('RSA-SHA256');
    verifier.update(`${header}.${payload}`);
    if (!verifier.verify(trustedKey, Buffer.from(signature, 'base64url')))
      return refuse('Invalid JWT Signature.');
    const head = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg?: string };
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, any>;
    const now = Math.floor(Date.now() / 1000);
    if (head.alg !== 'RS256') return refuse('Invalid JWT: alg must be RS256.');
    if (claims.iss !== trusted.account?.client_email) return refuse('Invalid JWT: unknown issuer.');
    if (claims.aud !== GOOGLE_TOKEN_AUDIENCE)
      return refuse('Invalid JWT: audience is not the token endpoint.');
    if (
      typeof claims.exp !== 'number' ||
      claims.exp < now ||
      typeof claims.iat !== 'number' ||
      claims.iat > now + 60
    ) {
      return refuse(
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.',
      );
    }
    if (
      !String(claims.scope ?? '')
        .split(' ')
        .includes('https://www.googleapis.com/auth/cloud-platform')
    ) {
      return refuse('Invalid JWT: the cloud-platform scope is missing.');
    }
    if (state.refuse) return refuse('Invalid grant: account not found');
    const accessToken = `ya29.fake-${++state.counter}-${Date.now()}`;
    issued.add(accessToken);
    sendJson(res, 200, {
      access_token: accessToken,
      expires_in: options.tokenLifetimeSeconds ?? 3599,
      token_type: 'Bearer',
    });
  }

  function handle(req: IncomingMessage, res: ServerResponse, request: RecordedRequest): void {
    const auth = req.headers.authorization ?? '';
    const bearer = auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : '';
    if (!issued.has(bearer)) {
      return sendGoogleError(
        res,
        401,
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
        'UNAUTHENTICATED',
      );
    }
    const batch = BATCH_JOBS_PATH.exec(request.path);
    if (req.method === 'POST' && batch) return createBatchJob(res, batch[2], request.body);
    const match = MODEL_PATH.exec(request.path);
    if (req.method !== 'POST' || !match)
      return sendGoogleError(res, 404, `Requested entity was not found.`, 'NOT_FOUND');
    const [, , , publisher, model, action] = match;
    if (publisher === 'anthropic') return anthropic(res, action, request.body);
    if (action === 'predict') return predict(res, model, request.body);
    if (action === 'embedContent') return embedContent(res, model, request.body);
    if (action === 'streamGenerateContent' && request.query.get('alt') !== 'sse') {
      return sendGoogleError(res, 400, 'fake: only alt=sse streams are served', 'INVALID_ARGUMENT');
    }
    if (action !== 'generateContent' && action !== 'streamGenerateContent') {
      return sendGoogleError(res, 400, `fake: unknown method ${action}`, 'INVALID_ARGUMENT');
    }
    const next = queue.shift();
    if (next && isAnthropicBehaviour(next)) {
      return sendGoogleError(res, 500, 'fake: an Anthropic answer was scripted for a Gemini call');
    }
    return answerGenerate(res, action === 'streamGenerateContent', next);
  }

  /**
   * Vertex text embeddings: the recorded sample's shape, one prediction per instance. Gemini embedding
   * models take one instance per call, the others 250, and refuse more as Vertex does, or more than 20,000
   * tokens in all. A Gemini embedding
   * model's answer is made from its one text (values[0] its length, token_count its words) and comes after
   * that many milliseconds, so answers to parallel calls arrive out of order.
   */
  function predict(res: ServerResponse, model: string, body: unknown): void {
    const instances = (body as { instances?: Array<{ content?: unknown }> } | undefined)?.instances;
    if (!Array.isArray(instances) || instances.length === 0) {
      return sendGoogleError(
        res,
        400,
        'Invalid request: instances must be a non-empty list.',
        'INVALID_ARGUMENT',
      );
    }
    const single = model.startsWith('gemini-embedding');
    const allowed = single ? 1 : 250;
    if (instances.length > allowed) {
      return sendGoogleError(
        res,
        400,
        `${allowed} instance(s) is allowed per prediction. Actual: ${instances.length}`,
        'INVALID_ARGUMENT',
      );
    }
    // Vertex refuses a call over 20,000 input tokens in all; here a word stands for a token.
    const tokens = instances.reduce(
      (sum, instance) => sum + String(instance.content ?? '').split(' ').length,
      0,
    );
    if (tokens > 20_000) {
      return sendGoogleError(
        res,
        400,
        `Unable to submit request because the input token count is ${tokens} but the model supports up to 20000. Reduce the input token count and try again.`,
        'INVALID_ARGUMENT',
      );
    }
    const recorded = readGoogleFixture('google-vertex-embedding.json', 'google-vertex') as {
      predictions: Array<{ embeddings: { values: number[]; statistics: Record<string, unknown> } }>;
    };
    if (!single) {
      const predictions = instances.map((_, i) => recorded.predictions[i % recorded.predictions.length]);
      return sendJson(res, 200, { predictions, metadata: { billableCharacterCount: 35 } });
    }
    const text = String(instances[0].content ?? '');
    // A text the test marks stands for a call Vertex refuses for quota.
    if (text === 'over quota') {
      return sendGoogleError(
        res,
        429,
        'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model with base model: gemini-embedding. Please submit a quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai.',
        'RESOURCE_EXHAUSTED',
      );
    }
    const [first] = recorded.predictions;
    const prediction = {
      embeddings: {
        statistics: { ...first.embeddings.statistics, token_count: text.split(' ').length },
        values: [text.length, ...first.embeddings.values.slice(1)],
      },
    };
    state.predictPeak = Math.max(state.predictPeak, ++state.predicting);
    setTimeout(() => {
      state.predicting--;
      sendJson(res, 200, { predictions: [prediction], metadata: { billableCharacterCount: text.length } });
    }, text.length);
  }

  /**
   * The Gemini embedding models after gemini-embedding-001: one content a call, and not through :predict. The
   * vector is made from the text (values[0] its length), promptTokenCount its words.
   */
  function embedContent(res: ServerResponse, model: string, body: unknown): void {
    if (!model.startsWith('gemini-embedding-2')) {
      return sendGoogleError(
        res,
        400,
        `fake: ${model} is not served through embedContent`,
        'INVALID_ARGUMENT',
      );
    }
    const parts = (body as { content?: { parts?: Array<{ text?: unknown }> } } | undefined)?.content?.parts;
    if (!Array.isArray(parts) || parts.length !== 1) {
      return sendGoogleError(res, 400, 'fake: one content with one text part', 'INVALID_ARGUMENT');
    }
    const text = String(parts[0].text ?? '');
    const words = text.split(' ').length;
    sendJson(res, 200, {
      embedding: { values: [text.length, 0.25, -0.5] },
      usageMetadata: { promptTokenCount: words, totalTokenCount: words },
    });
  }

  /** A BatchPredictionJob as Vertex answers its create: named under the project's number, pending. */
  function createBatchJob(res: ServerResponse, location: string, body: any): void {
    if (typeof body?.model !== 'string' || typeof body?.inputConfig?.instancesFormat !== 'string') {
      return sendGoogleError(res, 400, 'Request contains an invalid argument.', 'INVALID_ARGUMENT');
    }
    const now = new Date().toISOString();
    sendJson(res, 200, {
      name: `projects/${PROJECT_NUMBER}/locations/${location}/batchPredictionJobs/${4311187542433153024n + BigInt(++state.counter)}`,
      displayName: body.displayName,
      model: body.model,
      inputConfig: body.inputConfig,
      outputConfig: body.outputConfig,
      state: 'JOB_STATE_PENDING',
      createTime: now,
      updateTime: now,
      modelVersionId: '1',
    });
  }

  function anthropic(res: ServerResponse, action: string, body: any): void {
    if (body?.anthropic_version !== 'vertex-2023-10-16' || 'model' in (body ?? {})) {
      return sendJson(res, 400, {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'anthropic_version: vertex-2023-10-16 is required; model must not be set',
        },
      });
    }
    const next = queue.shift();
    if (next && 'anthropicError' in next) {
      const { status, type, message } = next.anthropicError;
      return sendJson(res, status, { type: 'error', error: { type, message } });
    }
    if (next && 'anthropicBody' in next) {
      if (action !== 'rawPredict') return sendGoogleError(res, 500, 'fake: a body scripted for a stream');
      return sendJson(res, 200, next.anthropicBody);
    }
    const name = next && 'anthropicFixture' in next ? next.anthropicFixture : 'anthropic-text';
    if (action === 'streamRawPredict') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const lines =
        next && 'anthropicEvents' in next
          ? next.anthropicEvents.map((event) => JSON.stringify(event))
          : anthropicFixture(`${name}.chunks.txt`)
              .split('\n')
              .filter((l) => l.trim());
      for (const line of lines) {
        const event = JSON.parse(line) as { type: string };
        res.write(`event: ${event.type}\ndata: ${line}\n\n`);
      }
      return void res.end();
    }
    if (action !== 'rawPredict')
      return sendGoogleError(res, 400, `fake: unknown method ${action}`, 'INVALID_ARGUMENT');
    if (next && 'anthropicEvents' in next)
      return sendGoogleError(res, 500, 'fake: events scripted for a plain call');
    sendJson(res, 200, JSON.parse(anthropicFixture(`${name}.json`)));
  }

  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const serviceAccount: TestServiceAccount = {
    type: 'service_account',
    project_id: 'test-project',
    private_key_id: 'fake-key-1',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: 'gateway-test@test-project.iam.gserviceaccount.com',
    client_id: '100000000000000000001',
    token_uri: `${url}/token`,
  };
  trusted.account = serviceAccount;

  return {
    url,
    serviceAccount,
    requests,
    get tokenRequests() {
      return state.tokenRequests;
    },
    get predictPeak() {
      return state.predictPeak;
    },
    get issuedTokens() {
      return [...issued];
    },
    enqueue: (...behaviours) => queue.push(...behaviours),
    refuseTokens: (refuse) => {
      state.refuse = refuse;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
