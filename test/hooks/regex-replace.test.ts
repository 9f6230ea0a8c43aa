/**
 * default.regexReplace: the reference gateway's regex mutator. Every match of the rule in every text of the
 * body is replaced, before the call (what the provider gets) and after it (what the client gets, a stream
 * held back for it as for a redacting `default.pii`); a bad rule is refused at config validation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkParameterError } from '../../src/hooks/registry.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { client, postChat, rawChatStream, target } from '../routing/support.js';
import { chatAnswer, chatRequest, context, onAnswer, onRequest, runCheck } from './support.js';

const KEY = /sk-[A-Za-z0-9]{8,}/.source;

describe('default.regexReplace, the check', () => {
  it('replaces every match in every message with [REDACTED] and passes', async () => {
    const ctx = context({ request: chatRequest('old sk-AAAAAAAA1', 'new sk-BBBBBBBB2 and sk-CCCCCCCC3') });
    const result = await runCheck('regexReplace', ctx, { rule: KEY });
    expect(result.verdict).toBe(true);
    expect(result.data).toEqual({ rule: KEY, replaced: 3 });
    const messages = (result.transformed?.messages ?? []) as Array<{ content: string }>;
    expect(messages.map((m) => m.content)).toEqual(['old [REDACTED]', 'new [REDACTED] and [REDACTED]']);
    expect(result.transformed?.model).toBe('gpt-4o-mini');
  });

  it('rewrites the answer after the call, every choice', async () => {
    const ctx = context({ response: chatAnswer('call 555-0100', 'or 555-0199') });
    const result = await runCheck('regexReplace', ctx, { rule: '\\d{3}-\\d{4}', redactText: '<phone>' });
    const choices = (result.transformed?.choices ?? []) as Array<{ message: { content: string } }>;
    expect(choices.map((c) => c.message.content)).toEqual(['call <phone>', 'or <phone>']);
  });

  it('rewrites a completion prompt', async () => {
    const ctx = context({
      requestType: 'complete',
      request: { model: 'x', prompt: 'say secret twice: secret' },
    });
    const result = await runCheck('regexReplace', ctx, { rule: 'secret', redactText: '***' });
    expect(result.transformed).toEqual({ model: 'x', prompt: 'say *** twice: ***' });
  });

  it('fails with failOnDetection, its rewrite applied all the same', async () => {
    const result = await runCheck('regexReplace', onRequest('token sk-AAAAAAAA1'), {
      rule: KEY,
      failOnDetection: true,
    });
    expect(result.verdict).toBe(false);
    expect(JSON.stringify(result.transformed)).toContain('token [REDACTED]');
  });

  it('changes nothing and passes when the rule does not match, failOnDetection or not', async () => {
    const result = await runCheck('regexReplace', onAnswer('nothing here'), {
      rule: KEY,
      failOnDetection: true,
    });
    expect(result).toMatchObject({ verdict: true, data: { replaced: 0 } });
    expect(result.transformed).toBeUndefined();
  });

  it('reads /pattern/flags as the reference gateway does, and redactText literally', async () => {
    const result = await runCheck('regexReplace', onRequest('Secret and SECRET'), {
      rule: '/secret/gi',
      redactText: '$&-$1',
    });
    expect(JSON.stringify(result.transformed)).toContain('$&-$1 and $&-$1');
  });

  it('leaves empty matches alone', async () => {
    const result = await runCheck('regexReplace', onRequest('abxxc'), { rule: 'x*', redactText: '_' });
    expect(JSON.stringify(result.transformed)).toContain('"ab_c"');
  });

  it('refuses a missing or unsupported rule and a wrong type at validation, naming the field', () => {
    expect(checkParameterError('default.regexReplace', {}, 'beforeRequestHook')?.message).toBe(
      'default.regexReplace: parameters.rule is required',
    );
    expect(checkParameterError('default.regexReplace', { rule: '(?=x)a' }, 'afterRequestHook')?.param).toBe(
      'parameters.rule',
    );
    expect(
      checkParameterError('default.regexReplace', { rule: '/(a)\\1/g' }, 'afterRequestHook')?.param,
    ).toBe('parameters.rule');
    expect(
      checkParameterError('default.regexReplace', { rule: 'a', failOnDetection: 'yes' }, 'afterRequestHook')
        ?.param,
    ).toBe('parameters.failOnDetection');
    expect(
      checkParameterError('default.regexReplace', { rule: 'a', redactText: 1 }, 'afterRequestHook')?.param,
    ).toBe('parameters.redactText');
  });
});

describe('default.regexReplace through the gateway', () => {
  let gateway: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    [gateway, fake] = await Promise.all([startGateway(), startFakeOpenAI({ name: 'replaced' })]);
  });

  afterAll(async () => {
    await Promise.all([gateway?.close(), fake?.close()]);
  });

  const replaceIn = { input_guardrails: [{ id: 'keys-in', 'default.regexReplace': { rule: KEY } }] };
  const replaceOut = { output_guardrails: [{ id: 'keys-out', 'default.regexReplace': { rule: KEY } }] };

  it('before the call: the provider gets the rewritten request', async () => {
    const answer = await client(gateway, { ...target(fake), ...replaceIn }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'my key is sk-AAAAAAAA1' }],
    });
    expect(JSON.stringify(fake.requests.at(-1)?.body)).not.toContain('sk-AAAAAAAA1');
    expect(answer.choices[0].message.content).toBe('[replaced] my key is [REDACTED]');
  });

  it('after the call: the client gets the rewritten answer, streamed (held back) or not', async () => {
    fake.enqueue({ text: 'use sk-BBBBBBBB2 now' });
    const answer = await client(gateway, { ...target(fake), ...replaceOut }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'key?' }],
    });
    expect(answer.choices[0].message.content).toBe('use [REDACTED] now');

    fake.enqueue({ text: 'use sk-BBBBBBBB2 now', chunks: 6 });
    const stream = await rawChatStream(
      gateway,
      { ...target(fake), ...replaceOut },
      {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'key?' }],
      },
    );
    expect(stream.status).toBe(200);
    expect(stream.done).toBe(true);
    expect(stream.text).toMatch(/^use \[REDACTED\] now/);
    expect(JSON.stringify(stream.events)).not.toContain('sk-BBBB');
  });

  it('a bad rule is a 400 naming the field', async () => {
    const config = {
      ...target(fake),
      input_guardrails: [{ id: 'bad', 'default.regexReplace': { rule: '(a)\\1' } }],
    };
    const response = await postChat(gateway, config, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { param: string } };
    expect(body.error.param).toBe('config.input_guardrails[0].default.regexReplace.rule');
  });
});
