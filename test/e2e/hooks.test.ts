/**
 * Hooks and guardrails end to end: the `openai` SDK against a real gateway and a fake OpenAI upstream,
 * streamed and not. The fake answers `[hooks] <last user message>`, so what a check reads is known.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postWithConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  client,
  logsOf,
  postChat,
  rawChatStream,
  target,
  traceHeaders,
  type Config,
} from '../routing/support.js';
import type { LogRecord } from '../../src/store/types.js';

let gateway: TestGateway;
let fake: FakeUpstream;
let backup: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'hooks' });
  backup = await startFakeOpenAI({ name: 'backup' });
  gateway = await startGateway();
});

afterAll(async () => {
  await gateway?.close();
  await fake?.close();
  await backup?.close();
});

interface HookResultBody {
  id: string;
  verdict: boolean;
  deny: boolean;
  async: boolean;
  feedback: unknown;
  checks: Array<{ id: string; verdict: boolean; error: unknown; on_error: string; data: unknown }>;
}
interface HookResultsBody {
  before_request_hooks: HookResultBody[];
  after_request_hooks: HookResultBody[];
}
type WithResults = { hook_results?: HookResultsBody };

const message = (content: string) => [{ role: 'user' as const, content }];
const chat = (content: string) => ({ model: 'gpt-4o-mini', messages: message(content) });
const notContaining = (words: string[]) => ({ 'default.contains': { words, operator: 'none' } });

async function rawChat(config: Config, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const response = await postChat(gateway, config, body, headers);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & WithResults };
}

async function requestLog(traceId: string): Promise<LogRecord> {
  const records = await logsOf(gateway, traceId, 1);
  const request = records.find((record) => !record.is_attempt);
  if (!request) throw new Error(`no request record for ${traceId}`);
  // GET /v1/logs/{id} is what a user reads.
  const response = await fetch(`${gateway.url}/logs/${request.id}`, {
    headers: { 'x-gateway-api-key': gateway.adminKey },
  });
  return (await response.json()) as LogRecord;
}

describe('outcomes, not streamed', () => {
  it('all checks pass: 200 with hook_results attached', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [{ id: 'no-secrets', deny: true, ...notContaining(['password']) }],
      output_guardrails: [{ id: 'polite', deny: true, ...notContaining(['stupid']) }],
    };
    const { data, response } = await client(gateway, config)
      .chat.completions.create(chat('hello there'))
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0].message.content).toBe('[hooks] hello there');
    const results = (data as unknown as WithResults).hook_results as HookResultsBody;
    expect(results.before_request_hooks).toMatchObject([
      { id: 'no-secrets', verdict: true, deny: false, checks: [{ id: 'default.contains', verdict: true }] },
    ]);
    expect(results.after_request_hooks).toMatchObject([{ id: 'polite', verdict: true, deny: false }]);
  });

  it('a failed check without deny: 246, the answer with the results', async () => {
    const config = { ...target(fake), input_guardrails: [{ id: 'flag-pw', ...notContaining(['password']) }] };
    const { data, response } = await client(gateway, config)
      .chat.completions.create(chat('my password is hunter2'))
      .withResponse();
    expect(response.status).toBe(246);
    expect(data.choices[0].message.content).toBe('[hooks] my password is hunter2');
    const results = (data as unknown as WithResults).hook_results as HookResultsBody;
    expect(results.before_request_hooks[0]).toMatchObject({
      id: 'flag-pw',
      verdict: false,
      deny: false,
      checks: [{ id: 'default.contains', verdict: false, data: { found: ['password'] } }],
    });
  });

  it('the log records the hook_results the client got, and the answer without them', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [{ id: 'flag-pw', ...notContaining(['password']) }],
      output_guardrails: [{ id: 'words', 'default.wordCount': { minWords: 1 } }],
    };
    const { traceId, headers } = traceHeaders();
    const raw = await rawChat(config, chat('my password is hunter2'), headers);
    expect(raw.status).toBe(246);
    const { hook_results: sent, ...answer } = raw.body;

    const record = await requestLog(traceId);
    expect(record.hook_results).toEqual(sent);
    expect(record.response_body).toEqual(answer);
  });

  it('a denying before-hook fails: 446, and the provider is never called', async () => {
    const config = {
      ...target(fake),
      before_request_hooks: [
        {
          id: 'block-pw',
          type: 'guardrail',
          checks: [{ id: 'default.contains', parameters: { words: ['password'], operator: 'none' } }],
          on_fail: { deny: true, feedback: { value: -1, weight: 1, metadata: { reason: 'pw' } } },
        },
      ],
    };
    const calls = fake.requests.length;
    const { traceId, headers } = traceHeaders();
    const error = await client(gateway, config, headers)
      .chat.completions.create(chat('my password is hunter2'))
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(446);
    expect(fake.requests.length).toBe(calls);

    const raw = await rawChat(config, chat('my password is hunter2'));
    expect(raw.status).toBe(446);
    expect(raw.body.error).toMatchObject({ type: 'hooks_failed', code: 'hooks_failed' });
    expect(String((raw.body.error as { message: string }).message)).toContain("hook 'block-pw'");
    expect(raw.body.hook_results?.before_request_hooks[0]).toMatchObject({
      id: 'block-pw',
      verdict: false,
      deny: true,
    });
    expect(raw.body.hook_results?.after_request_hooks).toEqual([]);
    expect(fake.requests.length).toBe(calls);

    const record = await requestLog(traceId);
    expect(record.status).toBe(446);
    expect(record.error_code).toBe('hooks_failed');
    const logged = record.hook_results as HookResultsBody;
    expect(logged.before_request_hooks[0]).toMatchObject({
      id: 'block-pw',
      verdict: false,
      feedback: { value: -1, weight: 1, metadata: { reason: 'pw' } },
    });
  });

  it('a denying after-hook fails: 446, and the answer is withheld', async () => {
    const config = {
      ...target(fake),
      after_request_hooks: [
        {
          id: 'no-banana',
          checks: [{ id: 'default.contains', parameters: { words: ['banana'], operator: 'none' } }],
          on_fail: { deny: true },
        },
      ],
    };
    const calls = fake.requests.length;
    const raw = await rawChat(config, chat('say banana'));
    expect(raw.status).toBe(446);
    expect(fake.requests.length).toBe(calls + 1);
    expect(JSON.stringify(raw.body)).not.toContain('[hooks] say banana');
    expect(raw.body.hook_results?.after_request_hooks[0]).toMatchObject({ id: 'no-banana', deny: true });

    // The body is the one the OpenAPI document declares for 446 on every model endpoint.
    const document = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as {
      paths: Record<string, { post: { responses: Record<string, { content?: unknown }> } }>;
      components: { schemas: Record<string, object> };
    };
    for (const path of ['/v1/chat/completions', '/v1/completions', '/v1/embeddings']) {
      expect(Object.keys(document.paths[path].post.responses)).toEqual(
        expect.arrayContaining(['200', '246', '446']),
      );
    }
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ $id: 'https://gateway.local/openapi.json', components: document.components });
    const valid = ajv.validate(
      { $ref: 'https://gateway.local/openapi.json#/components/schemas/HooksFailed' },
      raw.body,
    );
    expect(valid, JSON.stringify(ajv.errors)).toBe(true);
  });

  it('a hook may say deny at its top level, as the reference gateway writes it: its on_fail.deny', async () => {
    const hook = (id: string, words: string[], deny: boolean) => ({
      id,
      type: 'guardrail',
      checks: [{ id: 'default.contains', parameters: { words, operator: 'none' } }],
      deny,
    });
    const config = {
      ...target(fake),
      before_request_hooks: [hook('block-pw', ['password'], true)],
      after_request_hooks: [hook('no-banana', ['banana'], true)],
    };
    const calls = fake.requests.length;
    const before = await rawChat(config, chat('my password is hunter2'));
    expect(before.status).toBe(446);
    expect(before.body.hook_results?.before_request_hooks[0]).toMatchObject({ id: 'block-pw', deny: true });
    expect(fake.requests.length).toBe(calls);

    const after = await rawChat(config, chat('say banana'));
    expect(after.status).toBe(446);
    expect(JSON.stringify(after.body)).not.toContain('[hooks] say banana');
    expect(after.body.hook_results?.after_request_hooks[0]).toMatchObject({ id: 'no-banana', deny: true });

    // deny: false lets a failed check through (246); on the hook it wins over on_fail.deny, as on a guardrail.
    const lenient = {
      ...target(fake),
      before_request_hooks: [{ ...hook('flag-pw', ['password'], false), on_fail: { deny: true } }],
    };
    const flagged = await rawChat(lenient, chat('my password is hunter2'));
    expect(flagged.status).toBe(246);
    expect(flagged.body.hook_results?.before_request_hooks[0]).toMatchObject({ id: 'flag-pw', deny: false });
  });

  it('a check with is_enabled false is not run, in a hook and in a guardrail, as the reference gateway skips it', async () => {
    const contains = { id: 'default.contains', parameters: { words: ['password'], operator: 'none' } };
    const config = (enabled: boolean) => ({
      ...target(fake),
      before_request_hooks: [{ id: 'block-pw', checks: [{ ...contains, is_enabled: enabled }], deny: true }],
      input_guardrails: [
        {
          id: 'no-pw',
          deny: true,
          'default.contains': { words: ['password'], operator: 'none', is_enabled: enabled },
          'default.wordCount': { minWords: 1, maxWords: 100 },
        },
      ],
    });
    const off = await rawChat(config(false), chat('my password is hunter2'));
    expect(off.status).toBe(200);
    expect(off.body.hook_results?.before_request_hooks[0]).toMatchObject({
      id: 'block-pw',
      verdict: true,
      checks: [],
    });
    expect(off.body.hook_results?.before_request_hooks[1]).toMatchObject({
      id: 'no-pw',
      verdict: true,
      checks: [{ id: 'default.wordCount', verdict: true }],
    });
    expect(off.body.hook_results?.before_request_hooks[1]?.checks).toHaveLength(1);

    const on = await rawChat(config(true), chat('my password is hunter2'));
    expect(on.status).toBe(446);

    const bad = await postChat(
      gateway,
      { ...target(fake), before_request_hooks: [{ id: 'h', checks: [{ ...contains, is_enabled: 'no' }] }] },
      chat('hi'),
    );
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe(
      'config.before_request_hooks[0].checks[0].is_enabled',
    );
  });

  it('an async hook never changes the answer; its result is recorded in the log', async () => {
    const config = {
      ...target(fake),
      after_request_hooks: [
        {
          id: 'audit',
          async: true,
          checks: [{ id: 'default.contains', parameters: { words: ['secret'], operator: 'none' } }],
          on_fail: { feedback: { value: 0 } },
        },
      ],
    };
    const { traceId, headers } = traceHeaders();
    const { data, response } = await client(gateway, config, headers)
      .chat.completions.create(chat('a secret plan'))
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0].message.content).toBe('[hooks] a secret plan');
    expect((data as unknown as WithResults).hook_results?.after_request_hooks).toEqual([]);
    const record = await requestLog(traceId);
    expect((record.hook_results as HookResultsBody).after_request_hooks).toMatchObject([
      { id: 'audit', async: true, verdict: false, feedback: { value: 0 } },
    ]);
    // The answer is recorded as the client got it, its hook_results in their own column only.
    expect(record.response_body).toMatchObject({
      choices: [{ message: { content: '[hooks] a secret plan' } }],
    });
    expect(record.response_body).not.toHaveProperty('hook_results');
  });

  it('sequential checks run in the order listed, and all of them are reported', async () => {
    const checks = [
      { id: 'default.contains', parameters: { words: ['alpha'] } },
      { id: 'default.wordCount', parameters: { minWords: 1, maxWords: 2 } },
      { id: 'default.contains', parameters: { words: ['omega'], not: true } },
    ];
    const config = { ...target(fake), before_request_hooks: [{ id: 'seq', sequential: true, checks }] };
    const { body, status } = await rawChat(config, chat('alpha beta gamma'));
    expect(status).toBe(246);
    expect(body.hook_results?.before_request_hooks[0].checks.map((c) => [c.id, c.verdict])).toEqual([
      ['default.contains', true],
      ['default.wordCount', false],
      ['default.contains', true],
    ]);
  });

  it('shorthand and expansion give the same results side by side', async () => {
    const shorthand = {
      ...target(fake),
      input_guardrails: [{ id: 'g', deny: false, 'default.contains': { words: ['x1'], operator: 'none' } }],
      output_guardrails: [{ id: 'o', 'default.wordCount': { minWords: 1, maxWords: 3 } }],
    };
    const expansion = {
      ...target(fake),
      before_request_hooks: [
        {
          id: 'g',
          type: 'guardrail',
          checks: [{ id: 'default.contains', parameters: { words: ['x1'], operator: 'none' } }],
          on_fail: { deny: false },
        },
      ],
      after_request_hooks: [
        {
          id: 'o',
          type: 'guardrail',
          checks: [{ id: 'default.wordCount', parameters: { minWords: 1, maxWords: 3 } }],
        },
      ],
    };
    const statuses: number[] = [];
    for (const text of ['x1 and more words', 'short']) {
      const a = await rawChat(shorthand, chat(text));
      const b = await rawChat(expansion, chat(text));
      expect(a.status).toBe(b.status);
      statuses.push(a.status);
      expect(a.body.hook_results?.before_request_hooks).toHaveLength(1);
      expect(a.body.hook_results?.after_request_hooks).toHaveLength(1);
      expect(comparable(a.body.hook_results)).toEqual(comparable(b.body.hook_results));
    }
    // The first fails both checks (x1, too many words), the second passes both.
    expect(statuses).toEqual([246, 200]);
  });

  it('a 446 is a fallback trigger when listed, and only then', async () => {
    const denying = {
      output_guardrails: [
        { id: 'no-hooks-name', deny: true, 'default.contains': { words: ['[hooks]'], operator: 'none' } },
      ],
    };
    const listed = {
      strategy: { mode: 'fallback', on_status_codes: [446] },
      targets: [target(fake, denying), target(backup, denying)],
    };
    const answer = await client(gateway, listed).chat.completions.create(chat('who answers?'));
    expect(answer.choices[0].message.content).toBe('[backup] who answers?');

    const unlisted = { strategy: { mode: 'fallback', on_status_codes: [503] }, targets: listed.targets };
    expect((await rawChat(unlisted, chat('who answers?'))).status).toBe(446);
  });

  it('446 and 246 are retried when retry.on_status_codes lists them', async () => {
    const denyBanana = {
      output_guardrails: [{ id: 'no-banana', deny: true, ...notContaining(['banana']) }],
      retry: { attempts: 1, on_status_codes: [446] },
    };
    let calls = fake.requests.length;
    fake.enqueue({ text: 'a banana split' });
    const answer = await client(gateway, { ...target(fake), ...denyBanana }).chat.completions.create(
      chat('dessert?'),
    );
    expect(answer.choices[0].message.content).toBe('[hooks] dessert?');
    expect(fake.requests.length).toBe(calls + 2);

    const flagBanana = {
      output_guardrails: [{ id: 'flag-banana', ...notContaining(['banana']) }],
      retry: { attempts: 1, on_status_codes: [246] },
    };
    calls = fake.requests.length;
    fake.enqueue({ text: 'a banana split' });
    const { data, response } = await client(gateway, { ...target(fake), ...flagBanana })
      .chat.completions.create(chat('dessert?'))
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0].message.content).toBe('[hooks] dessert?');
    expect(fake.requests.length).toBe(calls + 2);
    expect(response.headers.get('x-gateway-retry-attempt-count')).toBe('1');
  });

  it('a cache hit runs the output checks too', async () => {
    const config = {
      ...target(fake),
      cache: { mode: 'simple' },
      output_guardrails: [{ id: 'count', 'default.wordCount': { minWords: 1, maxWords: 2 } }],
    };
    const body = chat(`cached ${Date.now()}`);
    const first = await rawChat(config, body);
    const calls = fake.requests.length;
    const second = await client(gateway, config).chat.completions.create(body).withResponse();
    expect(fake.requests.length).toBe(calls);
    expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(second.response.status).toBe(246);
    expect(comparable((second.data as unknown as WithResults).hook_results)).toEqual(
      comparable(first.body.hook_results),
    );
  });

  it('with the cache on, a 446 retried asks the provider again: a denied answer is never cached', async () => {
    const config = {
      ...target(fake),
      cache: { mode: 'simple' },
      output_guardrails: [{ id: 'no-banana', deny: true, ...notContaining(['banana']) }],
      retry: { attempts: 1, on_status_codes: [446] },
    };
    const body = chat(`dessert ${Date.now()}?`);
    fake.enqueue({ text: 'a banana split' });
    let calls = fake.requests.length;
    const retried = await rawChat(config, body);
    expect(retried.status).toBe(200);
    expect(fake.requests.length).toBe(calls + 2);

    const { retry: _, ...once } = config;
    for (const stream of [false, true]) {
      const asked = chat(`fruit ${stream} ${Date.now()}?`);
      fake.enqueue({ text: 'a banana' });
      const denied = stream ? await rawChatStream(gateway, once, asked) : await rawChat(once, asked);
      expect(denied.status).toBe(446);
      calls = fake.requests.length;
      const again = stream ? await rawChatStream(gateway, once, asked) : await rawChat(once, asked);
      expect(again.status).toBe(200);
      expect(fake.requests.length).toBe(calls + 1);
    }
  });

  it('the cache keeps an answer as the client got it: what an output check redacted is not stored', async () => {
    const email = 'jane.doe@example.com';
    const redacting = {
      ...target(fake),
      cache: { mode: 'simple' },
      output_guardrails: [{ id: 'pii-out', 'default.pii': { categories: ['email'], redact: true } }],
    };
    const plain = { ...target(fake), cache: { mode: 'simple' } };
    for (const stream of [false, true]) {
      const body = chat(`contact ${stream} ${Date.now()}?`);
      fake.enqueue({ text: `Reach me at ${email}.` });
      const first = stream ? await rawChatStream(gateway, redacting, body) : await rawChat(redacting, body);
      expect(first.status).toBe(200);
      const calls = fake.requests.length;
      const hit = stream ? await rawChatStream(gateway, plain, body) : await rawChat(plain, body);
      expect(fake.requests.length).toBe(calls);
      expect(JSON.stringify(hit)).toContain('Reach me at [EMAIL_1].');
      expect(JSON.stringify(hit)).not.toContain(email);
    }
  });

  it('text completions run both lists, streamed and not', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [{ id: 'in', deny: true, ...notContaining(['forbidden']) }],
      output_guardrails: [{ id: 'out', deny: true, ...notContaining(['secret']) }],
    };
    const sdk = client(gateway, config);
    const { data, response } = await sdk.completions
      .create({ model: 'gpt-3.5-turbo-instruct', prompt: 'plain words' })
      .withResponse();
    expect(response.status).toBe(200);
    expect((data as unknown as WithResults).hook_results?.after_request_hooks).toMatchObject([
      { id: 'out', verdict: true },
    ]);
    const calls = fake.requests.length;
    const denied = await sdk.completions
      .create({ model: 'gpt-3.5-turbo-instruct', prompt: 'forbidden words' })
      .catch((err: unknown) => err);
    expect((denied as APIError).status).toBe(446);
    expect(fake.requests.length).toBe(calls);

    let seen = '';
    const withheld = await (async () => {
      try {
        const stream = await sdk.completions.create({
          model: 'gpt-3.5-turbo-instruct',
          prompt: 'a secret plan',
          stream: true,
        });
        for await (const chunk of stream) seen += chunk.choices[0]?.text ?? '';
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect((withheld as APIError).status).toBe(446);
    expect(seen).toBe('');
  });

  it('embeddings run the input checks', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [{ id: 'in', deny: true, ...notContaining(['forbidden']) }],
    };
    const sdk = client(gateway, config);
    const ok = await sdk.embeddings.create({ model: 'text-embedding-3-small', input: 'fine text' });
    expect(ok.data).toHaveLength(1);
    const calls = fake.requests.length;
    const error = await sdk.embeddings
      .create({ model: 'text-embedding-3-small', input: 'forbidden text' })
      .catch((err: unknown) => err);
    expect((error as APIError).status).toBe(446);
    expect(fake.requests.length).toBe(calls);
  });
});

describe('outcomes, streamed', () => {
  it('pass: hook_results travel in the first chunk, the stream ends with [DONE]', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [{ id: 'in', deny: true, ...notContaining(['password']) }],
      output_guardrails: [{ id: 'out', deny: true, ...notContaining(['stupid']) }],
    };
    const stream = await rawChatStream(gateway, config, chat('hello stream'));
    expect(stream.status).toBe(200);
    expect(stream.done).toBe(true);
    expect(stream.text).toBe('[hooks] hello stream');
    const first = stream.events[0] as WithResults;
    expect(first.hook_results?.before_request_hooks).toMatchObject([{ id: 'in', verdict: true }]);
    expect(first.hook_results?.after_request_hooks).toMatchObject([{ id: 'out', verdict: true }]);
    expect(
      stream.events
        .slice(1)
        .some((event) => typeof event === 'object' && 'hook_results' in (event as object)),
    ).toBe(false);

    // The SDK reads the same stream.
    let text = '';
    const sdkStream = await client(gateway, config).chat.completions.create({
      ...chat('hello stream'),
      stream: true,
    });
    for await (const chunk of sdkStream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('[hooks] hello stream');
  });

  it('a failed check without deny: the stream goes out with status 246', async () => {
    const config = { ...target(fake), input_guardrails: [{ id: 'flag', ...notContaining(['password']) }] };
    const stream = await rawChatStream(gateway, config, chat('password please'));
    expect(stream.status).toBe(246);
    expect(stream.done).toBe(true);
    expect((stream.events[0] as WithResults).hook_results?.before_request_hooks[0]).toMatchObject({
      id: 'flag',
      verdict: false,
    });
  });

  it('a 246 of a target that then failed does not stick to the stream of the fallback that answers', async () => {
    const flagged = {
      input_guardrails: [{ id: 'flag', ...notContaining(['password']) }],
      override_params: { model: 'fake-status-503' },
    };
    const config = { strategy: { mode: 'fallback' }, targets: [target(fake, flagged), target(backup)] };
    const stream = await rawChatStream(gateway, config, chat('password please'));
    expect(stream.status).toBe(200);
    expect(stream.text).toBe('[backup] password please');
  });

  it('a denying before-hook: 446 before the first byte, the provider never called', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [{ id: 'in', deny: true, ...notContaining(['password']) }],
    };
    const calls = fake.requests.length;
    const error = await client(gateway, config)
      .chat.completions.create({ ...chat('password please'), stream: true })
      .catch((err: unknown) => err);
    expect((error as APIError).status).toBe(446);
    expect(fake.requests.length).toBe(calls);
  });

  it('a denying output guardrail holds the stream back: the denied text is never delivered', async () => {
    const config = {
      ...target(fake),
      output_guardrails: [{ id: 'out', deny: true, ...notContaining(['launch codes']) }],
    };
    fake.enqueue({ chunks: 12 });
    const stream = await rawChatStream(gateway, config, chat('the launch codes are 0000'));
    expect(stream.status).toBe(446);
    expect(stream.done).toBe(false);
    expect(stream.text).toBe('');
    const whole = JSON.stringify(stream.events);
    expect(whole).not.toContain('launch');
    expect(whole).not.toContain('0000');

    const error = await (async () => {
      let seen = '';
      try {
        const sdkStream = await client(gateway, config).chat.completions.create({
          ...chat('the launch codes are 0000'),
          stream: true,
        });
        for await (const chunk of sdkStream) seen += chunk.choices[0]?.delta?.content ?? '';
      } catch (err) {
        return { err, seen };
      }
      return { err: undefined, seen };
    })();
    expect((error.err as APIError).status).toBe(446);
    expect(error.seen).toBe('');
  });

  it('an output check that cannot deny sees the whole streamed text once it ends (recorded in the log)', async () => {
    const config = {
      ...target(fake),
      output_guardrails: [{ id: 'count', 'default.wordCount': { minWords: 1, maxWords: 2 } }],
    };
    const { traceId, headers } = traceHeaders();
    const stream = await rawChatStream(gateway, config, chat('four words right here'), headers);
    expect(stream.status).toBe(200);
    expect(stream.done).toBe(true);
    expect(stream.text).toBe('[hooks] four words right here');
    const record = await requestLog(traceId);
    expect((record.hook_results as HookResultsBody).after_request_hooks).toMatchObject([
      { id: 'count', verdict: false, checks: [{ id: 'default.wordCount', verdict: false }] },
    ]);
  });
});

describe('PII redaction', () => {
  const email = 'jane.doe@example.com';
  const redactIn = {
    input_guardrails: [{ id: 'pii-in', 'default.pii': { categories: ['email'], redact: true } }],
  };
  const redactOut = {
    output_guardrails: [{ id: 'pii-out', 'default.pii': { categories: ['email'], redact: true } }],
  };

  it('in the request: the provider never sees the raw value', async () => {
    for (const stream of [false, true]) {
      const calls = fake.requests.length;
      const body = chat(`write to ${email} today`);
      if (stream) {
        const got = await rawChatStream(gateway, { ...target(fake), ...redactIn }, body);
        expect(got.status).toBe(200);
        expect(got.text).toBe('[hooks] write to [EMAIL_1] today');
      } else {
        const answer = await client(gateway, { ...target(fake), ...redactIn }).chat.completions.create(body);
        expect(answer.choices[0].message.content).toBe('[hooks] write to [EMAIL_1] today');
        expect((answer as unknown as WithResults).hook_results?.before_request_hooks[0]).toMatchObject({
          id: 'pii-in',
          verdict: true,
          transformed: true,
        });
      }
      expect(fake.requests.length).toBe(calls + 1);
      const sent = JSON.stringify(fake.requests.at(-1)?.body);
      expect(sent).not.toContain(email);
      expect(sent).toContain('[EMAIL_1]');
    }
  });

  it('the log records the request as the provider got it', async () => {
    const { traceId, headers } = traceHeaders();
    await client(gateway, { ...target(fake), ...redactIn }, headers).chat.completions.create(
      chat(`write to ${email} today`),
    );
    const record = await requestLog(traceId);
    expect(JSON.stringify(record.request_body)).toContain('[EMAIL_1]');
    expect(JSON.stringify(record)).not.toContain(email);
  });

  it('in the answer: the client never sees the raw value, streamed or not', async () => {
    fake.enqueue({ text: `Reach me at ${email}, thanks.` });
    const answer = await client(gateway, { ...target(fake), ...redactOut }).chat.completions.create(
      chat('contact?'),
    );
    expect(answer.choices[0].message.content).toBe('Reach me at [EMAIL_1], thanks.');

    fake.enqueue({ text: `Reach me at ${email}, thanks.`, chunks: 9 });
    const stream = await rawChatStream(gateway, { ...target(fake), ...redactOut }, chat('contact?'));
    expect(stream.status).toBe(200);
    expect(stream.done).toBe(true);
    expect(stream.text).toContain('[EMAIL_1]');
    expect(stream.text).toMatch(/^Reach me at \[EMAIL_1\], thanks\./);
    expect(JSON.stringify(stream.events)).not.toContain('jane.doe');
  });
});

describe('pass-through calls', () => {
  it('a config whose hooks would apply is refused, and the provider is not called', async () => {
    const config = { ...target(fake), input_guardrails: [{ id: 'in', deny: true, ...notContaining(['x']) }] };
    const calls = fake.requests.length;
    const response = await postWithConfig(gateway, '/rerank', config, { query: 'x' });
    const body = (await response.json()) as { error: { code: string; param: string } };
    expect(response.status).toBe(400);
    expect(body.error).toMatchObject({ code: 'unsupported_parameter', param: 'config.input_guardrails' });
    expect(fake.requests.length).toBe(calls);
  });
});

describe('config validation', () => {
  it('an unknown check id is a 400 naming the check and the field', async () => {
    const config = { ...target(fake), input_guardrails: [{ 'default.nope': {} }] };
    const { status, body } = await rawChat(config, chat('hi'));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      code: 'invalid_config',
      param: 'config.input_guardrails[0].default.nope',
    });
    expect(String((body.error as { message: string }).message)).toContain('default.nope');
  });

  it('a bad parameter is a 400 naming the check and the field', async () => {
    const config = {
      ...target(fake),
      before_request_hooks: [
        { id: 'h', checks: [{ id: 'default.wordCount', parameters: { minWords: 'x' } }] },
      ],
    };
    const { status, body } = await rawChat(config, chat('hi'));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      code: 'invalid_config',
      param: 'config.before_request_hooks[0].checks[0].parameters.minWords',
    });
    expect(String((body.error as { message: string }).message)).toContain('default.wordCount');
  });

  it('a bad engine parameter (timeout, on_error) is a 400 naming the field', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [{ 'default.contains': { words: ['a'], on_error: 'maybe' } }],
    };
    const { status, body } = await rawChat(config, chat('hi'));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ param: 'config.input_guardrails[0].default.contains.on_error' });
  });

  it('a stored guardrail that does not exist is a 400, and nothing is called', async () => {
    const calls = fake.requests.length;
    const { status, body } = await rawChat({ ...target(fake), input_guardrails: ['gr-missing'] }, chat('hi'));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_config', param: 'config.input_guardrails[0]' });
    expect(String((body.error as { message: string }).message)).toContain(
      "stored guardrail 'gr-missing' not found",
    );
    expect(fake.requests.length).toBe(calls);
  });
});

/** Results without what varies from run to run (timings). */
function comparable(results: HookResultsBody | undefined): unknown {
  return JSON.parse(
    JSON.stringify(results ?? null, (key, value: unknown) => (key === 'execution_time' ? 0 : value)),
  );
}
