/**
 * Hostile input at every client-facing operation beyond the three JSON model endpoints fuzz.test.ts
 * covers: the Responses API, Anthropic's Messages API, stored prompts, files, batches, fine-tuning jobs
 * and the management API. The operations, their body schemas and their query parameters come from the
 * gateway's own OpenAPI document, so a new operation is swept without being listed here. Junk at every
 * body key (top-level and nested), non-object and hostile bodies, odd path ids, junk query parameters
 * and gateway headers, and broken multipart uploads must each be a 4xx (never a 5xx, never a hang) in
 * the OpenAI error shape (Anthropic's on /v1/messages), naming the offending field where there is one
 * and echoing no secret; and the gateway must still serve afterwards. The sweep runs on SQLite and on
 * PostgreSQL, which holds less (U+0000 in text, integers past a column's range).
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Ajv } from 'ajv';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/server/openapi.js';
import { MANAGEMENT_OPERATIONS } from '../../src/server/routes/management/operations.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { describeWithPostgres, dropSchema, freshSchemaName, postgresUrl } from '../helpers/postgres.js';
import { CHAT_BODY, PROVIDER_KEY, expectOpenAIError, rawExchange, sleep, type ErrorBody } from './support.js';

const BODY_LIMIT = 65_536;
const VIRTUAL_KEY_SECRET = 'sk-fuzz-virtual-key-secret-0123456789';
/** No answer may take longer: a hang is a failure, not a slow test. */
const ANSWER_TIMEOUT_MS = 10_000;

let gateway: TestGateway;
let fake: FakeUpstream;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * One request with node:http, which sends the path exactly as given (fetch would resolve `..` and
 * re-encode), and fails on a hang.
 */
function send(
  method: string,
  path: string,
  options: { body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const { hostname, port } = new URL(gateway.origin);
  const body = options.body;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port: Number(port),
        method,
        path: `/v1${path}`,
        headers: {
          'x-gateway-api-key': gateway.adminKey,
          'x-gateway-virtual-key': 'fuzz-openai',
          ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }),
          ...options.headers,
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => parts.push(chunk));
        res.on('end', () => {
          const answer = {
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(parts).toString(),
          };
          noteWorkStarted(method, path, answer);
          resolve(answer);
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(ANSWER_TIMEOUT_MS, () => {
      req.destroy(new Error(`no answer in ${ANSWER_TIMEOUT_MS} ms: ${method} ${path}`));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The batches and background responses the gateway took: it calls the provider for them after it has
 * answered, so a test that made one waits for it to end (`settled`), or its call reaches the fake provider
 * during a later test (one counting the calls that reached the provider sees one too many).
 */
const workStarted: Array<{ path: string; id: string }> = [];

function noteWorkStarted(method: string, path: string, answer: Answer): void {
  if (method !== 'POST' || answer.status !== 200) return;
  if (path !== '/batches' && path !== '/responses') return;
  let created: { id?: unknown; background?: unknown };
  try {
    created = JSON.parse(answer.text) as typeof created;
  } catch {
    return; // A streamed response: it ended with the answer.
  }
  if (typeof created.id !== 'string') return;
  if (path === '/batches' || created.background === true) workStarted.push({ path, id: created.id });
}

const ENDED = new Set(['completed', 'failed', 'cancelled', 'expired', 'incomplete']);

/** Waits for every batch and background response taken so far to end (a deleted one has ended too). */
async function settled(): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (workStarted.length > 0) {
    const { path, id } = workStarted[0];
    const answer = await send('GET', `${path}/${encodeURIComponent(id)}`);
    const status =
      answer.status === 200 ? (JSON.parse(answer.text) as { status?: string }).status : undefined;
    if (answer.status === 404 || (status !== undefined && ENDED.has(status))) {
      workStarted.shift();
      continue;
    }
    if (Date.now() > deadline) {
      workStarted.shift(); // Reported once, not again after every later test.
      throw new Error(`${path}/${id} has not ended: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    await sleep(25);
  }
}

function sendJson(method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  return send(method, path, {
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** Anthropic's error object, which /v1/messages answers every failure with. */
function isAnthropicError(body: unknown): boolean {
  const error = (body as { type?: unknown; error?: { type?: unknown; message?: unknown } }).error;
  return (
    (body as { type?: unknown }).type === 'error' &&
    typeof error?.type === 'string' &&
    typeof error.message === 'string' &&
    error.message.length > 0
  );
}

/**
 * What is wrong with an answer to hostile input: a 5xx, a status outside 4xx (unless `allowOk`), a body
 * that is not the error object, or a secret in it. Empty when the answer is right.
 */
function problemsOf(path: string, answer: Answer, label: string, allowOk = false): string[] {
  const problems: string[] = [];
  const shown = `${label} → ${answer.status} ${answer.text.slice(0, 200)}`;
  for (const secret of [gateway.adminKey, VIRTUAL_KEY_SECRET, PROVIDER_KEY]) {
    if (answer.text.includes(secret)) problems.push(`secret echoed: ${shown}`);
  }
  if (answer.status >= 500) return [...problems, `5xx: ${shown}`];
  if (answer.status >= 200 && answer.status < 300 && allowOk) return problems;
  if (answer.status < 400) return [...problems, `not a 4xx: ${shown}`];
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return [...problems, `not JSON: ${shown}`];
  }
  if (path.startsWith('/messages')) {
    if (!isAnthropicError(body)) problems.push(`not Anthropic's error object: ${shown}`);
    return problems;
  }
  try {
    expectOpenAIError(body);
  } catch {
    problems.push(`not the OpenAI error object: ${shown}`);
  }
  return problems;
}

function errorOf(answer: Answer): ErrorBody['error'] | undefined {
  try {
    return (JSON.parse(answer.text) as ErrorBody).error;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------
// The operations, from the OpenAPI document.

interface Op {
  method: string;
  /** Under /v1, with `{param}` placeholders. */
  path: string;
  /** The JSON schema of its body, when it takes one. */
  schema?: { properties?: Record<string, unknown> };
  query: Array<{ name: string; schema: Record<string, unknown> }>;
}

const DOCUMENT = buildOpenApiDocument() as {
  paths: Record<string, Record<string, Record<string, unknown>>>;
};

/** Runs `task` over `items`, 32 at a time: fast, without a thousand sockets at once. */
async function inBatches<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += 32) await Promise.all(items.slice(i, i + 32).map(task));
}

/** Covered by fuzz.test.ts. */
const COVERED = new Set(['/chat/completions', '/completions', '/embeddings']);

const OPERATIONS: Op[] = Object.entries(DOCUMENT.paths)
  .flatMap(([fullPath, item]) =>
    Object.entries(item).map(([method, op]) => {
      const body = op.requestBody as
        { content: { 'application/json': { schema: Op['schema'] } } } | undefined;
      const parameters = (op.parameters ?? []) as Array<{ name: string; in: string; schema: object }>;
      return {
        method: method.toUpperCase(),
        path: fullPath.slice('/v1'.length),
        schema: body?.content['application/json'].schema,
        query: parameters
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, schema: p.schema as Record<string, unknown> })),
      };
    }),
  )
  .filter((op) => !COVERED.has(op.path));

const opName = (op: Op) => `${op.method} ${op.path}`;

/** The operations only an admin key may call. */
const MANAGEMENT = new Set(MANAGEMENT_OPERATIONS.map((op) => `${op.method.toUpperCase()} ${op.path}`));

/** An independent checker of bodies: Ajv over the document's own schemas. */
const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: false });
ajv.addSchema(DOCUMENT, 'doc');
function bodyChecker(op: Op): (body: unknown) => boolean {
  const pointer = `/paths/${`/v1${op.path}`.replaceAll('~', '~0').replaceAll('/', '~1')}/${op.method.toLowerCase()}/requestBody/content/application~1json/schema`;
  const check = ajv.compile({ $ref: `doc#${pointer}` });
  return (body) => check(body);
}

/** What a `$ref` of the document points at. */
function resolve(schema: Record<string, unknown>): Record<string, unknown> {
  let node = schema;
  for (let i = 0; i < 5 && typeof node.$ref === 'string' && node.$ref.startsWith('#/'); i++) {
    let target: unknown = DOCUMENT;
    for (const part of node.$ref.slice(2).split('/')) target = (target as Record<string, unknown>)[part];
    node = target as Record<string, unknown>;
  }
  return node;
}

/** Opaque objects of management bodies that the gateway checks against a schema of the document. */
const CHECKED_AS: Record<string, string> = {
  config: '#/components/schemas/Config',
  guardrail: '#/components/schemas/Guardrail',
};

/**
 * The dotted keys below the top level of a body schema, two levels down (an array's items as index 0),
 * through unions; at most 200 per operation so the sweep stays fast.
 */
function nestedKeys(op: Op): string[] {
  const out = new Set<string>();
  const walk = (raw: unknown, prefix: string, depth: number) => {
    if (depth > 5 || raw === null || typeof raw !== 'object') return;
    const schema = resolve(raw as Record<string, unknown>);
    for (const variant of [...((schema.anyOf ?? schema.oneOf ?? []) as unknown[])])
      walk(variant, prefix, depth);
    if (schema.items && typeof schema.items === 'object') walk(schema.items, `${prefix}.0`, depth + 1);
    for (const [key, child] of Object.entries((schema.properties ?? {}) as Record<string, unknown>)) {
      const dotted = prefix ? `${prefix}.${key}` : key;
      if (prefix) out.add(dotted);
      walk(depth === 0 && CHECKED_AS[key] ? { $ref: CHECKED_AS[key] } : child, dotted, depth + 1);
    }
  };
  walk(op.schema, '', 0);
  return [...out].slice(0, 200);
}

/** A copy of `base` with `value` at the dotted key, making (or replacing with) the containers on the way. */
function withValueAt(base: Record<string, unknown>, dotted: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(base);
  const parts = dotted.split('.');
  let node: Record<string, unknown> = copy;
  parts.slice(0, -1).forEach((part, i) => {
    const wantArray = /^\d+$/.test(parts[i + 1]);
    const current = node[part];
    const fits = wantArray
      ? Array.isArray(current)
      : current !== null && typeof current === 'object' && !Array.isArray(current);
    if (!fits) node[part] = wantArray ? [] : {};
    node = node[part] as Record<string, unknown>;
  });
  node[parts.at(-1)!] = value;
  return copy;
}

// ---------------------------------------------------------------------------------------------------
// Resources the operations act on, made in beforeAll, and a valid body for every operation that takes one.

const ids: Record<string, string> = {};
/** A key of the member role, made in beforeAll. */
let memberKey = '';

/** The value of each path parameter: a real resource, so that a body reaches its checks. */
function realPath(op: Op): string {
  return op.path.replace(/\{(\w+)\}/g, (_all, name: string) => {
    const resource = op.path.startsWith('/prompts/partials') ? 'partials' : op.path.split('/')[1];
    const key = `${resource}:${name}`;
    return encodeURIComponent(ids[key] ?? ids[name] ?? 'missing');
  });
}

function validBody(op: Op): Record<string, unknown> {
  const name = opName(op);
  const bodies: Record<string, Record<string, unknown>> = {
    'POST /messages': {
      model: 'gpt-4o-mini',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hello' }],
    },
    'POST /messages/count_tokens': { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
    'POST /responses': { model: 'gpt-4o-mini', input: 'hello' },
    'POST /prompts/{promptId}/completions': { variables: { name: 'fuzz' } },
    'POST /prompts/{promptId}/chat/completions': { variables: { name: 'fuzz' } },
    'POST /prompts/{promptId}/render': { variables: { name: 'fuzz' } },
    'POST /batches': {
      input_file_id: ids.batch_file,
      endpoint: '/v1/chat/completions',
      completion_window: 'immediate',
    },
    'POST /fine_tuning/jobs': { model: 'gpt-4o-mini', training_file: ids.training_file },
    'POST /api-keys': { name: 'fuzz key', role: 'member' },
    'PATCH /api-keys/{id}': { name: 'fuzz key renamed' },
    // Junk that is a valid slug (`constructor`) makes a key: one that reaches the fake provider.
    'POST /virtual-keys': {
      slug: 'fuzz-vk-new',
      provider: 'openai',
      api_key: VIRTUAL_KEY_SECRET,
      custom_host: fake.url,
    },
    'PATCH /virtual-keys/{slug}': { name: 'renamed' },
    'POST /providers': {
      slug: 'fuzz-provider-new',
      provider: 'openai',
      api_key: VIRTUAL_KEY_SECRET,
      custom_host: fake.url,
    },
    'PATCH /providers/{slug}': { name: 'renamed' },
    'POST /configs': { slug: 'fuzz-config-new', config: { virtual_key: 'fuzz-openai' } },
    'PATCH /configs/{id}': { name: 'renamed' },
    'POST /guardrails': { slug: 'fuzz-guardrail-new', guardrail: GUARDRAIL },
    'PATCH /guardrails/{id}': { name: 'renamed' },
    'POST /prompts': {
      slug: 'fuzz-prompt-new',
      string: PROMPT_TEMPLATE,
      parameters: { model: 'gpt-4o-mini' },
    },
    'PUT /prompts/{id}': { string: PROMPT_TEMPLATE, parameters: { model: 'gpt-4o-mini' } },
    'PUT /prompts/{id}/publish': { version: 1 },
    'POST /prompts/partials': { slug: 'fuzz-partial-new', string: 'partial text' },
    'PUT /prompts/partials/{id}': { string: 'partial text' },
    'PUT /prompts/partials/{id}/publish': { version: 1 },
    'POST /policies/rate-limits': POLICY,
    'PUT /policies/rate-limits/{id}': { value: 1000 },
    'PATCH /policies/rate-limits/{id}': { value: 1000 },
    'POST /workspaces': { name: 'fuzz workspace new', slug: 'fuzz-ws-new' },
  };
  const body = bodies[name];
  if (!body) throw new Error(`no valid body for ${name}: add one`);
  return body;
}

const GUARDRAIL = { 'default.contains': { operator: 'none', words: ['forbidden'] }, deny: true };
const PROMPT_TEMPLATE = JSON.stringify([{ role: 'user', content: 'hello {{name}}' }]);
const POLICY = {
  conditions: [{ key: 'api_key', value: '*' }],
  group_by: [{ key: 'api_key' }],
  type: 'requests',
  unit: 'rpm',
  value: 100_000,
};
const TRAINING = [
  {
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ],
  },
  {
    messages: [
      { role: 'user', content: 'bye' },
      { role: 'assistant', content: 'goodbye' },
    ],
  },
]
  .map((line) => JSON.stringify(line))
  .join('\n');
const BATCH_LINE = JSON.stringify({
  custom_id: 'a',
  method: 'POST',
  url: '/v1/chat/completions',
  body: CHAT_BODY,
});

function multipart(
  parts: Array<{ name: string; value: string | Buffer; filename?: string; type?: string }>,
  boundary = 'fuzzboundary',
): { body: Buffer; headers: Record<string, string> } {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n` +
          (part.type ? `Content-Type: ${part.type}\r\n` : '') +
          '\r\n',
      ),
      Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    body: Buffer.concat(chunks),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

async function upload(content: string, purpose: string, filename = 'data.jsonl'): Promise<Answer> {
  const form = multipart([
    { name: 'purpose', value: purpose },
    { name: 'file', value: content, filename, type: 'application/jsonl' },
  ]);
  return send('POST', '/files', form);
}

async function created(answer: Promise<Answer>, field = 'id'): Promise<string> {
  const result = await answer;
  expect(result.status, result.text).toBe(200);
  return (JSON.parse(result.text) as Record<string, string>)[field];
}

/** The whole sweep against a gateway on `store` (PostgreSQL holds less than SQLite: U+0000, big integers). */
function sweep(store: 'sqlite' | 'postgres'): void {
  const schema = freshSchemaName('fuzz_endpoints');
  beforeAll(async () => {
    fake = await startFakeOpenAI({ name: 'fuzz' });
    gateway = await startGateway({
      env: { GATEWAY_BODY_LIMIT_BYTES: String(BODY_LIMIT) },
      ...(store === 'postgres' && { postgres: { url: postgresUrl(), schema } }),
    });
    await created(
      sendJson('POST', '/virtual-keys', {
        slug: 'fuzz-openai',
        provider: 'openai',
        api_key: VIRTUAL_KEY_SECRET,
        custom_host: fake.url,
      }),
    );
    // The routes that change or delete a virtual key act on one no call uses.
    await created(
      sendJson('POST', '/virtual-keys', {
        slug: 'fuzz-spare',
        provider: 'openai',
        api_key: VIRTUAL_KEY_SECRET,
      }),
    );
    ids['virtual-keys:slug'] = 'fuzz-spare';
    await created(
      sendJson('POST', '/providers', {
        slug: 'fuzz-catalog',
        provider: 'openai',
        api_key: VIRTUAL_KEY_SECRET,
      }),
    );
    ids['providers:slug'] = 'fuzz-catalog';
    ids['configs:id'] = await created(
      sendJson('POST', '/configs', { slug: 'fuzz-config', config: { virtual_key: 'fuzz-openai' } }),
    );
    ids['guardrails:id'] = await created(
      sendJson('POST', '/guardrails', { slug: 'fuzz-guardrail', guardrail: GUARDRAIL }),
    );
    ids['partials:id'] = await created(
      sendJson('POST', '/prompts/partials', { slug: 'fuzz-partial', string: 'partial text' }),
    );
    ids['prompts:id'] = await created(
      sendJson('POST', '/prompts', {
        slug: 'fuzz-prompt',
        string: PROMPT_TEMPLATE,
        parameters: { model: 'gpt-4o-mini' },
        virtual_key: 'fuzz-openai',
      }),
    );
    ids.promptId = 'fuzz-prompt';
    ids.version = '1';
    // One member key for the routes that change, revoke or rotate a key, one for calls as a member.
    ids['api-keys:id'] = await created(
      sendJson('POST', '/api-keys', { name: 'fuzz member', role: 'member' }),
    );
    const member = await sendJson('POST', '/api-keys', { name: 'fuzz caller', role: 'member' });
    expect(member.status, member.text).toBe(200);
    memberKey = (JSON.parse(member.text) as { key: string }).key;
    ids['policies:id'] = await created(sendJson('POST', '/policies/rate-limits', POLICY));
    ids['workspaces:id'] = await created(
      sendJson('POST', '/workspaces', { name: 'fuzz workspace', slug: 'fuzz-ws' }),
    );
    ids.response_id = await created(sendJson('POST', '/responses', { model: 'gpt-4o-mini', input: 'hello' }));
    ids.file_id = await created(upload(TRAINING, 'fine-tune', 'train.jsonl'));
    ids.training_file = ids.file_id;
    ids.batch_file = await created(upload(BATCH_LINE, 'batch'));
    ids.batch_id = await created(
      sendJson('POST', '/batches', {
        input_file_id: ids.batch_file,
        endpoint: '/v1/chat/completions',
        completion_window: 'immediate',
      }),
    );
    ids.fine_tuning_job_id = await created(
      sendJson('POST', '/fine_tuning/jobs', { model: 'gpt-4o-mini', training_file: ids.training_file }),
    );
    ids.id = 'missing';
    await settled();
  }, 30_000);

  afterEach(settled);

  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
    if (store === 'postgres') await dropSchema(schema);
  });

  async function expectStillServing(): Promise<void> {
    const health = await fetch(`${gateway.origin}/health`);
    expect(health.status).toBe(200);
    const chat = await sendJson('POST', '/chat/completions', CHAT_BODY);
    expect(chat.status, chat.text).toBe(200);
    const list = await send('GET', '/configs');
    expect(list.status, list.text).toBe(200);
  }

  it('the sweep covers the operations the brief names', () => {
    const names = OPERATIONS.map(opName);
    for (const expected of [
      'POST /responses',
      'GET /responses/{response_id}',
      'GET /responses/{response_id}/input_items',
      'POST /responses/{response_id}/cancel',
      'DELETE /responses/{response_id}',
      'POST /messages',
      'POST /prompts/{promptId}/completions',
      'POST /prompts/{promptId}/render',
      'POST /files',
      'POST /batches',
      'POST /fine_tuning/jobs',
      'POST /configs',
      'POST /virtual-keys',
      'POST /api-keys',
      'POST /prompts',
      'POST /guardrails',
      'POST /policies/rate-limits',
      'POST /workspaces',
    ]) {
      expect(names).toContain(expected);
    }
  });

  // ---------------------------------------------------------------------------------------------------

  const JUNK: unknown[] = [
    null,
    true,
    -1.5,
    1e300,
    2 ** 63,
    'junk',
    '',
    'a\u0000b',
    // Names every object has: a lookup by name in a plain object finds these.
    'constructor',
    '__proto__',
    'toString',
    [],
    ['\u0000'],
    { junk: { deeper: [1] } },
    { '\u0000': '\u0000' },
    { constructor: 'x', toString: 1 },
    [[null]],
  ];
  /** Fewer below the top level, where the keys are many. */
  const NESTED_JUNK: unknown[] = [
    null,
    -1.5,
    'junk',
    'a\u0000b',
    'constructor',
    [],
    { junk: { deeper: [1] } },
  ];

  function bodyOps(): Op[] {
    return OPERATIONS.filter((op) => op.schema);
  }

  /** Sends junk at each of `keys` (dotted) of the valid body of `op`; what went wrong. */
  async function junkAtKeys(op: Op, keys: string[], junkValues = JUNK): Promise<string[]> {
    const check = bodyChecker(op);
    const base = validBody(op);
    const problems: string[] = [];
    const pairs = keys.flatMap((key) => junkValues.map((junk) => [key, junk] as const));
    await inBatches(pairs, async ([key, junk]) => {
      const body = withValueAt(base, key, junk);
      const acceptable = check(body);
      const answer = await sendJson(op.method, realPath(op), body);
      const label = `${key}=${JSON.stringify(junk)}`;
      problems.push(...problemsOf(op.path, answer, label, true));
      if (answer.status < 400 || answer.status >= 500) {
        if (answer.status < 300 && !acceptable) problems.push(`accepted what the schema refuses: ${label}`);
        return;
      }
      if (acceptable || op.path.startsWith('/messages')) return;
      const error = errorOf(answer);
      // The top-level key at least: a nested value may be refused for a sibling it made wrong.
      const topLevel = key.split('.')[0];
      if (answer.status !== 400) {
        problems.push(`expected a 400: ${label} → ${answer.status} ${answer.text.slice(0, 200)}`);
      } else if (!(error?.param ?? '').startsWith(topLevel)) {
        problems.push(
          `param ${error?.param} does not name ${topLevel}: ${label} → ${answer.text.slice(0, 200)}`,
        );
      }
    });
    return problems.sort();
  }

  describe('junk at every top-level key of every body', () => {
    it.each(bodyOps().map((op) => [opName(op), op] as const))('%s', async (_name, op) => {
      const keys = Object.keys(op.schema?.properties ?? {});
      expect(keys.length).toBeGreaterThan(0);
      expect(await junkAtKeys(op, keys)).toEqual([]);
    });
  });

  describe('junk at every nested key of every body', () => {
    const withNested = bodyOps()
      .map((op) => [opName(op), op, nestedKeys(op)] as const)
      .filter(([, , keys]) => keys.length > 0);
    it.each(withNested)('%s', async (_name, op, keys) => {
      expect(await junkAtKeys(op, keys, NESTED_JUNK)).toEqual([]);
    });
  });

  const JUNK_HEADERS: Array<[string, string]> = [
    ...[
      '{',
      '[]',
      'null',
      '"x"',
      '{"targets":5}',
      '{"provider":"constructor"}',
      '{"virtual_key":"__proto__"}',
      `{"strategy":{"mode":"fallback"},"targets":[${'{"provider":"toString"},'.repeat(50)}{}]}`,
    ].map((value): [string, string] => ['x-gateway-config', value]),
    ...['{', '[]', '"x"', '{"a":{}}', '{"":"x"}', `{"${'k'.repeat(200)}":"v"}`, '{"__proto__":"x"}'].map(
      (value): [string, string] => ['x-gateway-metadata', value],
    ),
    ...['constructor', '__proto__', 'toString', 'nope', '..', 'x'.repeat(5000)].flatMap(
      (value): Array<[string, string]> => [
        ['x-gateway-provider', value],
        ['x-gateway-virtual-key', value],
        ['x-gateway-config', value],
      ],
    ),
    ...[
      'javascript:alert(1)',
      'http://',
      'file:///etc/passwd',
      'http://[::1',
      'ftp://x',
      'x'.repeat(5000),
    ].map((value): [string, string] => ['x-gateway-custom-host', value]),
    ['x-gateway-trace-id', 't'.repeat(5000)],
    ['x-gateway-span-name', 's'.repeat(5000)],
    ['x-gateway-span-id', '../..'],
    ['x-gateway-parent-span-id', 'p'.repeat(5000)],
    ['x-gateway-cache-namespace', 'n'.repeat(5000)],
    ['x-gateway-cache-force-refresh', 'maybe'],
    ['x-gateway-strict-compat-compliance', 'maybe'],
    ['x-gateway-files', 'constructor'],
    ['x-gateway-files', 'provider'],
    ['x-gateway-request-timeout', '-1'],
    ['x-gateway-retry-count', '1e400'],
  ];

  // Headers are read before any store is: swept once, on SQLite, to keep the sweep fast (not registered
  // on PostgreSQL rather than shown as skipped there).
  if (store === 'sqlite')
    describe('junk gateway headers', () => {
      it.each(
        OPERATIONS.filter((op) => !op.path.startsWith('/messages')).map((op) => [opName(op), op] as const),
      )('%s', async (_name, op) => {
        const problems: string[] = [];
        await Promise.all(
          JUNK_HEADERS.map(async ([name, value]) => {
            const headers = { [name]: value };
            // A deletion acts on no real resource: the rest of the sweep needs them.
            const path = op.method === 'DELETE' ? op.path.replace(/\{\w+\}/g, 'missing') : realPath(op);
            const answer = op.schema
              ? await sendJson(op.method, path, validBody(op), headers)
              : await send(op.method, path, { headers });
            problems.push(...problemsOf(op.path, answer, `${name}: ${value.slice(0, 60)}`, true));
          }),
        );
        expect(problems).toEqual([]);
      });
    });

  describe('bodies that are not objects, or hostile', () => {
    const deep = 10_000;
    const shapes: Array<[string, string]> = [
      ['empty', ''],
      ['not JSON', '{"a":'],
      ['an array', '[]'],
      ['a string', '"x"'],
      ['null', 'null'],
      ['a number', '7'],
      ['__proto__', '{"__proto__":{"polluted":"yes"}}'],
      ['constructor.prototype', '{"constructor":{"prototype":{"polluted":"yes"}}}'],
      ['10,000 levels of arrays', `{"x":${'['.repeat(deep)}${']'.repeat(deep)}}`],
      ['10,000 levels of objects', `{"x":${'{"a":'.repeat(deep)}1${'}'.repeat(deep)}}`],
      ['a key 60,000 characters long', `{"${'k'.repeat(60_000)}":1}`],
    ];
    it.each(bodyOps().map((op) => [opName(op), op] as const))('%s', async (_name, op) => {
      const problems: string[] = [];
      await Promise.all(
        shapes.map(async ([label, text]) => {
          const answer = await send(op.method, realPath(op), {
            body: text,
            headers: { 'content-type': 'application/json' },
          });
          problems.push(...problemsOf(op.path, answer, label));
        }),
      );
      const deepAtKeys = Object.keys(op.schema?.properties ?? {}).map(async (key) => {
        const body = JSON.stringify({ ...validBody(op), [key]: 0 }).replace(
          `"${key}":0`,
          `"${key}":${'['.repeat(deep)}${']'.repeat(deep)}`,
        );
        const answer = await send(op.method, realPath(op), {
          body,
          headers: { 'content-type': 'application/json' },
        });
        problems.push(...problemsOf(op.path, answer, `10,000 levels at ${key}`));
      });
      await Promise.all(deepAtKeys);
      for (const contentType of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        const answer = await send(op.method, realPath(op), {
          body: JSON.stringify(validBody(op)),
          headers: { 'content-type': contentType },
        });
        problems.push(...problemsOf(op.path, answer, `content-type ${contentType}`));
      }
      const oversized = await send(op.method, realPath(op), {
        body: JSON.stringify({ ...validBody(op), padding: 'x'.repeat(BODY_LIMIT * 2) }),
        headers: { 'content-type': 'application/json' },
      });
      problems.push(...problemsOf(op.path, oversized, 'a body twice the limit'));
      expect(problems).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  // ---------------------------------------------------------------------------------------------------

  const ODD_IDS = [
    '..',
    '.',
    '%2e%2e',
    '..%2f..%2fhealth',
    '%2F',
    'x'.repeat(5000),
    encodeURIComponent('ü日本語🙂'),
    '%E2%80%AE',
    '%C0%AE',
    '%FF%FE',
    encodeURIComponent("' OR 1=1 --"),
    '%20',
    encodeURIComponent('{{name}}'),
    '%40',
    encodeURIComponent('@latest'),
    encodeURIComponent('x@0'),
    encodeURIComponent('x@-1'),
    encodeURIComponent('x@99999999999999999999999'),
    encodeURIComponent('fuzz-prompt@99999999999999999999999'),
    encodeURIComponent('fuzz-prompt@1.5'),
    encodeURIComponent('__proto__'),
    'constructor',
    '-1',
    '0',
    '99999999999999999999999',
  ];

  describe('odd path ids', () => {
    const withIds = OPERATIONS.filter((op) => op.path.includes('{'));
    it.each(withIds.map((op) => [opName(op), op] as const))('%s', async (_name, op) => {
      const problems: string[] = [];
      const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      for (const param of params) {
        await Promise.all(
          ODD_IDS.map(async (odd) => {
            const path = realPath({ ...op, path: op.path.replace(`{${param}}`, odd) });
            const answer = op.schema
              ? await sendJson(op.method, path, validBody(op))
              : await send(op.method, path);
            // `..` and `%2F` may name another route, and `constructor` is a valid slug (the junk of the
            // body sweep made resources by that name): what matters is that nothing breaks.
            const maybeReal = odd.includes('.') || odd === 'constructor';
            problems.push(...problemsOf(op.path, answer, `${param}=${odd.slice(0, 60)}`, maybeReal));
          }),
        );
      }
      expect(problems).toEqual([]);
    });
  });

  // ---------------------------------------------------------------------------------------------------

  const QUERY_JUNK = [
    '-1',
    '0',
    '1.5',
    '1e3',
    '0x10',
    'abc',
    '99999999999999999999',
    '9007199254740993',
    'NaN',
    'Infinity',
    '%205',
    'true',
    'null',
    '[]',
    '%FF',
    encodeURIComponent('ü🙂'),
    'x'.repeat(2000),
  ];
  /** Names every list route is tried with, besides the ones its operation documents. */
  const GENERIC_QUERY = ['limit', 'after', 'before', 'order'];

  function violates(schema: Record<string, unknown>, raw: string): boolean {
    const value = decodeURIComponent(raw.replace('%FF', '\uFFFD'));
    if (schema.enum) return !(schema.enum as string[]).includes(value);
    if (schema.type === 'integer') {
      if (!/^-?\d+$/.test(value)) return true;
      const n = Number(value);
      return (
        !Number.isSafeInteger(n) ||
        (typeof schema.minimum === 'number' && n < schema.minimum) ||
        (typeof schema.maximum === 'number' && n > schema.maximum)
      );
    }
    if (schema.type === 'boolean') return !['true', 'false'].includes(value);
    return false;
  }

  describe('junk query parameters', () => {
    // Every GET, and every other operation that documents query parameters (a deletion on no real
    // resource: the rest of the sweep needs them).
    const withQuery = OPERATIONS.filter((op) => op.method === 'GET' || op.query.length > 0);
    it.each(withQuery.map((op) => [opName(op), op] as const))('%s', async (_name, op) => {
      const problems: string[] = [];
      const named = new Map(op.query.map((q) => [q.name, q.schema]));
      if (op.method === 'GET') for (const name of GENERIC_QUERY) if (!named.has(name)) named.set(name, {});
      const base = op.method === 'DELETE' ? op.path.replace(/\{\w+\}/g, 'missing') : realPath(op);
      const call = (query: string) =>
        op.schema
          ? sendJson(op.method, `${base}?${query}`, validBody(op))
          : send(op.method, `${base}?${query}`);
      for (const [name, schema] of named) {
        await Promise.all(
          QUERY_JUNK.map(async (junk) => {
            const answer = await call(`${name}=${junk}`);
            const label = `${name}=${junk.slice(0, 40)}`;
            problems.push(...problemsOf(op.path, answer, label, true));
            if (answer.status >= 200 && answer.status < 300 && violates(schema, junk)) {
              problems.push(`accepted ${label} against ${JSON.stringify(schema)}`);
            }
            // A value of the right type may still be refused for another parameter's sake (a range too
            // long for the interval): the 400 then names that one.
            const param = errorOf(answer)?.param ?? '';
            if (answer.status === 400 && violates(schema, junk) && !param.startsWith(name)) {
              problems.push(`param ${param} does not name ${name}: ${label}`);
            } else if (answer.status === 400 && ![...named.keys()].some((known) => param.startsWith(known))) {
              problems.push(`param ${param} names no query parameter: ${label}`);
            }
          }),
        );
        // A parameter given twice, and as an object.
        for (const query of [`${name}=1&${name}=2`, `${name}[a]=1`, `${name}[]=1`]) {
          const answer = await call(query);
          problems.push(...problemsOf(op.path, answer, query, true));
        }
      }
      expect(problems).toEqual([]);
    });
  });

  // ---------------------------------------------------------------------------------------------------

  describe('POST /files: broken uploads', () => {
    /** The third item: the field a 400 names, null for any 4xx, 'either' where storing the file is fine too
     * (OpenAI checks a file's lines when a batch or job uses it, not on upload). */
    const cases: Array<
      [string, () => { body: Buffer | string; headers: Record<string, string> }, string | null]
    > = [
      ['no file part', () => multipart([{ name: 'purpose', value: 'batch' }]), 'file'],
      ['no purpose', () => multipart([{ name: 'file', value: BATCH_LINE, filename: 'a.jsonl' }]), 'purpose'],
      [
        'a purpose that does not exist',
        () =>
          multipart([
            { name: 'purpose', value: 'world-domination' },
            { name: 'file', value: BATCH_LINE, filename: 'a.jsonl' },
          ]),
        'purpose',
      ],
      [
        'an empty purpose',
        () =>
          multipart([
            { name: 'purpose', value: '' },
            { name: 'file', value: BATCH_LINE, filename: 'a.jsonl' },
          ]),
        'purpose',
      ],
      [
        'a 10 KB purpose',
        () =>
          multipart([
            { name: 'purpose', value: 'p'.repeat(10_000) },
            { name: 'file', value: BATCH_LINE, filename: 'a.jsonl' },
          ]),
        'purpose',
      ],
      [
        'a field name of 10,000 characters',
        () =>
          multipart([
            { name: 'n'.repeat(10_000), value: 'x' },
            { name: 'purpose', value: 'batch' },
            { name: 'file', value: BATCH_LINE, filename: 'a.jsonl' },
          ]),
        'either',
      ],
      [
        'a file name of 10,000 characters',
        () =>
          multipart([
            { name: 'purpose', value: 'batch' },
            { name: 'file', value: BATCH_LINE, filename: `${'f'.repeat(10_000)}.jsonl` },
          ]),
        'either',
      ],
      [
        'a file name with a path and a NUL',
        () =>
          multipart([
            { name: 'purpose', value: 'batch' },
            { name: 'file', value: BATCH_LINE, filename: '../../etc/passwd\u0000.jsonl' },
          ]),
        'either',
      ],
      [
        'two file parts',
        () =>
          multipart([
            { name: 'purpose', value: 'batch' },
            { name: 'file', value: BATCH_LINE, filename: 'a.jsonl' },
            { name: 'file', value: BATCH_LINE, filename: 'b.jsonl' },
          ]),
        'either',
      ],
      [
        'two purposes',
        () =>
          multipart([
            { name: 'purpose', value: 'batch' },
            { name: 'purpose', value: 'fine-tune' },
            { name: 'file', value: BATCH_LINE, filename: 'a.jsonl' },
          ]),
        'either',
      ],
      [
        '1,000 extra fields',
        () =>
          multipart([
            ...Array.from({ length: 1000 }, (_, i) => ({ name: `f${i}`, value: String(i) })),
            { name: 'purpose', value: 'batch' },
            { name: 'file', value: BATCH_LINE, filename: 'a.jsonl' },
          ]),
        'either',
      ],
      [
        'a batch file that is not JSONL',
        () =>
          multipart([
            { name: 'purpose', value: 'batch' },
            { name: 'file', value: 'not json\n{"half":', filename: 'a.jsonl' },
          ]),
        'either',
      ],
      [
        'a batch file of JSON arrays',
        () =>
          multipart([
            { name: 'purpose', value: 'batch' },
            { name: 'file', value: '[1,2]\n[3]', filename: 'a.jsonl' },
          ]),
        'either',
      ],
      [
        'a fine-tune file that is not JSONL',
        () =>
          multipart([
            { name: 'purpose', value: 'fine-tune' },
            { name: 'file', value: Buffer.from([0xff, 0xfe, 0x00, 0x7b]), filename: 'a.jsonl' },
          ]),
        'either',
      ],
      [
        'an empty file',
        () =>
          multipart([
            { name: 'purpose', value: 'batch' },
            { name: 'file', value: '', filename: 'a.jsonl' },
          ]),
        'either',
      ],
      [
        'a body that ends before the closing boundary',
        () => {
          const form = multipart([
            { name: 'purpose', value: 'batch' },
            { name: 'file', value: BATCH_LINE, filename: 'a.jsonl' },
          ]);
          return { body: form.body.subarray(0, form.body.length - 20), headers: form.headers };
        },
        null,
      ],
      [
        'a boundary that never appears',
        () => ({
          body: 'just some bytes',
          headers: { 'content-type': 'multipart/form-data; boundary=nothere' },
        }),
        null,
      ],
      [
        'multipart with no boundary',
        () => ({ body: 'x', headers: { 'content-type': 'multipart/form-data' } }),
        null,
      ],
      [
        'JSON instead of multipart',
        () => ({ body: '{"purpose":"batch"}', headers: { 'content-type': 'application/json' } }),
        null,
      ],
      ['no content type', () => ({ body: 'x', headers: {} }), null],
    ];

    it.each(cases)('%s → 4xx', async (label, make, param) => {
      const request = make();
      const answer = await send('POST', '/files', request);
      expect(problemsOf('/files', answer, label, param === 'either')).toEqual([]);
      if (param !== null && param !== 'either') expect(errorOf(answer)?.param, answer.text).toBe(param);
    });

    it('an upload aborted mid-way leaves the gateway serving', async () => {
      const form = multipart([
        { name: 'purpose', value: 'batch' },
        { name: 'file', value: 'x'.repeat(100_000), filename: 'a.jsonl' },
      ]);
      const { hostname, port } = new URL(gateway.origin);
      await Promise.all(
        Array.from(
          { length: 10 },
          (_, i) =>
            new Promise<void>((resolve) => {
              const req = httpRequest({
                host: hostname,
                port: Number(port),
                method: 'POST',
                path: '/v1/files',
                headers: {
                  'x-gateway-api-key': gateway.adminKey,
                  'content-length': String(form.body.length),
                  ...form.headers,
                },
              });
              req.on('error', () => resolve());
              req.on('response', () => resolve());
              req.write(form.body.subarray(0, 1000 * (i + 1)));
              setTimeout(() => {
                req.destroy();
                resolve();
              }, 50);
            }),
        ),
      );
      await expectStillServing();
    });
  });

  describe('keys', () => {
    it.each(OPERATIONS.map((op) => [opName(op), op] as const))(
      '%s: no key, a wrong key → 401; a member key on the management API → 403',
      async (_name, op) => {
        // A deletion acts on no real resource (a member's could go through).
        const path = op.method === 'DELETE' ? op.path.replace(/\{\w+\}/g, 'missing') : realPath(op);
        const body = op.schema ? JSON.stringify(validBody(op)) : undefined;
        const headers = (key: string | undefined) => ({
          ...(body !== undefined && { 'content-type': 'application/json' }),
          'x-gateway-api-key': key ?? '',
        });
        const problems: string[] = [];
        for (const [label, key, status] of [
          ['no key', undefined, 401],
          ['a wrong key', 'gw-wrong-key', 401],
        ] as const) {
          const answer = await send(op.method, path, { body, headers: headers(key) });
          problems.push(...problemsOf(op.path, answer, label));
          if (answer.status !== status) problems.push(`${label} → ${answer.status}, not ${status}`);
        }
        if (MANAGEMENT.has(opName(op))) {
          const answer = await send(op.method, path, { body, headers: headers(memberKey) });
          problems.push(...problemsOf(op.path, answer, 'a member key'));
          if (answer.status !== 403) problems.push(`a member key → ${answer.status}, not 403`);
        }
        expect(problems).toEqual([]);
      },
    );
  });

  describe('lying Content-Length and aborted bodies', () => {
    it('on every operation that takes a body: 4xx answers only, and nothing breaks', async () => {
      const problems: string[] = [];
      await Promise.all(
        bodyOps().flatMap((op) => {
          const body = JSON.stringify(validBody(op));
          const head = (length: number) =>
            `${op.method} /v1${realPath(op)} HTTP/1.1\r\nHost: gateway\r\n` +
            `x-gateway-api-key: ${gateway.adminKey}\r\nx-gateway-virtual-key: fuzz-openai\r\n` +
            `content-type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
          return [
            rawExchange(gateway.origin, head(body.length + 50) + body, { end: true, waitMs: 2000 }),
            rawExchange(gateway.origin, head(10) + body, { waitMs: 2000 }),
            rawExchange(gateway.origin, head(body.length) + body.slice(0, 5), { destroyAfterMs: 50 }),
          ].map(async (exchange) => {
            for (const response of (await exchange).responses) {
              if (response.status < 400 || response.status >= 500) {
                problems.push(`${opName(op)} → ${response.status} ${response.body.slice(0, 120)}`);
              }
            }
          });
        }),
      );
      expect(problems).toEqual([]);
      await expectStillServing();
    });
  });

  describe('forward_headers naming a header the gateway cannot pass on', () => {
    // The connection's own headers, the framing of a body the gateway writes itself (a client's
    // Content-Length no longer fits it: the provider call failed, a 502), and the gateway's own headers
    // (the caller's gateway key went to the provider).
    const names = ['content-length', 'Transfer-Encoding', 'host', 'connection', 'te', 'x-gateway-api-key'];
    it.each(names)('%s → 400 naming it, sent or stored, and never reaching the provider', async (name) => {
      const config = { virtual_key: 'fuzz-openai', forward_headers: ['x-trace', name] };
      const before = fake.requests.length;
      for (const [path, body] of [
        ['/chat/completions', '{ "model": "gpt-4o-mini",  "messages": [{"role": "user", "content": "hi"}] }'],
        ['/responses', '{ "model": "gpt-4o-mini",  "input": "hi" }'],
      ]) {
        const answer = await send('POST', path, {
          body,
          headers: { 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config) },
        });
        expect(problemsOf(path, answer, name)).toEqual([]);
        expect(errorOf(answer)?.param, answer.text).toBe('config.forward_headers[1]');
      }
      const stored = await sendJson('POST', '/configs', { slug: `fuzz-forward-${name}`, config });
      expect(problemsOf('/configs', stored, name)).toEqual([]);
      expect(errorOf(stored)?.param, stored.text).toBe('config.forward_headers[1]');
      expect(fake.requests.length).toBe(before);
    });
  });

  describe('U+0000 in metadata', () => {
    // PostgreSQL's jsonb cannot hold it: a fine-tuning job stored with it made every later metadata
    // filter of the workspace's jobs a 400 that blamed the filter.
    it.each([
      ['a key', { '\u0000': 'x' }],
      ['a value', { team: 'a\u0000b' }],
    ])('in %s → 400 naming metadata wherever metadata is taken', async (_label, metadata) => {
      for (const [path, body] of [
        ['/fine_tuning/jobs', { model: 'gpt-4o-mini', training_file: ids.training_file, metadata }],
        ['/batches', { ...validBody(bodyOps().find((op) => op.path === '/batches')!), metadata }],
        ['/api-keys', { name: 'fuzz nul', role: 'member', metadata }],
      ] as const) {
        const answer = await sendJson('POST', path, body);
        expect(problemsOf(path, answer, path)).toEqual([]);
        expect(errorOf(answer)?.param ?? '', answer.text).toMatch(/^metadata/);
      }
      const filtered = await send('GET', '/fine_tuning/jobs?metadata[team]=fuzz');
      expect(filtered.status, filtered.text).toBe(200);
    });
  });

  describe('filters named like the keys every object has', () => {
    // No record or job of the sweep has these metadata keys: a filter on one lists nothing. Kept in a
    // plain object, `__proto__` would set its prototype instead, and the filter would vanish.
    it.each(['__proto__', 'constructor', 'toString'])(
      'x-gateway-metadata key %s is kept, and found by its filter',
      async (key) => {
        const value = `fuzz-${key.replaceAll('_', '')}`;
        const call = await sendJson('POST', '/chat/completions', CHAT_BODY, {
          'x-gateway-metadata': JSON.stringify({ [key]: value, team: 'fuzz' }).replace(
            `"${key}"`,
            `"${key}"`,
          ),
        });
        expect(call.status, call.text).toBe(200);
        let data: Array<{ metadata: Record<string, string> }> = [];
        for (let i = 0; i < 100 && data.length === 0; i++) {
          if (i > 0) await sleep(50);
          const answer = await send('GET', `/logs?metadata.${key}=${value}`);
          expect(answer.status, answer.text).toBe(200);
          data = (JSON.parse(answer.text) as { data: typeof data }).data;
        }
        expect(data).toHaveLength(1);
        expect(Object.entries(data[0].metadata)).toEqual(expect.arrayContaining([[key, value]]));
      },
    );

    it.each(['__proto__', 'constructor', 'toString'])(
      'GET /fine_tuning/jobs?metadata[%s]=… lists nothing',
      async (key) => {
        const all = await send('GET', '/fine_tuning/jobs');
        expect((JSON.parse(all.text) as { data: unknown[] }).data.length).toBeGreaterThan(0);
        const answer = await send('GET', `/fine_tuning/jobs?metadata[${key}]=fuzz-nothing`);
        expect(answer.status, answer.text).toBe(200);
        expect((JSON.parse(answer.text) as { data: unknown[] }).data).toEqual([]);
      },
    );

    it.each(['__proto__', 'constructor', 'toString'])(
      'GET /logs?metadata.%s=… lists nothing',
      async (key) => {
        // Records are written in the background: wait for one.
        const records = async () =>
          (JSON.parse((await send('GET', '/logs?limit=1')).text) as { data: unknown[] }).data.length;
        for (let i = 0; i < 100 && (await records()) === 0; i++) await sleep(50);
        expect(await records()).toBe(1);
        const answer = await send('GET', `/logs?metadata.${key}=fuzz-nothing`);
        expect(answer.status, answer.text).toBe(200);
        expect((JSON.parse(answer.text) as { data: unknown[] }).data).toEqual([]);
      },
    );
  });

  describe('afterwards', () => {
    it('no prototype was polluted and the gateway still serves', async () => {
      expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
      await expectStillServing();
    });
  });
}

describe('on SQLite', () => sweep('sqlite'));
describeWithPostgres('on PostgreSQL', () => sweep('postgres'));
