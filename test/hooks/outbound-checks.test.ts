/**
 * The checks that call out through the engine's services: webhook, log, validUrls, modelJudge. The services
 * are fakes here (the engine tests the real ones: address policy, timeout, signature); these tests show
 * what each check sends and how it reads the answer, and that a bad answer is an error (a throw), left to
 * the hook's fail mode.
 */
import { describe, expect, it } from 'vitest';
import { parseJudgement } from '../../src/hooks/checks/model-judge.js';
import { urlsIn } from '../../src/hooks/checks/valid-urls.js';
import { checkParameterError } from '../../src/hooks/registry.js';
import { chatAnswer, chatRequest, context, fakeServices, onAnswer, onRequest, runCheck } from './support.js';

const URL_ = 'https://hooks.example.test/verdict';

describe('default.webhook', () => {
  it('posts the call and takes the verdict, explanation and data of the answer', async () => {
    const services = fakeServices({
      post: () => ({ status: 200, body: { verdict: false, explanation: 'too rude', data: { score: 0.9 } } }),
    });
    const ctx = context({
      request: chatRequest('hello'),
      response: chatAnswer('hi'),
      metadata: { team: 'a' },
      provider: 'openai',
    });
    const result = await runCheck(
      'webhook',
      ctx,
      { webhookURL: URL_, headers: { 'x-token': 's3cret' } },
      services,
    );
    expect(result).toEqual({ verdict: false, explanation: 'too rude', data: { score: 0.9 } });
    expect(services.posts).toHaveLength(1);
    expect(services.posts[0]).toEqual({
      url: URL_,
      headers: { 'x-token': 's3cret' },
      body: {
        request: { json: chatRequest('hello'), text: 'hello' },
        response: { json: chatAnswer('hi'), text: 'hi', statusCode: 200 },
        event: 'afterRequestHook',
        eventType: 'afterRequestHook',
        requestType: 'chatComplete',
        provider: 'openai',
        model: 'gpt-4o-mini',
        metadata: { team: 'a' },
      },
    });
    expect(JSON.stringify(result)).not.toContain('s3cret');
  });

  it('masks the header values it sent wherever the answer echoes them', async () => {
    const token = 'whsecret-0123456789';
    const services = fakeServices({
      post: () => ({
        status: 200,
        body: {
          verdict: false,
          explanation: `auth was Bearer ${token}`,
          data: { seen: { authorization: `Bearer ${token}` }, list: [token], [token]: 1 },
        },
      }),
    });
    const result = await runCheck(
      'webhook',
      onRequest('x'),
      { webhookURL: URL_, headers: { Authorization: `Bearer ${token}` } },
      services,
    );
    expect(services.posts[0]?.headers).toEqual({ Authorization: `Bearer ${token}` });
    expect(JSON.stringify(result)).not.toContain(token);
    expect(result).toEqual({
      verdict: false,
      explanation: 'auth was [REDACTED]',
      data: { seen: { authorization: '[REDACTED]' }, list: ['[REDACTED]'], '[REDACTED]': 1 },
    });
  });

  it('takes headers as a JSON string too, and sends a null response before the call', async () => {
    const services = fakeServices({ post: () => ({ status: 200, body: { verdict: true } }) });
    const result = await runCheck(
      'webhook',
      onRequest('x'),
      { webhookURL: URL_, headers: '{"a":"b"}' },
      services,
    );
    expect(result.verdict).toBe(true);
    expect(services.posts[0]?.headers).toEqual({ a: 'b' });
    expect((services.posts[0]?.body as { response: unknown }).response).toBeNull();
  });

  it('throws on a non-2xx answer, a missing verdict, a non-JSON answer and a failed post', async () => {
    for (const answer of [
      { status: 500, body: { verdict: true } },
      { status: 200, body: { ok: true } },
      { status: 200, body: { verdict: 'true' } },
      { status: 200, body: undefined },
    ]) {
      await expect(
        runCheck('webhook', onRequest('x'), { webhookURL: URL_ }, fakeServices({ post: () => answer })),
      ).rejects.toThrow();
    }
    const refused = fakeServices({
      post: () => {
        throw new Error('refused');
      },
    });
    await expect(runCheck('webhook', onRequest('x'), { webhookURL: URL_ }, refused)).rejects.toThrow(
      'refused',
    );
  });

  it("takes the side's transformedData as the rewrite; null is none, anything else not an object an error", async () => {
    const answer = (transformedData: unknown) =>
      fakeServices({ post: () => ({ status: 200, body: { verdict: true, transformedData } }) });
    const run = (ctx: ReturnType<typeof onRequest>, transformedData: unknown) =>
      runCheck('webhook', ctx, { webhookURL: URL_ }, answer(transformedData));
    const request = { ...chatRequest('rewritten'), model: 'other', stream: true };
    expect((await run(onRequest('x'), { request: { json: request } })).transformed).toEqual(
      chatRequest('rewritten'),
    );
    expect((await run(onAnswer('x'), { response: { json: chatAnswer('y') } })).transformed).toEqual(
      chatAnswer('y'),
    );
    // The other side's rewrite, or none, leaves the body as it is.
    for (const none of [null, { request: { json: null } }, { response: { json: chatAnswer('y') } }]) {
      expect((await run(onRequest('x'), none)).transformed).toBeUndefined();
    }
    for (const bad of ['x', { request: 'x' }, { request: { json: [1] } }]) {
      await expect(run(onRequest('x'), bad)).rejects.toThrow('transformedData');
    }
  });

  it('masks the header values it sent in the rewrite it answers, on both sides of the call', async () => {
    const token = 'whsecret-0123456789';
    const headers = { Authorization: `Bearer ${token}` };
    const echoing = fakeServices({
      post: (_url, body) => {
        const seen = (body as { request: { json: Record<string, unknown> } }).request.json;
        const echoed = { ...seen, echoed: headers, list: [`Bearer ${token}`] };
        return {
          status: 200,
          body: {
            verdict: true,
            transformedData: {
              request: { json: echoed },
              response: { json: { ...chatAnswer(`sent ${token}`), echoed: headers } },
            },
          },
        };
      },
    });
    const parameters = { webhookURL: URL_, headers };
    const before = await runCheck('webhook', onRequest('x'), parameters, echoing);
    const after = await runCheck('webhook', onAnswer('y'), parameters, echoing);
    expect(JSON.stringify(before)).not.toContain(token);
    expect(JSON.stringify(after)).not.toContain(token);
    expect(before.transformed).toEqual({
      ...chatRequest('x'),
      echoed: { Authorization: '[REDACTED]' },
      list: ['[REDACTED]'],
    });
    expect(after.transformed).toEqual({
      ...chatAnswer('sent [REDACTED]'),
      echoed: { Authorization: '[REDACTED]' },
    });
  });

  // The rewrite is the body the provider or the client gets: only a credential the webhook echoes is masked
  // in it, never a word that merely equals another header's value, and never a key.
  it('passes on a rewrite holding the values of headers that are not credentials as the webhook answered it', async () => {
    const headers = { 'Content-Type': 'application/json', 'X-Env': 'production' };
    const request = { ...chatRequest('deploy to production'), production: { env: 'production' } };
    const answer = { ...chatAnswer('deployed to production'), production: true };
    const rewriting = fakeServices({
      post: () => ({
        status: 200,
        body: { verdict: true, transformedData: { request: { json: request }, response: { json: answer } } },
      }),
    });
    const parameters = { webhookURL: URL_, headers };
    expect((await runCheck('webhook', onRequest('x'), parameters, rewriting)).transformed).toEqual(request);
    expect((await runCheck('webhook', onAnswer('y'), parameters, rewriting)).transformed).toEqual(answer);
  });

  it('masks in a rewrite the values of credential headers and the signing key the engine used', async () => {
    const headers = {
      Authorization: 'Bearer whsecret-0123456789',
      'Proxy-Authorization': 'Basic cHJveHk6cGFzcw==',
      Cookie: 'session=abcdef123456',
      'X-Api-Key': 'key-0123456789',
      'X-Hub-Signature': 'sha256=feedface',
      'X-Env': 'production',
    };
    const signingKey = 'whsec-signing-0123456789';
    const echoed = [...Object.values(headers), 'whsecret-0123456789', signingKey].join(' ');
    const echoing = fakeServices({
      post: () => ({
        status: 200,
        body: {
          verdict: true,
          explanation: `signed with ${signingKey}`,
          transformedData: { request: { json: chatRequest(echoed) } },
        },
      }),
      sentSecrets: [signingKey],
    });
    const result = await runCheck('webhook', onRequest('x'), { webhookURL: URL_, headers }, echoing);
    expect(result.transformed).toEqual(
      chatRequest('[REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED] production [REDACTED] [REDACTED]'),
    );
    expect(result.explanation).toBe('signed with [REDACTED]');
  });

  it('refuses a URL that is not http(s) and headers that are not strings, naming the field', () => {
    const problem = (p: unknown) => checkParameterError('default.webhook', p, 'beforeRequestHook');
    expect(problem({ webhookURL: 'ftp://x' })).toEqual({
      message: 'default.webhook: parameters.webhookURL must be an http or https URL',
      param: 'parameters.webhookURL',
    });
    expect(problem({ webhookURL: 'not a url' })?.param).toBe('parameters.webhookURL');
    expect(problem({ webhookURL: URL_, headers: '{"a": 1}' })?.param).toBe('parameters.headers');
    expect(problem({ webhookURL: URL_, headers: 'nope' })?.param).toBe('parameters.headers');
    expect(problem({ webhookURL: URL_, headers: { a: 1 } })?.param).toBe('parameters.headers.a');
    expect(problem({})?.message).toBe('default.webhook: parameters.webhookURL is required');
  });
});

describe('outbound headers', () => {
  // A header HTTP cannot carry (a pasted token's trailing newline, a name with a space, a framing header
  // the gateway sets itself) made every call of the check throw, and a check that throws passes by
  // default (on_error: pass): the webhook's guard was silently off. It is a 400 naming the header, never
  // echoing its value.
  it('refuses a header HTTP cannot send, naming it without its value', () => {
    for (const [id, field] of [
      ['webhook', 'webhookURL'],
      ['log', 'logURL'],
    ] as const) {
      const problem = (headers: unknown) =>
        checkParameterError(`default.${id}`, { [field]: URL_, headers }, 'afterRequestHook');
      const newline = problem({ Authorization: 'Bearer sk-secret-123\n' });
      expect(newline?.param).toBe('parameters.headers.Authorization');
      expect(newline?.message).not.toContain('sk-secret-123');
      expect(problem('{"X-Key": "a\\r\\nb"}')?.param).toBe('parameters.headers.X-Key');
      expect(problem({ 'bad name': 'x' })?.param).toBe('parameters.headers');
      expect(problem({ 'Content-Length': '3' })?.param).toBe('parameters.headers.Content-Length');
      expect(problem({ 'Transfer-Encoding': 'chunked' })?.param).toBe('parameters.headers.Transfer-Encoding');
      expect(problem({ Authorization: 'Bearer sk-ok', 'X-Team': 'é tab\tok' })).toBeNull();
    }
  });
});

describe('default.log', () => {
  it('posts the call and passes; a failed post is an error', async () => {
    const services = fakeServices({ post: () => ({ status: 202, body: undefined }) });
    expect((await runCheck('log', onAnswer('x'), { logURL: URL_ }, services)).verdict).toBe(true);
    expect(services.posts).toHaveLength(1);
    const failing = fakeServices({ post: () => ({ status: 503, body: undefined }) });
    await expect(runCheck('log', onAnswer('x'), { logURL: URL_ }, failing)).rejects.toThrow('503');
  });
});

describe('default.validUrls', () => {
  it('finds URLs, trimming the punctuation around them', () => {
    expect(urlsIn('See https://a.test/x?y=1, and (http://b.test/). Also https://a.test/x?y=1.')).toEqual([
      'https://a.test/x?y=1',
      'http://b.test/',
    ]);
  });

  // A run of punctuation inside a URL, not at its end, made the trailing-punctuation pattern try every
  // start in the run: 300 KB of it blocked the event loop for about a minute. Linear, it takes milliseconds.
  it('finds URLs in linear time, whatever punctuation they hold', { timeout: 10_000 }, () => {
    const dots = '.'.repeat(300_000);
    expect(urlsIn(`see http://a${dots}x and https://b.test/${dots}`)).toEqual([
      `http://a${dots}x`,
      'https://b.test/',
    ]);
  });

  it('passes when every URL is reachable, lists the others without their query', async () => {
    const services = fakeServices({ probe: (url) => !url.includes('dead') });
    const text = 'ok https://live.test/a and https://dead.test/b?token=abc';
    const result = await runCheck('validUrls', onAnswer(text), {}, services);
    expect(result).toMatchObject({
      verdict: false,
      data: { checked: 2, invalid: ['https://dead.test/b'], unchecked: 0 },
    });
    expect(services.probes).toEqual([
      { url: 'https://live.test/a', dnsOnly: false },
      { url: 'https://dead.test/b?token=abc', dnsOnly: false },
    ]);
    const dns = fakeServices({ probe: () => true });
    expect((await runCheck('validUrls', onAnswer(text), { onlyDNS: true }, dns)).verdict).toBe(true);
    expect(dns.probes.every((probe) => probe.dnsOnly)).toBe(true);
  });

  it('passes text without URLs and probes at most 20', async () => {
    expect((await runCheck('validUrls', onAnswer('no links'), {}, fakeServices())).verdict).toBe(true);
    const many = Array.from({ length: 25 }, (_, i) => `https://h${i}.test/`).join(' ');
    const services = fakeServices({ probe: () => true });
    const result = await runCheck('validUrls', onAnswer(many), {}, services);
    expect(services.probes).toHaveLength(20);
    expect(result.data).toMatchObject({ checked: 20, unchecked: 5 });
  });
});

describe('default.modelJudge', () => {
  it('asks the model named by the config with the instructions and the text, and takes its verdict', async () => {
    const services = fakeServices({ judge: () => '{"verdict": false, "explanation": "It is rude."}' });
    const result = await runCheck(
      'modelJudge',
      onAnswer('You idiot.'),
      { config: 'judge-config', instructions: 'The answer must be polite.' },
      services,
    );
    expect(result).toEqual({ verdict: false, explanation: 'It is rude.' });
    const [call] = services.judged;
    expect(call?.target).toEqual({ config: 'judge-config' });
    expect(call?.messages[0]?.role).toBe('system');
    expect(call?.messages[0]?.content).toContain('The answer must be polite.');
    expect(call?.messages[0]?.content).toContain('the answer');
    expect(call?.messages[1]).toEqual({ role: 'user', content: '<<<TEXT\nYou idiot.\nTEXT>>>' });
  });

  it('reads a fenced verdict, refuses anything that is not a strict verdict', () => {
    expect(parseJudgement('```json\n{"verdict": true}\n```')).toEqual({ verdict: true });
    for (const answer of ['true', 'Yes, it passes.', '{"verdict": "true"}', '[true]', '']) {
      expect(() => parseJudgement(answer)).toThrow('did not answer');
    }
  });

  it('throws on an unparseable answer and uses the virtual key when named', async () => {
    const services = fakeServices({ judge: () => 'I think so.' });
    await expect(
      runCheck('modelJudge', onRequest('x'), { virtual_key: 'vk-judge', instructions: 'be nice' }, services),
    ).rejects.toThrow('did not answer');
    expect(services.judged[0]?.target).toEqual({ virtual_key: 'vk-judge' });
  });

  it('wants exactly one of config and virtual_key', () => {
    const problem = (p: unknown) => checkParameterError('default.modelJudge', p, 'afterRequestHook');
    expect(problem({ instructions: 'x' })?.param).toBe('parameters.config');
    expect(problem({ instructions: 'x', config: 'a', virtual_key: 'b' })).toEqual({
      message: 'default.modelJudge: parameters.virtual_key cannot be given with config: name one of them',
      param: 'parameters.virtual_key',
    });
    expect(problem({ config: 'a' })?.param).toBe('parameters.instructions');
  });
});
