/**
 * Builds what the engine shows a check, from plain text or bodies, and fake `CheckServices` that record
 * their calls (the engine's real services are tested with the engine).
 */
import type {
  CallType,
  CheckContext,
  CheckServices,
  HookEvent,
  HookRequestType,
} from '../../src/hooks/check-types.js';
import { findCheck } from '../../src/hooks/registry.js';
import { answerText, requestText } from '../../src/hooks/text.js';
import type { CheckVerdict } from '../../src/hooks/check-types.js';

type Json = Record<string, unknown>;

export interface ContextInput {
  event?: HookEvent;
  requestType?: HookRequestType;
  /** The endpoint called; by default the one requestType reads as. */
  callType?: CallType;
  request?: Json;
  response?: Json;
  provider?: string;
  model?: string;
  metadata?: Record<string, string>;
  /** The client's request headers, names lower-case. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export function chatRequest(...contents: string[]): Json {
  return { model: 'gpt-4o-mini', messages: contents.map((content) => ({ role: 'user', content })) };
}

export function chatAnswer(...contents: Array<string | null>): Json {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt-4o-mini',
    choices: contents.map((content, index) => ({
      index,
      message: { role: 'assistant', content },
      finish_reason: 'stop',
    })),
  };
}

export function context(input: ContextInput = {}): CheckContext {
  const requestType = input.requestType ?? 'chatComplete';
  const request = input.request ?? chatRequest('');
  const ctx: CheckContext = {
    event: input.event ?? (input.response === undefined ? 'beforeRequestHook' : 'afterRequestHook'),
    requestType,
    callType: input.callType ?? requestType,
    request: { json: request, text: requestText(requestType, request) },
    provider: input.provider ?? 'openai',
    model: input.model ?? (typeof request.model === 'string' ? request.model : undefined),
    metadata: input.metadata ?? {},
    headers: input.headers ?? {},
    signal: input.signal ?? new AbortController().signal,
  };
  if (input.response !== undefined) {
    ctx.response = { json: input.response, text: answerText(requestType, input.response), statusCode: 200 };
  }
  return ctx;
}

/** A before-hook context whose request's last message is `text`. */
export function onRequest(text: string, extra: Omit<ContextInput, 'request'> = {}): CheckContext {
  return context({ ...extra, request: chatRequest(text), event: 'beforeRequestHook' });
}

/** An after-hook context whose answer's first choice is `text`. */
export function onAnswer(text: string, extra: Omit<ContextInput, 'response'> = {}): CheckContext {
  return context({ ...extra, response: chatAnswer(text), event: 'afterRequestHook' });
}

export interface RecordedPost {
  url: string;
  body: unknown;
  headers: Record<string, string>;
}

export interface FakeServices extends CheckServices {
  posts: RecordedPost[];
  probes: Array<{ url: string; dnsOnly: boolean }>;
  gets: string[];
  judged: Array<{
    target: { config?: string; virtual_key?: string };
    messages: Array<{ role: string; content: string }>;
  }>;
}

export interface FakeServiceAnswers {
  post?: (
    url: string,
    body: unknown,
  ) => { status: number; body: unknown } | Promise<{ status: number; body: unknown }>;
  probe?: (url: string, dnsOnly: boolean) => boolean;
  get?: (url: string) => { status: number; body: unknown } | Promise<{ status: number; body: unknown }>;
  judge?: (messages: Array<{ role: string; content: string }>) => string | Promise<string>;
  /** What the engine says it added to each post (its signing key): `postJson`'s `sentSecrets`. */
  sentSecrets?: string[];
}

export function fakeServices(answers: FakeServiceAnswers = {}): FakeServices {
  const services: FakeServices = {
    posts: [],
    probes: [],
    gets: [],
    judged: [],
    async postJson(url, body, headers) {
      services.posts.push({ url, body, headers });
      if (answers.post === undefined) throw new Error('postJson was not expected');
      const answer = await answers.post(url, body);
      return answers.sentSecrets === undefined ? answer : { ...answer, sentSecrets: answers.sentSecrets };
    },
    async getJson(url) {
      services.gets.push(url);
      if (answers.get === undefined) throw new Error('getJson was not expected');
      return answers.get(url);
    },
    async probeUrl(url, dnsOnly) {
      services.probes.push({ url, dnsOnly });
      if (answers.probe === undefined) throw new Error('probeUrl was not expected');
      return answers.probe(url, dnsOnly);
    },
    async judge(target, messages) {
      services.judged.push({ target, messages });
      if (answers.judge === undefined) throw new Error('judge was not expected');
      return answers.judge(messages);
    },
  };
  return services;
}

/** Runs a built-in check by id as the engine would: parameters as the config gives them. */
export async function runCheck(
  id: string,
  ctx: CheckContext,
  parameters: Record<string, unknown> = {},
  services: CheckServices = fakeServices(),
): Promise<CheckVerdict> {
  const check = findCheck(id);
  if (check === undefined) throw new Error(`no check ${id}`);
  return check.run(ctx, parameters, services);
}
