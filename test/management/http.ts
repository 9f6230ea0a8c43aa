/** A thin fetch wrapper for the management API tests: JSON in, status and JSON out. */
import { afterAll, beforeAll, expect } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';

export interface Reply {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
  text: string;
}

export async function call(
  baseUrl: string,
  key: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(key === undefined ? {} : { 'x-gateway-api-key': key }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text };
}

/** A client bound to one gateway and one key. */
/** A chat completion as the gateway's admin key under `config` as written: a stored config's slug or id, or config JSON. */
export function chatWithConfig(gateway: { url: string; adminKey: string }, config: string): Promise<Reply> {
  return call(
    gateway.url,
    gateway.adminKey,
    'POST',
    '/chat/completions',
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
    { 'x-gateway-config': config },
  );
}

export function client(baseUrl: string, key: string | undefined) {
  return {
    get: (path: string) => call(baseUrl, key, 'GET', path),
    post: (path: string, body?: unknown) => call(baseUrl, key, 'POST', path, body),
    patch: (path: string, body: unknown) => call(baseUrl, key, 'PATCH', path, body),
    put: (path: string, body: unknown) => call(baseUrl, key, 'PUT', path, body),
    delete: (path: string) => call(baseUrl, key, 'DELETE', path),
  };
}

export type Client = ReturnType<typeof client>;

/** A catalog provider of the client's workspace: OpenAI's wire at `customHost` (a fake), with its key. */
export async function addCatalogProvider(
  admin: Client,
  slug: string,
  apiKey: string,
  customHost: string,
): Promise<void> {
  const created = await admin.post('/providers', {
    slug,
    provider: 'openai',
    api_key: apiKey,
    custom_host: customHost,
  });
  expect(created.status, created.text).toBe(200);
}

/** The reply of a request the test goes on from, asserted to be a 200 (its text shown when it is not). */
export async function ok(reply: Promise<Reply>): Promise<Reply> {
  const settled = await reply;
  expect(settled.status, settled.text).toBe(200);
  return settled;
}

/** Asserts the OpenAI-shaped error object (and, when given, the field it names) and returns it. A 409
 * refusing a change for what depends on it has `dependents` beside (dependents-field.test.ts). */
export function expectError(reply: Reply, status: number, code: string, param?: string | null) {
  expect(reply.status, reply.text).toBe(status);
  expect(Object.keys(reply.body ?? {})).toEqual(['error']);
  const error = reply.body.error;
  const dependents = code === 'conflict' && error && 'dependents' in error ? ['dependents'] : [];
  expect(Object.keys(error).sort()).toEqual(['code', ...dependents, 'message', 'param', 'type']);
  expect(typeof error.message).toBe('string');
  expect(error.code, reply.text).toBe(code);
  if (param !== undefined) expect(error.param, reply.text).toBe(param);
  return error as { message: string; type: string; param: string | null; code: string };
}

/**
 * Starts a gateway with `start` before the enclosing suite's tests, with a client of its admin key, and closes
 * it after them; both are read from the object returned once the tests run.
 */
export function startedWithAdmin(start: () => Promise<TestGateway>): { gateway: TestGateway; admin: Client } {
  const started = {} as { gateway: TestGateway; admin: Client };
  beforeAll(async () => {
    started.gateway = await start();
    started.admin = client(started.gateway.url, started.gateway.adminKey);
  });
  afterAll(async () => {
    await started.gateway?.close();
  });
  return started;
}
