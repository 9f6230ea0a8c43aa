/** Shared pieces of the prompt suites: a gateway, a fake upstream, an admin client, prompt bodies. */
import OpenAI from 'openai';
import type { FakeUpstream } from '../fakes/openai/server.js';
import type { TestGateway } from '../helpers/gateway.js';
import { call, type Reply } from '../management/http.js';

/** A config target calling the fake through the OpenAI adapter. */
export function fakeTarget(fake: FakeUpstream, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { provider: 'openai', api_key: 'sk-test', custom_host: fake.url, ...extra };
}

/** A chat template: a JSON messages array written as Mustache text. */
export function chatTemplate(system: string, user: string): string {
  return JSON.stringify([
    { role: 'system', content: system },
    { role: 'user', content: user },
  ]);
}

export function admin(gateway: TestGateway) {
  const as = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    call(gateway.url, gateway.adminKey, method, path, body, headers);
  return {
    get: (path: string) => as('GET', path),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => as('POST', path, body, headers),
    put: (path: string, body: unknown) => as('PUT', path, body),
    delete: (path: string) => as('DELETE', path),
  };
}

export type Admin = ReturnType<typeof admin>;

/** POST /v1/prompts/{ref}/completions as the admin key. */
export function complete(
  gateway: TestGateway,
  ref: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return call(gateway.url, gateway.adminKey, 'POST', `/prompts/${ref}/completions`, body, headers);
}

/** An `openai` SDK client whose base URL is a prompt's path. */
export function promptClient(
  gateway: TestGateway,
  ref: string,
  headers: Record<string, string> = {},
): OpenAI {
  return new OpenAI({
    baseURL: `${gateway.url}/prompts/${ref}`,
    apiKey: 'unused',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': gateway.adminKey, ...headers },
  });
}

/** The content of the last user message the fake received. */
export function lastUserContent(fake: FakeUpstream): unknown {
  const body = fake.requests.at(-1)?.body as { messages?: Array<{ role: string; content: unknown }> };
  return body.messages?.filter((m) => m.role === 'user').at(-1)?.content;
}

export function lastBody(fake: FakeUpstream): Record<string, unknown> {
  return fake.requests.at(-1)?.body as Record<string, unknown>;
}
